package backfill

import (
	"slices"
	"sort"
	"time"

	"github.com/google/btree"
)

// events is a time-ordered set of timeline entries, kept as sorted runs
// of consecutive entries in a google/btree keyed by each run's first
// entry. Cursors and sweeps walk thousands of consecutive entries per
// query; a B-tree of single entries spends most of such a walk comparing
// every entry with the walk's end and calling back once per entry, and
// descends through its nodes with a binary search at each. Runs are
// walked as slices instead, with one call per run. A run holds at most R
// entries and splits past that into near-equal runs of at least R/2, so
// inserts leave runs at least R/2 long; deletes (a stacked reservation
// deletes the ends it extends) can leave shorter ones, and a run left
// under R/4, or two runs that meet when a run between them empties, join
// a neighbour that leaves room, so no two neighbouring runs are both
// that short: E entries lie in O(E/R) runs. A walk of k entries over
// runs of at least r costs O(log(E/r) + k + k/r calls), and inserting or
// deleting an entry O(log(E/r) + R) (a copy within its run).
//
// Entries are distinct: no two compare equal under entryLess (each has its
// own seq). Even walks write the search key, so an events is not safe
// for concurrent use, readers included.
type events struct {
	runs   *btree.BTreeG[*entryRun]
	n      int
	runMax int             // entries per run before it splits
	probe  entryRun        // a search key, reused so that searches do not allocate
	buf    []timelineEntry // scratch for a run and a group too long for its array
}

// entryRun is a run of entries in order. first is its key in the B-tree
// and equals entries[0] while the run is in it. bound is an upper bound
// that the tree's owner keeps over the run's entries: for the timeline,
// the latest reservedAgainBy (see Profile.latestReservedAgainBy); for the
// whole-node windows, minus the earliest start (see wholeIndex.runFrom).
// It is valid while boundKnown: an insert clears it, a delete leaves it
// a bound, and a join takes the greater.
type entryRun struct {
	first      timelineEntry
	entries    []timelineEntry
	bound      time.Duration
	boundKnown bool
}

// runLen is the default number of entries a run holds before it splits.
const runLen = 128

func newEvents(runMax int) *events {
	return &events{runs: btree.NewG(32, func(a, b *entryRun) bool { return entryLess(a.first, b.first) }), runMax: runMax}
}

// Len returns the number of entries.
func (s *events) Len() int { return s.n }

// locate returns the run that holds e or would: the last run whose first
// entry is not after e, or the first run when e precedes them all (nil
// when there are none).
func (s *events) locate(e timelineEntry) *entryRun {
	var r *entryRun
	s.probe.first = e
	s.runs.DescendLessOrEqual(&s.probe, func(x *entryRun) bool {
		r = x
		return false
	})
	if r == nil {
		r, _ = s.runs.Min()
	}
	return r
}

