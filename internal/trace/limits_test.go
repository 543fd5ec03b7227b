package trace

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gpusched/gpusched/internal/measure"
)

// allocated returns the bytes the heap allocated while f ran.
func allocated(f func()) uint64 {
	bytes, _ := measure.Allocated(f)
	return bytes
}

// zeros is an endless stream of NUL bytes, like /dev/zero, that gives up
// with errEndless after 64 MiB so that a reader without limits fails the
// test instead of running out of memory.
type zeros struct{ read int }

var errEndless = errors.New("test stream: 64 MiB read and the reader has not stopped")

func (z *zeros) Read(p []byte) (int, error) {
	if z.read >= 64<<20 {
		return 0, errEndless
	}
	clear(p)
	z.read += len(p)
	return len(p), nil
}

// An endless stream without line breaks stops either reader at the line
// limit: an error naming the limit and line 1, after reading little more
// than one line's worth and allocating about as much.
func TestReadEndlessStream(t *testing.T) {
	for name, read := range map[string]func(io.Reader) (*Trace, error){"swf": ReadSWF, "csv": ReadCSV} {
		t.Run(name, func(t *testing.T) {
			z := &zeros{}
			var err error
			alloc := allocated(func() { _, err = read(z) })
			var pe *ParseError
			if !errors.As(err, &pe) || !errors.Is(err, ErrTooLong) || pe.Line != 1 {
				t.Fatalf("error %v, want a line-1 ParseError wrapping ErrTooLong", err)
			}
			if want := name + ": line 1: line longer than 1048576 bytes"; err.Error() != want {
				t.Fatalf("message %q, want %q", err, want)
			}
			if z.read > MaxLineBytes+256<<10 {
				t.Fatalf("read %d bytes to find a line longer than %d", z.read, MaxLineBytes)
			}
			// The CSV reader copies a line as it grows (and once more into
			// its fields): a few times the line.
			if alloc > 8*MaxLineBytes {
				t.Fatalf("allocated %d bytes for one line of at most %d", alloc, MaxLineBytes)
			}
		})
	}
}

// Blank lines cost reading time but no memory: one job followed by a
// megabyte of empty lines, read from a file, allocates a few buffers and
// the job, not a job slot per line (which is what pre-sizing the job
// list by the line count did: 120 MB here, 10 GB for 100 MB of blanks).
func TestReadBlankLinesBounded(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ name, first string }{
		{"t.swf", swfLine("1", "0", "10", "2", "2", "20", "1") + "\n"},
		{"t.csv", "a,0,2,10\n"},
	} {
		p := filepath.Join(dir, tc.name)
		noErr(t, os.WriteFile(p, []byte(tc.first+strings.Repeat("\n", 1<<20)), 0o600))
		var tr *Trace
		var err error
		alloc := allocated(func() { tr, err = Read(p, "") })
		noErr(t, err)
		equal(t, 1, len(tr.Jobs), tc.name+" jobs")
		if alloc > 512<<10 {
			t.Fatalf("%s: allocated %d bytes for one job and 1 MiB of blank lines", tc.name, alloc)
		}
	}
}

// The input limit: the bytes before it are read, then a ParseError names
// the limit and the line it was reached on.
func TestLimitReaderInput(t *testing.T) {
	in := "ab\ncd\nef\n"
	l := newLimitReader(strings.NewReader(in), "csv")
	l.maxInput = 7
	got, err := io.ReadAll(l)
	equal(t, in[:7], string(got), "bytes before the limit")
	var pe *ParseError
	if !errors.As(err, &pe) || !errors.Is(err, ErrTooLarge) || pe.Line != 3 {
		t.Fatalf("error %v, want a line-3 ParseError wrapping ErrTooLarge", err)
	}
	equal(t, "csv: line 3: input longer than 7 bytes", err.Error(), "message")

	l = newLimitReader(strings.NewReader(in), "csv")
	l.maxInput = int64(len(in))
	got, err = io.ReadAll(l)
	noErr(t, err)
	equal(t, in, string(got), "an input of exactly the limit")
}

// The line limit counts the bytes of a line without its line break, and
// only the lines before the long one are passed on whole.
func TestLimitReaderLine(t *testing.T) {
	l := newLimitReader(iotestOneByte(strings.NewReader("abc\nabcd\nabcde\n")), "swf")
	l.maxLine = 4
	got, err := io.ReadAll(l)
	equal(t, "abc\nabcd\nabcd", string(got), "bytes before the limit")
	var pe *ParseError
	if !errors.As(err, &pe) || !errors.Is(err, ErrTooLong) || pe.Line != 3 {
		t.Fatalf("error %v, want a line-3 ParseError wrapping ErrTooLong", err)
	}
	l = newLimitReader(bytes.NewReader([]byte("abcd\nabcd")), "swf")
	l.maxLine = 4
	_, err = io.ReadAll(l)
	noErr(t, err)
}

// iotestOneByte reads one byte at a time, so that a line spans reads.
func iotestOneByte(r io.Reader) io.Reader { return oneByte{r} }

type oneByte struct{ r io.Reader }

func (o oneByte) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	return o.r.Read(p[:1])
}

// /dev/zero itself, through Read: the file is streamed, not read whole.
func TestReadDevZero(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skip("no /dev/zero")
	}
	for _, format := range []string{"swf", "csv"} {
		_, err := Read("/dev/zero", format)
		if !errors.Is(err, ErrTooLong) {
			t.Fatalf("%s: error %v, want ErrTooLong", format, err)
		}
	}
}
