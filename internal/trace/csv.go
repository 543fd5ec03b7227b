package trace

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// bom is the UTF-8 byte order mark, ignored at the start of the input.
const bom = "\uFEFF"

// CSV columns, in their positional order.
const (
	colID = iota
	colSubmit
	colGPUs
	colDuration
	colLimit
	colTeam
	colTier
	colKind
	numCols
)

// colName returns the canonical name of column c, used in errors.
func colName(c int) string {
	return [numCols]string{"id", "submit", "gpus", "duration", "timeLimit", "team", "tier", "kind"}[c]
}

// colAlias maps a normalized header name (see normCol) to a column.
func colAlias(name string) (int, bool) {
	switch name {
	case "id", "jobid", "job", "name":
		return colID, true
	case "submit", "submittime", "arrival", "arrivaltime":
		return colSubmit, true
	case "gpus", "gpu", "numgpus", "numgpu", "procs", "processors":
		return colGPUs, true
	case "duration", "run", "runtime":
		return colDuration, true
	case "timelimit", "limit", "requestedtime", "reqtime":
		return colLimit, true
	case "team", "group", "account":
		return colTeam, true
	case "tier":
		return colTier, true
	case "kind":
		return colKind, true
	}
	return 0, false
}

// normCol lowercases a header name and drops '_', '-', '.' and spaces.
func normCol(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(s)) {
		switch r {
		case '_', '-', '.', ' ':
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// ReadCSV reads a GPU job trace in the project's CSV format,
// id,submit,gpus,duration[,timeLimit][,team][,tier][,kind], with an
// optional header row that may name the columns in any order. See the
// package documentation for the details. Malformed input gives a
// [*ParseError]; so does a line or an input beyond [MaxLineBytes] or
// [MaxInputBytes]. The input is streamed: memory grows with the jobs, not
// with blank or comment lines.
func ReadCSV(r io.Reader) (*Trace, error) {
	cr := newCSVReader(r)
	rd := csvReader{t: &Trace{}, teams: interner{}, first: true}
	for c := range rd.pos {
		rd.pos[c] = -1
	}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, csvError(err)
		}
		line, _ := cr.FieldPos(0)
		if err := rd.record(rec, line); err != nil {
			return nil, err
		}
	}
	rd.t.finish(&rd.skips)
	return rd.t, nil
}

// newCSVReader returns a CSV reader of r within the input limits. A byte
// order mark is dropped before the CSV reader sees it: in front of a
// comment or a quote it would change how the first line reads.
func newCSVReader(r io.Reader) *csv.Reader {
	br := bufio.NewReader(newLimitReader(r, "csv"))
	if b, err := br.Peek(len(bom)); err == nil && string(b) == bom {
		_, _ = br.Discard(len(bom))
	}
	cr := csv.NewReader(br)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	cr.TrimLeadingSpace = true
	cr.Comment = '#'
	return cr
}

// csvError converts an error of the CSV reader: a syntax error becomes a
// *ParseError of its line, and a limit of the input is passed on.
func csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) && !errors.As(pe.Err, new(*ParseError)) {
		return &ParseError{Format: "csv", Line: pe.Line, Err: pe.Err}
	}
	return readError("csv", err)
}

// csvReader is the state of one CSV read.
type csvReader struct {
	t     *Trace
	skips skipCounter
	teams interner
	// pos[c] is the record index of column c, or -1 when absent.
	pos   [numCols]int
	want  int  // exact field count in header mode; 0 in positional mode
	row   int  // data rows seen, for default ids
	first bool // no record read yet: the next may be a header
}

// record reads one record of the input, at line: a whitespace-only line is
// ignored, the first record may be the header, any other is a job.
func (rd *csvReader) record(rec []string, line int) error {
	if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
		return nil
	}
	if rd.first {
		rd.first = false
		if isHeader(rec) {
			if err := csvHeader(rec, &rd.pos, line); err != nil {
				return err
			}
			rd.want = len(rec)
			return nil
		}
	}
	if err := rd.columns(rec, line); err != nil {
		return err
	}
	j, ok, err := csvJob(rec, &rd.pos, line, rd.row, rd.teams)
	rd.row++
	switch {
	case err != nil:
		return err
	case ok:
		rd.t.Jobs = append(rd.t.Jobs, j)
	case j.Procs <= 0:
		rd.skips.noProcs++
	default:
		rd.skips.noRun++
	}
	return nil
}

