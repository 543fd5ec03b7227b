package main

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestForecastShape: with -forecast the command prints one object whose
// only key is "forecast": an array with one entry per pending job of the
// snapshot, sorted by job ID, each with exactly "job" and "start" (an
// RFC 3339 time), or "job", "start": null and a non-empty "reason".
func TestForecastShape(t *testing.T) {
	for _, in := range []string{"design.json", "mixed.json"} {
		t.Run(in, func(t *testing.T) {
			code, stdout, stderr := runFile(t, in, "-forecast")
			require.Equal(t, 0, code, stderr)
			require.Empty(t, stderr)
			dec := json.NewDecoder(strings.NewReader(stdout))
			var top map[string][]map[string]any
			require.NoError(t, dec.Decode(&top))
			require.Len(t, top, 1)
			list, ok := top["forecast"]
			require.True(t, ok, "no forecast key in %s", stdout)
			var ids []string
			nulls := 0
			for _, e := range list {
				id, ok := e["job"].(string)
				require.True(t, ok, "entry %v", e)
				ids = append(ids, id)
				switch start := e["start"].(type) {
				case string:
					require.Len(t, e, 2, "entry %v", e)
					_, err := time.Parse(time.RFC3339, start)
					require.NoError(t, err)
				case nil:
					nulls++
					require.Len(t, e, 3, "entry %v", e)
					reason, ok := e["reason"].(string)
					require.True(t, ok && reason != "", "entry %v", e)
				default:
					t.Fatalf("entry %v: start is %T", e, start)
				}
			}
			require.True(t, slices.IsSorted(ids), "%v", ids)
			require.Equal(t, pendingIDs(t, in), ids)
			if in == "mixed.json" {
				require.Positive(t, nulls)
			}
		})
	}
}

// pendingIDs lists the pending jobs of the named testdata snapshot, by ID.
func pendingIDs(t *testing.T, in string) []string {
	code, stdout, stderr := runFile(t, in)
	require.Equal(t, 0, code, stderr)
	var d struct {
		Placements, Reservations, Pending []struct{ Job string }
	}
	require.NoError(t, json.NewDecoder(bytes.NewReader([]byte(stdout))).Decode(&d))
	var ids []string
	for _, l := range [][]struct{ Job string }{d.Placements, d.Reservations, d.Pending} {
		for _, e := range l {
			ids = append(ids, e.Job)
		}
	}
	slices.Sort(ids)
	return ids
}

// TestForecastErrors: -forecast exits as the decision does on invalid
// input (2, one line naming the field, nothing on standard output), and
// refuses -explain beside it.
func TestForecastErrors(t *testing.T) {
	code, stdout, stderr := runFile(t, "bad-members.json", "-forecast")
	require.Equal(t, 2, code)
	require.Empty(t, stdout)
	require.Equal(t, 1, strings.Count(stderr, "\n"))
	require.Contains(t, stderr, `jobs[3] "C": gpusPerMember`)
	code, stdout, stderr = runFile(t, "design.json", "-forecast", "-explain", "C")
	require.Equal(t, 2, code)
	require.Empty(t, stdout)
	require.Contains(t, stderr, "-forecast")
}
