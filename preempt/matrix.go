package preempt

import "fmt"

// Matrix is a preemption matrix over tiers 0..n-1: m[p][v] reports whether
// a pending job of tier p may preempt a running job of tier v. Lower tier
// numbers are higher priority; tier 0 is production and is never a victim.
//
// Its JSON form is an array of rows, row = preemptor tier, column = victim
// tier, as in the policy file's "preemption": {"matrix": [[...], ...]}.
type Matrix [][]bool

// DefaultTiers is the number of tiers of [DefaultMatrix].
const DefaultTiers = 4

// MaxTiers is the largest number of tiers a matrix may have: [Ordered]
// builds none larger and [Matrix.Validate] refuses one with more rows.
// It bounds the n² cells of a matrix to 65,536.
const MaxTiers = 256

// DefaultMatrix returns the default four-tier matrix: P0 is never
// preempted, P1 only by P0, P2 by P0 and P1, P3 by P0, P1 and P2. No tier
// preempts its own or a higher-priority (lower-numbered) tier.
func DefaultMatrix() Matrix { return Ordered(DefaultTiers) }

// Ordered returns the strict hierarchy over n tiers: tier p may preempt
// tier v exactly when p < v, so tier 0 is never a victim and the last tier
// preempts nobody. It returns nil for n < 1 and for n > [MaxTiers].
func Ordered(n int) Matrix {
	if n < 1 || n > MaxTiers {
		return nil
	}
	m := make(Matrix, n)
	cells := make([]bool, n*n)
	for p := range m {
		m[p] = cells[p*n : (p+1)*n : (p+1)*n]
		for v := p + 1; v < n; v++ {
			m[p][v] = true
		}
	}
	return m
}

// Tiers returns the number of tiers of m (its number of rows).
func (m Matrix) Tiers() int { return len(m) }

// Validate reports the first problem of m, naming the offending cell, or
// nil. A valid matrix is non-empty, has at most [MaxTiers] rows and is
// square, no tier preempts itself
// (the diagonal is false), tier 0 is never a victim (column 0 is false),
// no two tiers may preempt each other, and no longer circle of tiers
// either (1 preempts 2, 2 preempts 3, 3 preempts 1), whatever else a
// custom matrix allows: around a circle, jobs would evict each other in
// turn for ever. A matrix may still let a tier preempt a higher one, as
// long as no circle closes. O(n²) for n tiers.
func (m Matrix) Validate() error {
	n := len(m)
	if n == 0 {
		return fmt.Errorf("matrix: no tiers (want at least one row)")
	}
	if n > MaxTiers {
		return fmt.Errorf("matrix: %d tiers, more than the %d allowed", n, MaxTiers)
	}
	for p, row := range m {
		if len(row) != n {
			return fmt.Errorf("matrix[%d]: row has %d entries, want %d (the matrix must be square)", p, len(row), n)
		}
	}
	for p, row := range m {
		if row[0] {
			return fmt.Errorf("matrix[%d][0]: tier %d may not preempt tier 0 (tier 0 is never preempted)", p, p)
		}
		if row[p] {
			return fmt.Errorf("matrix[%d][%d]: tier %d may not preempt its own tier", p, p, p)
		}
	}
	for p, row := range m {
		for v := p + 1; v < n; v++ {
			if row[v] && m[v][p] {
				return fmt.Errorf("matrix[%d][%d] and matrix[%d][%d]: tiers %d and %d may not preempt each other (each would evict the other in turn)", p, v, v, p, p, v)
			}
		}
	}
	if cycle := m.cycle(); cycle != nil {
		return fmt.Errorf("matrix[%d][%d]: tiers %s preempt each other in a circle (each would evict the next in turn, for ever)", cycle[len(cycle)-2], cycle[len(cycle)-1], circle(cycle))
	}
	return nil
}

// cycle returns a circle of preemption in m, as the tiers met along it
// with the first repeated last (1, 2, 3, 1: tier 1 preempts 2, 2
// preempts 3 and 3 preempts 1), or nil when there is none. A depth-first
// search over the square matrix: O(n²) for n tiers.
func (m Matrix) cycle() []int {
	const (
		unseen = iota
		open   // on the current path
		done   // no circle through it
	)
	state := make([]uint8, len(m))
	var path []int
	var visit func(p int) []int
	visit = func(p int) []int {
		state[p] = open
		path = append(path, p)
		for v, ok := range m[p] {
			if !ok {
				continue
			}
			switch state[v] {
			case open:
				from := 0
				for path[from] != v {
					from++
				}
				return append(append([]int(nil), path[from:]...), v)
			case unseen:
				if c := visit(v); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		state[p] = done
		return nil
	}
	for p := range m {
		if state[p] == unseen {
			if c := visit(p); c != nil {
				return c
			}
		}
	}
	return nil
}

// circle writes a cycle's tiers as "1, 2 and 3".
func circle(c []int) string {
	s := ""
	for i, t := range c[:len(c)-1] {
		switch {
		case i == 0:
		case i == len(c)-2:
			s += " and "
		default:
			s += ", "
		}
		s += fmt.Sprint(t)
	}
	return s
}

// CanPreempt reports whether a job of tier p may preempt a running job of
// tier v. It is false for tiers outside the matrix, for p == v, for
// v == 0 and for two tiers that the matrix lets preempt each other, even
// when a malformed matrix says otherwise. An entry that lets a tier
// preempt tier 0 counts for nothing (tier 0 is never a victim), so it
// does not stop tier 0 from preempting that tier.
func (m Matrix) CanPreempt(p, v int) bool {
	if p < 0 || v <= 0 || p == v || p >= len(m) || v >= len(m) || v >= len(m[p]) {
		return false
	}
	return m[p][v] && !(p > 0 && p < len(m[v]) && m[v][p]) // tier 0 is never a victim
}

// Eligible returns, in ascending order, the indices of the candidates that
// a job of tier preemptorTier may preempt under m. Pass the candidates it
// selects to [Select]. O(len(cands)).
func Eligible(m Matrix, preemptorTier int, cands []Candidate) []int {
	var out []int
	for i := range cands {
		if m.CanPreempt(preemptorTier, cands[i].Tier) {
			out = append(out, i)
		}
	}
	return out
}
