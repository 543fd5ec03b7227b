package trace

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// swfFields is the number of fields of a Standard Workload Format record.
const swfFields = 18

// maxLine bounds the length of one input line.
const maxLine = 1 << 20

// ReadSWF reads a log in the Standard Workload Format of the Parallel
// Workloads Archive. See the package documentation for the field mapping
// and the skip rules. Malformed input gives a [*ParseError].
func ReadSWF(r io.Reader) (*Trace, error) { return readSWF(r, 0) }

// readSWF is ReadSWF with room for hint jobs allocated up front.
func readSWF(r io.Reader, hint int) (*Trace, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	t := &Trace{Jobs: make([]Job, 0, hint)}
	var skips skipCounter
	teams := interner{}
	var f [swfFields]string
	lineNo := 0
	for sc.Scan() {
		lineNo++
		line := sc.Text()
		if lineNo == 1 {
			line = strings.TrimPrefix(line, "\uFEFF")
		}
		s := strings.TrimLeft(line, " \t\r\v\f")
		if s == "" || isBlank(s) {
			continue
		}
		if s[0] == ';' {
			if err := swfHeader(t, s[1:], lineNo); err != nil {
				return nil, err
			}
			continue
		}
		if n := splitFields(s, f[:]); n != swfFields {
			return nil, &ParseError{Format: "swf", Line: lineNo,
				Err: fmt.Errorf("%d fields, want %d", n, swfFields)}
		}
		var v [swfFields]int64
		for i := range f {
			// Processor counts must be whole; other fields are rounded.
			whole := i == 4 || i == 7
			x, err := parseNum(f[i], whole)
			if err != nil {
				return nil, &ParseError{Format: "swf", Line: lineNo,
					Field: "field " + strconv.Itoa(i+1), Value: f[i], Err: err}
			}
			v[i] = x
		}
		procs := v[4]
		if procs <= 0 {
			procs = v[7]
		}
		if procs <= 0 {
			skips.noProcs++
			continue
		}
		field := 5
		if v[4] <= 0 {
			field = 8
		}
		if procs > maxInt {
			return nil, &ParseError{Format: "swf", Line: lineNo,
				Field: "field " + strconv.Itoa(field), Value: f[field-1], Err: ErrRange}
		}
		req := procs
		if v[7] > 0 {
			if v[7] > maxInt {
				return nil, &ParseError{Format: "swf", Line: lineNo,
					Field: "field 8", Value: f[7], Err: ErrRange}
			}
			req = v[7]
		}
		run := v[3]
		if run <= 0 {
			skips.noRun++
			continue
		}
		if v[1] < 0 {
			skips.noSubmit++ // -1: unknown, as in every SWF field
			continue
		}
		limit := v[8]
		if limit <= 0 {
			limit = run
		}
		team := ""
		if v[12] >= 0 {
			team = teams.get(strconv.FormatInt(v[12], 10))
		}
		t.Jobs = append(t.Jobs, Job{
			ID:       strconv.FormatInt(v[0], 10),
			Submit:   v[1],
			Run:      run,
			Limit:    limit,
			Procs:    int(procs),
			ReqProcs: int(req),
			Team:     team,
			Tier:     DefaultTier,
			Kind:     KindTraining,
			Line:     lineNo,
		})
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &ParseError{Format: "swf", Line: lineNo + 1,
				Err: fmt.Errorf("line longer than %d bytes", maxLine)}
		}
		return nil, fmt.Errorf("swf: %w", err)
	}
	if len(t.Jobs) == 0 {
		t.Jobs = nil
	}
	sortJobs(t.Jobs)
	t.Skipped = skips.skips()
	return t, nil
}

// swfHeader reads the MaxProcs and MaxNodes header comments; other header
// lines are ignored.
func swfHeader(t *Trace, s string, lineNo int) error {
	key, val, ok := strings.Cut(s, ":")
	if !ok {
		return nil
	}
	key = strings.TrimSpace(key)
	var dst *int
	switch {
	case strings.EqualFold(key, "MaxProcs"):
		dst = &t.MaxProcs
	case strings.EqualFold(key, "MaxNodes"):
		dst = &t.MaxNodes
	default:
		return nil
	}
	var first [1]string
	if splitFields(val, first[:]) == 0 {
		return nil // no value: treat as absent
	}
	n, err := parseNum(first[0], true)
	if err == nil && n > maxInt {
		err = ErrRange
	}
	if err != nil {
		return &ParseError{Format: "swf", Line: lineNo, Field: key, Value: first[0], Err: err}
	}
	if n > 0 {
		*dst = int(n)
	}
	return nil
}

// splitFields stores up to len(dst) whitespace-separated fields of s in dst
// and returns the total number of fields in s.
func splitFields(s string, dst []string) int {
	n := 0
	i := 0
	for i < len(s) {
		for i < len(s) && isSpace(s[i]) {
			i++
		}
		if i == len(s) {
			break
		}
		j := i
		for j < len(s) && !isSpace(s[j]) {
			j++
		}
		if n < len(dst) {
			dst[n] = s[i:j]
		}
		n++
		i = j
	}
	return n
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'
}

// isBlank reports whether s holds only whitespace, including Unicode
// spaces such as a non-breaking space.
func isBlank(s string) bool {
	return strings.TrimSpace(s) == ""
}
