package scheduler

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// updateDigests rewrites testdata/decision-digests.txt from the current
// code. Use it only for a change that means to alter decisions, and say
// why in the commit.
var updateDigests = flag.Bool("update-digests", false, "rewrite testdata/decision-digests.txt")

// digestCases are the benchmark snapshots whose decisions are pinned. The
// 16,384-node sizes run only with -digest-large (they take seconds each),
// the rest on every test run outside -short and -race.
var digestCases = []struct {
	nodes, pending int
	large          bool
}{
	{256, 1000, false}, {256, 10000, false}, {2048, 10000, false},
	{16384, 10000, true}, {16384, 100000, true},
}

var digestLarge = flag.Bool("digest-large", false, "also pin the 16,384-node benchmark decisions")

var digestPolicies = []struct {
	name string
	cfg  Config
}{
	{"easy", Config{}},
	{"conservative", Config{Backfill: Conservative}},
	{"conservative-24h", Config{Backfill: Conservative, Horizon: 24 * time.Hour}},
	{"none", Config{Backfill: NoBackfill}},
	{"no-preemption", Config{DisablePreemption: true}},
}

// TestBenchmarkDecisionDigests pins the decisions that the benchmark
// snapshots get, as SHA-256 digests of their JSON encoding, so that a
// change meant to keep decisions (a refactoring, a speed-up) is checked
// byte for byte on the workloads the benchmarks measure.
func TestBenchmarkDecisionDigests(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("the benchmark snapshots take seconds each; run without -short and -race")
	}
	path := filepath.Join("testdata", "decision-digests.txt")
	want := map[string]string{}
	if f, err := os.Open(path); err == nil {
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), " "); ok {
				want[k] = v
			}
		}
		f.Close()
	} else if !*updateDigests {
		t.Fatalf("%s: %v", path, err)
	}
	got := map[string]string{}
	var keys []string
	for _, c := range digestCases {
		snap := benchSnapshot(c.nodes, c.pending)
		for _, p := range digestPolicies {
			key := fmt.Sprintf("%s/nodes=%d/pending=%d", p.name, c.nodes, c.pending)
			keys = append(keys, key)
			if c.large && !*digestLarge {
				if v, ok := want[key]; ok {
					got[key] = v
				}
				continue
			}
			d, err := New(p.cfg).Step(snap)
			if err != nil {
				t.Fatalf("%s: %v", key, err)
			}
			var buf bytes.Buffer
			if err := EncodeDecision(&buf, d); err != nil {
				t.Fatalf("%s: %v", key, err)
			}
			sum := sha256.Sum256(buf.Bytes())
			got[key] = hex.EncodeToString(sum[:])
			if !*updateDigests && got[key] != want[key] {
				t.Errorf("%s: decision digest %s, want %s", key, got[key], want[key])
			}
		}
	}
	if *updateDigests {
		var out strings.Builder
		for _, k := range keys {
			if v, ok := got[k]; ok {
				fmt.Fprintf(&out, "%s %s\n", k, v)
			}
		}
		if err := os.WriteFile(path, []byte(out.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
