package trace

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFormatOf(t *testing.T) {
	for name, want := range map[string]string{
		"a.swf": "swf", "dir.x/A.SWF": "swf", "a.swf.gz": "swf", "a.csv": "csv",
		"a.csv.gz": "csv", "a": "csv", "a.swf.txt": "csv",
	} {
		equal(t, want, FormatOf(name), name)
	}
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	swf := "; MaxProcs: 4\n" + swfLine("1", "0", "10", "2", "2", "20", "1") + "\n"
	csv := "id,submit,gpus,duration\na,0,2,10\n"
	write := func(name, content string, gz bool) string {
		p := filepath.Join(dir, name)
		data := []byte(content)
		if gz {
			var b bytes.Buffer
			w := gzip.NewWriter(&b)
			_, err := w.Write(data)
			noErr(t, err)
			noErr(t, w.Close())
			data = b.Bytes()
		}
		noErr(t, os.WriteFile(p, data, 0o600))
		return p
	}
	for _, tc := range []struct {
		path, format string
		procs        int
		maxProcs     int
	}{
		{write("t.swf", swf, false), "", 2, 4},
		{write("t.swf.gz", swf, true), "", 2, 4},
		{write("t.log", swf, false), "swf", 2, 4},
		{write("t.csv", csv, false), "", 2, 0},
		{write("t.csv.gz", csv, true), "", 2, 0},
		{write("t.dat", csv, true), "csv", 2, 0},
	} {
		t.Run(filepath.Base(tc.path), func(t *testing.T) {
			tr, err := Read(tc.path, tc.format)
			noErr(t, err)
			equal(t, 1, len(tr.Jobs), "jobs")
			equal(t, tc.procs, tr.Jobs[0].Procs, "procs")
			equal(t, tc.maxProcs, tr.MaxProcs, "MaxProcs")
		})
	}

	bad := write("bad.csv", "a,0,x,1\n", false)
	_, err := Read(bad, "")
	if err == nil || !strings.HasSuffix(err.Error(), `: csv: line 1: column gpus "x": not a number`) ||
		!strings.Contains(err.Error(), "bad.csv") {
		t.Fatalf("error %v should name the file and the line", err)
	}
	if _, err := Read(write("x.swf", swf, false), "json"); err == nil {
		t.Fatal("unknown format accepted")
	}
	if _, err := Read(filepath.Join(dir, "missing.swf"), ""); !os.IsNotExist(err) {
		t.Fatalf("missing file: %v", err)
	}
	if _, err := Read(write("trunc.swf.gz", "\x1f\x8b\x08", false), ""); err == nil {
		t.Fatal("truncated gzip accepted")
	}
}