// search returns the position of the first entry of r not before e.
// It is sort.Search written out with the order of entryLess inline: every
// insert, delete and walk of the timeline starts with one, and a
// comparison through a function value costs more than the compare.
func search(r *entryRun, e timelineEntry) int {
	lo, hi := 0, len(r.entries)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if x := &r.entries[m]; x.at < e.at || x.at == e.at && x.seq < e.seq {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// rekey gives run r, whose first entry changed, its new key.
func (s *events) rekey(r *entryRun) {
	s.runs.Delete(r)
	if len(r.entries) > 0 {
		r.first = r.entries[0]
		s.runs.ReplaceOrInsert(r)
	}
}

// Insert adds e, replacing an entry equal to it.
func (s *events) Insert(e timelineEntry) {
	r := s.locate(e)
	if r == nil {
		s.runs.ReplaceOrInsert(&entryRun{first: e, entries: append(make([]timelineEntry, 0, s.runMax+1), e)})
		s.n++
		return
	}
	i := search(r, e)
	if i < len(r.entries) && !entryLess(e, r.entries[i]) {
		r.entries[i] = e
		r.boundKnown = false
		if i == 0 {
			r.first = e // equal as a key, so the tree's order stands
		}
		return
	}
	r.entries = slices.Insert(r.entries, i, e)
	r.boundKnown = false
	s.n++
	if i == 0 {
		s.rekey(r)
	}
	s.split(r, r.entries)
}

// InsertSorted adds the entries es, in order and distinct, replacing
// entries equal to them. Entries that fall together between two
// neighbours in s, as a reservation's ends on all its nodes do, go in
// with one search and one copy (and, past a run's last entry, one look
// at the next run): O(log(E/r) + R + k) per such group of k, instead of
// per entry. A run grown past the limit splits into as many near-equal
// runs of at least R/2 as it needs.
func (s *events) InsertSorted(es []timelineEntry) {
	for len(es) > 0 {
		r := s.locate(es[0])
		if r == nil {
			r = &entryRun{first: es[0], entries: append(make([]timelineEntry, 0, s.runMax+1), es[0])}
			s.runs.ReplaceOrInsert(r)
			s.n++
			es = es[1:]
			continue
		}
		i := search(r, es[0])
		if i < len(r.entries) && !entryLess(es[0], r.entries[i]) {
			s.Insert(es[0]) // equal to an entry: replaced, as Insert does
			es = es[1:]
			continue
		}
		// The group: the entries before r's entry at i, or, past r's
		// last, before the next run's first.
		k := 1
		if i < len(r.entries) {
			for k < len(es) && entryLess(es[k], r.entries[i]) {
				k++
			}
		} else if k < len(es) {
			next := s.neighbour(r, true)
			for k < len(es) && (next == nil || entryLess(es[k], next.first)) {
				k++
			}
		}
		var all []timelineEntry
		if len(r.entries)+k <= cap(r.entries) {
			r.entries = slices.Insert(r.entries, i, es[:k]...)
			all = r.entries
		} else {
			// No room in r's array: merge into the scratch buffer and
			// let split hand it out, so that no run keeps a grown array.
			s.buf = append(append(append(s.buf[:0], r.entries[:i]...), es[:k]...), r.entries[i:]...)
			all = s.buf
		}
		r.boundKnown = false
		s.n += k
		es = es[k:]
		if i == 0 {
			s.runs.Delete(r) // under its old key, before a tail may take it
		}
		s.split(r, all)
		if i == 0 {
			r.first = r.entries[0]
			s.runs.ReplaceOrInsert(r)
		}
	}
}

// split makes all, the entries run r is to hold (r.entries itself, or a copy
// that r's array has no room for), r's entries, cutting them, when they
// are more than the limit, into the fewest runs within it, of near-equal
// lengths: c runs of L/c >= R/2 entries each for the c = ceil(L/R) that
// L entries need. r keeps its array and its key (the caller rekeys r
// when its first entry changed); each further run gets its own array.
func (s *events) split(r *entryRun, all []timelineEntry) {
	l := len(all)
	c := max(1, (l+s.runMax-1)/s.runMax)
	for j := 1; j < c; j++ {
		lo, hi := j*l/c, (j+1)*l/c
		tail := &entryRun{first: all[lo], entries: append(make([]timelineEntry, 0, s.runMax+1), all[lo:hi]...)}
		s.runs.ReplaceOrInsert(tail)
	}
	cut := l / c
	n := len(r.entries)
	r.entries = append(r.entries[:0], all[:cut]...)
	if n > cut {
		clear(r.entries[cut:n])
	}
}

// DeleteSorted removes the entries equal to those of es, which are in
// order, and returns how many it found. Entries of one run go with one
// search and one pass over the run: O(log(E/r) + R) per run touched,
// and per entry of es that lies past a run's last entry (absent), plus
// the joins that keep short runs apart (see merge).
func (s *events) DeleteSorted(es []timelineEntry) int {
	found := 0
	for len(es) > 0 {
		r := s.locate(es[0])
		if r == nil {
			break
		}
		i := search(r, es[0])
		if i == len(r.entries) {
			es = es[1:] // after r's last: not in s (a later run would start by it)
			continue
		}
		// One pass over r from i: keep the entries not in es, and drop
		// from es those up to r's last, found or not.
		w, k := i, 0
		for j := i; j < len(r.entries); j++ {
			e := r.entries[j]
			for k < len(es) && entryLess(es[k], e) {
				k++ // not in s
			}
			if k < len(es) && !entryLess(e, es[k]) {
				k++
				continue
			}
			r.entries[w] = e
			w++
		}
		gone := len(r.entries) - w
		clear(r.entries[w:])
		r.entries = r.entries[:w]
		found += gone
		s.n -= gone
		es = es[k:]
		if gone == 0 {
			continue
		}
		if len(r.entries) == 0 {
			// Emptied whole, as a single Delete empties only a run of
			// one, itself short: its neighbours meet, and may both be.
			prev := s.neighbour(r, false)
			s.rekey(r) // drops r
			if prev != nil {
				s.merge(prev)
			}
			continue
		}
		if i == 0 {
			s.rekey(r)
		}
		if s.short(r) {
			s.merge(r)
		}
	}
	return found
}

// Delete removes the entry equal to e and reports whether there was one.
func (s *events) Delete(e timelineEntry) bool {
	r := s.locate(e)
	if r == nil {
		return false
	}
	i := search(r, e)
	if i == len(r.entries) || entryLess(e, r.entries[i]) {
		return false
	}
	r.entries = slices.Delete(r.entries, i, i+1)
	s.n--
	if i == 0 {
		s.rekey(r)
	}
	if len(r.entries) > 0 && s.short(r) {
		s.merge(r)
	}
	return true
}

// merge joins run r, short (under a quarter of the limit), with each
// neighbour when together they hold at most three quarters of it, so
// that no two neighbouring runs are both short and walks keep calling
// back about once per R/4 entries or fewer, however many deletes came
// before. A delete calls it when it leaves its run short (a run that is
// not cannot make a short pair with a neighbour it already had), and
// on the run before one it empties, whose neighbours meet. O(log(E/r) +
// R).
func (s *events) merge(r *entryRun) {
	if next := s.neighbour(r, true); next != nil && s.joinable(r, next) {
		s.join(r, next)
	}
	if prev := s.neighbour(r, false); prev != nil && s.joinable(prev, r) {
		s.join(prev, r)
	}
}

// neighbour returns the run that follows r (after) or precedes it, or
// nil. The B-tree's walks are called directly, not through a func value
// passed in, so that the callback stays on the stack: merge asks for
// both neighbours at each delete that leaves a run short.
func (s *events) neighbour(r *entryRun, after bool) *entryRun {
	var got *entryRun
	next := func(x *entryRun) bool {
		if x == r {
			return true
		}
		got = x
		return false
	}
	if after {
		s.runs.AscendGreaterOrEqual(r, next)
	} else {
		s.runs.DescendLessOrEqual(r, next)
	}
	return got
}

// short reports whether run r holds under a quarter of the limit.
func (s *events) short(r *entryRun) bool { return 4*len(r.entries) < s.runMax }

// joinable reports whether runs a and b, neighbours, should be one.
func (s *events) joinable(a, b *entryRun) bool {
	return (s.short(a) || s.short(b)) && 4*(len(a.entries)+len(b.entries)) <= 3*s.runMax
}

// join appends run b, which follows run a, to a and drops b. The bound
// of the joined run is the greater of the two, kept when both were
// valid.
func (s *events) join(a, b *entryRun) {
	a.entries = append(a.entries, b.entries...)
	a.bound, a.boundKnown = max(a.bound, b.bound), a.boundKnown && b.boundKnown
	s.runs.Delete(b)
}

// From calls f with the entries not before from, in order, a run at a
// time, until f returns false. f must not change s.
func (s *events) From(from timelineEntry, f func([]timelineEntry) bool) {
	s.FromRuns(from, func(_ *entryRun, evs []timelineEntry) bool { return f(evs) })
}

// FromRuns is From that also passes the run that holds the entries
// (all of its entries, or the tail of the first run from from on).
func (s *events) FromRuns(from timelineEntry, f func(*entryRun, []timelineEntry) bool) {
	r := s.locate(from)
	if r == nil {
		return
	}
	if i := search(r, from); i < len(r.entries) && !f(r, r.entries[i:]) {
		return
	}
	s.runs.AscendGreaterOrEqual(r, func(x *entryRun) bool {
		return x == r || f(x, x.entries)
	})
}

// All calls f with every entry, in order, a run at a time, until f
// returns false. f must not change s.
func (s *events) All(f func([]timelineEntry) bool) {
	s.runs.Ascend(func(x *entryRun) bool { return f(x.entries) })
}

// Count returns the number of entries whose time lies in [from, last],
// or limit when there are at least that many: it counts a run at a time
// and stops there. O(log(E/r) + k/r) for the k <= limit entries counted,
// over runs of at least r.
func (s *events) Count(from, last time.Duration, limit int) int {
	k := 0
	s.From(timelineEntry{at: from, seq: -1}, func(evs []timelineEntry) bool {
		if evs[len(evs)-1].at <= last {
			k += len(evs)
			return k < limit
		}
		k += sort.Search(len(evs), func(i int) bool { return evs[i].at > last })
		return false
	})
	return min(k, limit)
}
