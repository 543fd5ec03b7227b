package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPrepareHeap checks when the command prepares its heap for a large
// snapshot and that the snapshot reaches run whole, from a file or a
// pipe, whatever was peeked of it.
func TestPrepareHeap(t *testing.T) {
	small := bytes.Repeat([]byte(" "), largeInput-1)
	large := bytes.Repeat([]byte("x"), 3*largeInput+17)
	for _, tc := range []struct {
		name  string
		data  []byte
		pipe  bool
		thp   bool // GODEBUG=disablethp=1
		grown int  // what grow is asked for; 0: not called
		exact bool // whether grow is told the size is known
	}{
		{"small file", small, false, false, 0, false},
		{"large file", large, false, false, 32 << 20, true},
		{"small pipe", small, true, false, 0, false},
		{"large pipe", large, true, false, 32 << 20, false},
		{"large file, huge pages off", large, false, true, 0, false},
		{"huge file", nil, false, false, 1 << 30, true}, // 200 MB of holes: 8 bytes each, at most 1 GiB
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.thp {
				t.Setenv("GODEBUG", "disablethp=1")
			}
			var in *os.File
			want := tc.data
			if tc.pipe {
				r, w, err := os.Pipe()
				require.NoError(t, err)
				defer r.Close()
				go func() { w.Write(tc.data); w.Close() }()
				in = r
			} else {
				name := filepath.Join(t.TempDir(), "snapshot.json")
				require.NoError(t, os.WriteFile(name, tc.data, 0o644))
				if tc.data == nil {
					require.NoError(t, os.Truncate(name, 200<<20))
					want = nil // not read back: 200 MB of zeros
				}
				f, err := os.Open(name)
				require.NoError(t, err)
				defer f.Close()
				in = f
			}
			grown, exact, calls := 0, false, 0
			r := prepareHeap(in, func(n int, e bool) { grown, exact, calls = n, e, calls+1 })
			require.Equal(t, tc.grown, grown)
			require.Equal(t, tc.exact, exact)
			require.LessOrEqual(t, calls, 1)
			if want != nil {
				got, err := io.ReadAll(r)
				require.NoError(t, err)
				require.Equal(t, want, got, "the input as run reads it")
			}
		})
	}
}
