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

// ReadSWF reads a log in the Standard Workload Format of the Parallel
// Workloads Archive. See the package documentation for the field mapping
// and the skip rules. Malformed input gives a [*ParseError]; so does a
// line or an input beyond [MaxLineBytes] or [MaxInputBytes]. The input is
// streamed: memory grows with the jobs, not with blank or comment lines.
func ReadSWF(r io.Reader) (*Trace, error) {
	lr := newLimitReader(r, "swf")
	sc := bufio.NewScanner(lr)
	// The limit reader stops lines at MaxLineBytes; the scanner needs room
	// for such a line and its line break.
	sc.Buffer(make([]byte, 0, 64<<10), MaxLineBytes+2)
	sr := swfReader{t: &Trace{}, teams: interner{}}
	for sc.Scan() {
		// Once the reader stops at a limit, the scanner still hands out
		// what it holds, the cut-off line last: that line is the error.
		if lr.err != nil && sr.lineNo+1 >= lr.errLine {
			return nil, lr.err
		}
		if err := sr.line(sc.Text()); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, readError("swf", err)
	}
	sr.t.finish(&sr.skips)
	return sr.t, nil
}

// readError returns the *ParseError in err (a limit of the input), or err
// prefixed with the format.
func readError(format string, err error) error {
	var pe *ParseError
	if errors.As(err, &pe) {
		return pe
	}
	return fmt.Errorf("%s: %w", format, err)
}

// swfReader is the state of one SWF read: the trace so far, the skip
// counts, the team names seen and the current line number.
type swfReader struct {
	t      *Trace
	skips  skipCounter
	teams  interner
	lineNo int
	f      [swfFields]string
}

// line reads one line: blank lines are ignored, ';' lines are header
// comments, any other is a job record of exactly swfFields fields.
func (sr *swfReader) line(line string) error {
	sr.lineNo++
	if sr.lineNo == 1 {
		line = strings.TrimPrefix(line, "\uFEFF")
	}
	s := strings.TrimLeft(line, " \t\r\v\f")
	switch {
	case s == "" || isBlank(s):
		return nil
	case s[0] == ';':
		return swfHeader(sr.t, s[1:], sr.lineNo)
	}
	if n := splitFields(s, sr.f[:]); n != swfFields {
		return &ParseError{Format: "swf", Line: sr.lineNo,
			Err: fmt.Errorf("%d fields, want %d", n, swfFields)}
	}
	v, err := swfNumbers(&sr.f, sr.lineNo)
	if err != nil {
		return err
	}
	j, cause, err := swfJob(&v, &sr.f, sr.lineNo)
	if err != nil {
		return err
	}
	switch cause {
	case "":
		if v[12] >= 0 {
			j.Team = sr.teams.get(strconv.FormatInt(v[12], 10))
		}
		sr.t.Jobs = append(sr.t.Jobs, j)
	case SkipNoProcessors:
		sr.skips.noProcs++
	case SkipNoRuntime:
		sr.skips.noRun++
	case SkipNoSubmitTime:
		sr.skips.noSubmit++
	}
	return nil
}

// swfNumbers parses the fields of a record. Processor counts (fields 5
// and 8) must be whole; other fields are rounded to integers.
func swfNumbers(f *[swfFields]string, lineNo int) ([swfFields]int64, error) {
	var v [swfFields]int64
	for i := range f {
		whole := i == 4 || i == 7
		x, err := parseNum(f[i], whole)
		if err != nil {
			return v, &ParseError{Format: "swf", Line: lineNo,
				Field: "field " + strconv.Itoa(i+1), Value: f[i], Err: err}
		}
		v[i] = x
	}
	return v, nil
}

// swfJob maps a parsed record to a job, without its team. cause is ""
// for a usable job, else the Skip* cause it is dropped for, checked in
// the documented order: processors, run time, submit time.
func swfJob(v *[swfFields]int64, f *[swfFields]string, lineNo int) (j Job, cause string, err error) {
	procs, field := v[4], 5
	if procs <= 0 {
		procs, field = v[7], 8
	}
	if procs <= 0 {
		return j, SkipNoProcessors, nil
	}
	if procs > maxInt {
		return j, "", &ParseError{Format: "swf", Line: lineNo,
			Field: "field " + strconv.Itoa(field), Value: f[field-1], Err: ErrRange}
	}
	req := procs
	if v[7] > 0 {
		if v[7] > maxInt {
			return j, "", &ParseError{Format: "swf", Line: lineNo,
				Field: "field 8", Value: f[7], Err: ErrRange}
		}
		req = v[7]
	}
	run := v[3]
	if run <= 0 {
		return j, SkipNoRuntime, nil
	}
	if v[1] < 0 {
		return j, SkipNoSubmitTime, nil // -1: unknown, as in every SWF field
	}
	limit := v[8]
	if limit <= 0 {
		limit = run
	}
	return Job{
		ID:       strconv.FormatInt(v[0], 10),
		Submit:   v[1],
		Run:      run,
		Limit:    limit,
		Procs:    int(procs),
		ReqProcs: int(req),
		Tier:     DefaultTier,
		Kind:     KindTraining,
		Line:     lineNo,
	}, "", nil
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
