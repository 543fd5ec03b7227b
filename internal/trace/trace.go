package trace

import (
	"bufio"
	"bytes"
	"cmp"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// DefaultTier is the priority tier given to jobs whose trace names none.
const DefaultTier = 3

// Job kinds.
const (
	// KindTraining is a batch job that ends by itself; it is the default kind.
	KindTraining = "training"
	// KindInference is a serving job.
	KindInference = "inference"
)

// Skip causes, as reported in [Trace.Skipped].
const (
	// SkipNoProcessors counts jobs with no processor or GPU count (<= 0).
	SkipNoProcessors = "no-processors"
	// SkipNoRuntime counts jobs with no run time (<= 0).
	SkipNoRuntime = "no-runtime"
	// SkipNoSubmitTime counts SWF jobs whose submit time is unknown
	// (negative; the format writes -1).
	SkipNoSubmitTime = "no-submit-time"
)

// Job is one usable job of a workload trace.
type Job struct {
	// ID is the job's identifier as given by the trace (SWF field 1, CSV id).
	ID string
	// Submit is the submit time in seconds from the trace start. It may be
	// negative if a CSV trace says so; readers do not shift it. (In SWF a
	// negative submit time means unknown, and the job is skipped.)
	Submit int64
	// Run is the actual run time in seconds, always >= 1.
	Run int64
	// Limit is the requested time (time limit) in seconds, always >= 1. It is
	// the run time when the trace gives none. It may be below Run: real jobs
	// can outlive their estimate.
	Limit int64
	// Procs is the number of processors (SWF) or GPUs (CSV), always >= 1.
	Procs int
	// ReqProcs is the number of processors the job requested (SWF field
	// 8), which logs may record apart from the allocation in Procs; it is
	// Procs when the trace gives none, and for CSV. Always >= 1.
	ReqProcs int
	// Team is the owning team or account, "" when unknown.
	Team string
	// Tier is the priority tier, 0 highest; [DefaultTier] when not given.
	Tier int
	// Kind is [KindTraining] or [KindInference].
	Kind string
	// Line is the 1-based line of the source the job was read from.
	Line int
}

// Skip counts the records of one cause that a reader dropped.
type Skip struct {
	// Cause is one of the Skip* constants, such as [SkipNoRuntime].
	Cause string
	// Count is the number of records dropped for Cause.
	Count int
}

// Skips lists skipped-record counts, sorted by cause.
type Skips []Skip

// Total returns the number of records skipped for any cause.
func (s Skips) Total() int {
	n := 0
	for _, k := range s {
		n += k.Count
	}
	return n
}

// Count returns the number of records skipped for cause.
func (s Skips) Count(cause string) int {
	for _, k := range s {
		if k.Cause == cause {
			return k.Count
		}
	}
	return 0
}

// Trace is a parsed workload.
type Trace struct {
	// Jobs are the usable jobs, sorted stably by Submit (ties keep file order).
	Jobs []Job
	// MaxProcs is the SWF header's MaxProcs, 0 when absent (and for CSV).
	MaxProcs int
	// MaxNodes is the SWF header's MaxNodes, 0 when absent (and for CSV).
	MaxNodes int
	// Skipped counts the records dropped as unusable, by cause.
	Skipped Skips
}

// ParseError reports malformed input. Its message reads like
// `swf: line 17: field 4 "abc": not a number`.
type ParseError struct {
	// Format is "swf" or "csv".
	Format string
	// Line is the 1-based input line.
	Line int
	// Field names the offending field ("field 4", "column gpus",
	// "MaxProcs"); "" when the error concerns the whole line.
	Field string
	// Value is the offending text, when Field is set.
	Value string
	// Err is the underlying problem.
	Err error
}

// Error implements error.
func (e *ParseError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("%s: line %d: %v", e.Format, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: line %d: %s %q: %v", e.Format, e.Line, e.Field, e.Value, e.Err)
}

// Unwrap returns the underlying error.
func (e *ParseError) Unwrap() error { return e.Err }

// constError is an error that can be a constant, for sentinel errors.
type constError string

// Error returns the error text.
func (e constError) Error() string { return string(e) }

// Errors wrapped by [ParseError], for use with errors.Is.
const (
	// ErrNotNumber means a numeric field holds something else.
	ErrNotNumber = constError("not a number")
	// ErrRange means a number does not fit the field.
	ErrRange = constError("out of range")
	// ErrNotWhole means a count (processors, GPUs, tier) has a fraction.
	ErrNotWhole = constError("not a whole number")
	// ErrTooLong means a line is longer than [MaxLineBytes].
	ErrTooLong = constError("line too long")
	// ErrTooLarge means the input is longer than [MaxInputBytes].
	ErrTooLarge = constError("input too large")
)

// Limits on what a reader reads. A line longer than MaxLineBytes or an
// input longer than MaxInputBytes (after decompression) stops the read
// with a [*ParseError] wrapping [ErrTooLong] or [ErrTooLarge], so an
// endless stream (/dev/zero, a pipe that never closes, a gzip bomb) costs
// at most MaxInputBytes of reading and MaxLineBytes of buffer.
const (
	// MaxLineBytes bounds one line, its line break excluded.
	MaxLineBytes = 1 << 20
	// MaxInputBytes bounds the whole input: 4 GiB, well above the largest
	// logs of the Parallel Workloads Archive uncompressed.
	MaxInputBytes = 4 << 30
)

// Read reads the trace file at path. format is "swf", "csv", or "" to choose
// by extension: a name ending in .swf (before an optional .gz) is SWF, any
// other is CSV. Gzip-compressed input is detected by its magic bytes and
// decompressed as it is read. The file is streamed: memory grows with the
// jobs read, not with the file's size, and the limits [MaxLineBytes] and
// [MaxInputBytes] apply to the decompressed text.
func Read(path, format string) (*Trace, error) {
	if format == "" {
		format = FormatOf(path)
	}
	var read func(io.Reader) (*Trace, error)
	switch format {
	case "swf":
		read = ReadSWF
	case "csv":
		read = ReadCSV
	default:
		return nil, fmt.Errorf("trace: unknown format %q (want swf or csv)", format)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r, err := decompressed(bufio.NewReaderSize(f, 64<<10))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	t, err := read(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// decompressed returns br itself, or a gzip reader over it when br starts
// with the gzip magic bytes.
func decompressed(br *bufio.Reader) (io.Reader, error) {
	magic, _ := br.Peek(2)
	if len(magic) < 2 || magic[0] != 0x1f || magic[1] != 0x8b {
		return br, nil
	}
	return gzip.NewReader(br)
}

// limitReader passes its reader's bytes through until a line exceeds
// maxLine bytes or the input exceeds maxInput bytes; from then on it
// returns a *ParseError naming the limit and the line it was reached on.
type limitReader struct {
	r        io.Reader
	format   string
	maxLine  int
	maxInput int64
	read     int64 // bytes passed through
	line     int   // 1-based line of the next byte
	lineLen  int   // bytes of that line passed through
	err      error // the limit error, once reached
	errLine  int   // the line err names
}

func newLimitReader(r io.Reader, format string) *limitReader {
	return &limitReader{r: r, format: format, maxLine: MaxLineBytes, maxInput: MaxInputBytes, line: 1}
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.err != nil {
		return 0, l.err
	}
	if room := l.maxInput - l.read + 1; int64(len(p)) > room {
		p = p[:room] // one byte past the limit is enough to see it
	}
	n, err := l.r.Read(p)
	ok := l.within(p[:n])
	l.read += int64(ok)
	if l.read > l.maxInput {
		l.read--
		ok--
		l.err = l.limitError(ErrTooLarge, "input longer than %d bytes", l.maxInput)
	}
	if ok < n {
		return ok, nil // the bytes before the limit; the error comes next
	}
	return n, err
}

// within advances the line count over b and returns how many bytes of b
// lie within the line limit; when that is fewer than len(b), it records
// the limit error.
func (l *limitReader) within(b []byte) int {
	done := 0
	for done < len(b) {
		i := bytes.IndexByte(b[done:], '\n')
		if i < 0 {
			i = len(b) - done
		}
		if l.lineLen+i > l.maxLine {
			l.err = l.limitError(ErrTooLong, "line longer than %d bytes", int64(l.maxLine))
			return done + l.maxLine - l.lineLen
		}
		l.lineLen += i
		done += i
		if done < len(b) { // at a line break
			l.line++
			l.lineLen = 0
			done++
		}
	}
	return done
}

func (l *limitReader) limitError(kind constError, format string, limit int64) error {
	l.errLine = l.line
	return &ParseError{Format: l.format, Line: l.line, Err: limitError{kind, fmt.Sprintf(format, limit)}}
}

// limitError is a limit reached, with its text; it wraps [ErrTooLong] or
// [ErrTooLarge].
type limitError struct {
	kind constError
	text string
}

func (e limitError) Error() string { return e.text }
func (e limitError) Unwrap() error { return e.kind }

// FormatOf returns the format [Read] infers from a file name: "swf" when
// the name ends in .swf or .swf.gz (any case), else "csv".
func FormatOf(path string) string {
	name := strings.ToLower(filepath.Base(path))
	name = strings.TrimSuffix(name, ".gz")
	if strings.HasSuffix(name, ".swf") {
		return "swf"
	}
	return "csv"
}

// maxInt is the largest int, for conversions from int64.
const maxInt = int64(^uint(0) >> 1)

// parseNum parses a decimal integer or a finite decimal float, rounding to
// the nearest integer (halves away from zero). whole rejects fractions.
func parseNum(s string, whole bool) (int64, error) {
	if v, ok := fastInt(s); ok {
		return v, nil
	}
	if !isDecimal(s) {
		return 0, ErrNotNumber
	}
	if v, err := strconv.ParseInt(s, 10, 64); err == nil {
		return v, nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, ErrRange
		}
		return 0, ErrNotNumber
	}
	if whole && f != math.Trunc(f) {
		return 0, ErrNotWhole
	}
	r := math.Round(f)
	// float64(math.MaxInt64) is 2^63, so the upper bound is exclusive.
	if r >= 9223372036854775807 || r < -9223372036854775808 {
		return 0, ErrRange
	}
	return int64(r), nil
}

// isDecimal rules out spellings ParseFloat accepts that are not plain
// decimal numbers: infinities, NaN, hexadecimal and underscores.
func isDecimal(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && c != '.' && c != '-' && c != '+' && c != 'e' && c != 'E' {
			return false
		}
	}
	return true
}

// fastInt parses short decimal integers without allocating.
func fastInt(s string) (int64, bool) {
	i := 0
	neg := false
	if len(s) > 0 && s[0] == '-' {
		neg = true
		i = 1
	}
	if i == len(s) || len(s)-i > 18 {
		return 0, false
	}
	var v int64
	for ; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int64(c-'0')
	}
	if neg {
		v = -v
	}
	return v, true
}

// skipCounter accumulates skip causes.
type skipCounter struct {
	noProcs, noRun, noSubmit int
}

func (c *skipCounter) skips() Skips {
	s := Skips{}
	if c.noProcs > 0 {
		s = append(s, Skip{Cause: SkipNoProcessors, Count: c.noProcs})
	}
	if c.noRun > 0 {
		s = append(s, Skip{Cause: SkipNoRuntime, Count: c.noRun})
	}
	if c.noSubmit > 0 {
		s = append(s, Skip{Cause: SkipNoSubmitTime, Count: c.noSubmit})
	}
	slices.SortFunc(s, func(a, b Skip) int { return strings.Compare(a.Cause, b.Cause) })
	return s
}

// finish completes a read: no jobs is a nil slice, jobs are sorted stably
// by submit time, and the skip counts are recorded.
func (t *Trace) finish(c *skipCounter) {
	if len(t.Jobs) == 0 {
		t.Jobs = nil
	}
	sortJobs(t.Jobs)
	t.Skipped = c.skips()
}

// sortJobs sorts jobs stably by submit time.
func sortJobs(jobs []Job) {
	if slices.IsSortedFunc(jobs, cmpSubmit) {
		return
	}
	slices.SortStableFunc(jobs, cmpSubmit)
}

func cmpSubmit(a, b Job) int { return cmp.Compare(a.Submit, b.Submit) }

// interner shares equal strings (team names) between jobs.
type interner map[string]string

func (in interner) get(s string) string {
	if v, ok := in[s]; ok {
		return v
	}
	s = strings.Clone(s)
	in[s] = s
	return s
}