// columns checks a data record's field count: the header's, or 4 to 8
// without a header, in which case the columns are positional and pos
// follows the record's length.
func (rd *csvReader) columns(rec []string, line int) error {
	if rd.want > 0 {
		if len(rec) != rd.want {
			return &ParseError{Format: "csv", Line: line,
				Err: fmt.Errorf("%d fields, want %d as in the header", len(rec), rd.want)}
		}
		return nil
	}
	if len(rec) < colDuration+1 || len(rec) > numCols {
		return &ParseError{Format: "csv", Line: line,
			Err: fmt.Errorf("%d fields, want %d to %d", len(rec), colDuration+1, numCols)}
	}
	for c := range rd.pos {
		rd.pos[c] = -1
		if c < len(rec) {
			rd.pos[c] = c
		}
	}
	return nil
}

// isHeader reports whether the first record is a header: it names at least
// one known column, and its second field (submit, positionally) is not a
// number.
func isHeader(rec []string) bool {
	if len(rec) > 1 {
		if _, err := parseNum(strings.TrimSpace(rec[1]), false); err == nil {
			return false
		}
	}
	for _, name := range rec {
		if _, ok := colAlias(normCol(name)); ok {
			return true
		}
	}
	return false
}

// csvHeader maps header names to columns.
func csvHeader(rec []string, pos *[numCols]int, line int) error {
	for i, name := range rec {
		c, ok := colAlias(normCol(name))
		if !ok {
			continue // unknown columns are ignored
		}
		if pos[c] >= 0 {
			return &ParseError{Format: "csv", Line: line, Field: "column " + colName(c), Value: name,
				Err: fmt.Errorf("duplicate column (also field %d)", pos[c]+1)}
		}
		pos[c] = i
	}
	for _, c := range []int{colSubmit, colGPUs, colDuration} {
		if pos[c] < 0 {
			return &ParseError{Format: "csv", Line: line,
				Err: fmt.Errorf("header has no %s column", colName(c))}
		}
	}
	return nil
}

// csvJob parses one data record. ok is false when the job is skipped; then
// j.Procs <= 0 tells the cause (no GPUs) from no run time.
func csvJob(rec []string, pos *[numCols]int, line, row int, teams interner) (j Job, ok bool, err error) {
	get := func(c int) string {
		if pos[c] < 0 {
			return ""
		}
		return strings.TrimSpace(rec[pos[c]])
	}
	num := func(c int, whole bool) (int64, error) {
		s := get(c)
		v, err := parseNum(s, whole)
		if err != nil {
			return 0, &ParseError{Format: "csv", Line: line, Field: "column " + colName(c), Value: s, Err: err}
		}
		return v, nil
	}
	j = Job{ID: get(colID), Tier: DefaultTier, Kind: KindTraining, Line: line}
	if j.ID == "" {
		j.ID = strconv.Itoa(row)
	} else {
		j.ID = strings.Clone(j.ID)
	}
	if j.Submit, err = num(colSubmit, false); err != nil {
		return j, false, err
	}
	gpus, err := num(colGPUs, true)
	if err != nil {
		return j, false, err
	}
	if gpus > maxInt {
		return j, false, &ParseError{Format: "csv", Line: line, Field: "column gpus", Value: get(colGPUs), Err: ErrRange}
	}
	if gpus > 0 {
		j.Procs = int(gpus)
		j.ReqProcs = j.Procs
	}
	if j.Run, err = num(colDuration, false); err != nil {
		return j, false, err
	}
	if get(colLimit) != "" {
		if j.Limit, err = num(colLimit, false); err != nil {
			return j, false, err
		}
	}
	if j.Limit <= 0 {
		j.Limit = j.Run
	}
	if s := get(colTeam); s != "" {
		j.Team = teams.get(s)
	}
	if s := get(colTier); s != "" {
		tier, err := num(colTier, true)
		if err != nil {
			return j, false, err
		}
		if tier < 0 || tier > maxInt {
			return j, false, &ParseError{Format: "csv", Line: line, Field: "column tier", Value: s,
				Err: errors.New("want a tier >= 0")}
		}
		j.Tier = int(tier)
	}
	if s := get(colKind); s != "" {
		switch {
		case strings.EqualFold(s, KindTraining):
			j.Kind = KindTraining
		case strings.EqualFold(s, KindInference):
			j.Kind = KindInference
		default:
			return j, false, &ParseError{Format: "csv", Line: line, Field: "column kind", Value: s,
				Err: fmt.Errorf("want %s or %s", KindTraining, KindInference)}
		}
	}
	return j, j.Procs > 0 && j.Run > 0, nil
}
