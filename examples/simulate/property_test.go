package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"pgregory.net/rapid"
)

// TestPropertySWFRuns runs the command on random small SWF logs with
// random flags. Every run exits 0 with one JSON object on stdout and
// nothing on stderr; every data line is either a simulated job or
// counted once among the skipped, by cause; every simulated job ends in
// one outcome; the waits are ordered (median and p95 at most the
// maximum, the mean too) and utilization lies in [0, 1]. Shuffling the
// data lines of a log whose submit times differ changes nothing: the
// output is byte for byte the same.
func TestPropertySWFRuns(t *testing.T) {
	dir := t.TempDir()
	rapid.Check(t, func(rt *rapid.T) {
		maxProcs := rapid.IntRange(1, 6).Draw(rt, "maxProcs")
		n := rapid.IntRange(0, 12).Draw(rt, "records")
		submits := rapid.Permutation(indicesFrom(n)).Draw(rt, "submits") // distinct submit times
		var lines []string
		for i := range n {
			procs := rapid.IntRange(-1, maxProcs+2).Draw(rt, "procs")
			run := rapid.IntRange(-1, 30).Draw(rt, "run")
			req := rapid.IntRange(-1, 40).Draw(rt, "reqTime")
			lines = append(lines, fmt.Sprintf("%d %d -1 %d %d -1 -1 %d %d -1 1 1 %d -1 -1 -1 -1 -1",
				i+1, 3*submits[i], run, procs, procs, req, rapid.IntRange(-1, 2).Draw(rt, "group")))
		}
		args := []string{"-json", "-backfill", rapid.SampledFrom([]string{"easy", "conservative", "none"}).Draw(rt, "backfill"),
			"-backfill-order", rapid.SampledFrom([]string{"priority", "shortest"}).Draw(rt, "order")}
		switch rapid.IntRange(0, 2).Draw(rt, "size") {
		case 1:
			args = append(args, "-gpus", fmt.Sprint(rapid.IntRange(1, 6).Draw(rt, "gpus")))
		case 2:
			args = append(args, "-nodes", fmt.Sprint(rapid.IntRange(1, 3).Draw(rt, "nodes")),
				"-gpus-per-node", fmt.Sprint(rapid.IntRange(1, 4).Draw(rt, "perNode")))
		}
		limit := rapid.IntRange(0, n+1).Draw(rt, "jobs")
		if limit > 0 {
			args = append(args, "-jobs", fmt.Sprint(limit))
		}
		runLog := func(name string, lines []string) (string, map[string]any) {
			path := filepath.Join(dir, name)
			text := fmt.Sprintf("; MaxProcs: %d\n%s\n", maxProcs, strings.Join(lines, "\n"))
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				rt.Fatal(err)
			}
			var out, errb bytes.Buffer
			code := run(append([]string{"-trace", path}, args...), &out, &errb, false, fixedClock())
			if code != 0 || errb.Len() != 0 {
				rt.Fatalf("%v on\n%s: exit %d, stderr %q", args, text, code, errb.String())
			}
			got := out.String() // before the decoder drains the buffer
			var m map[string]any
			dec := json.NewDecoder(&out)
			if err := dec.Decode(&m); err != nil || dec.More() {
				rt.Fatalf("stdout is not one JSON object: %v", err)
			}
			return got, m
		}
		out, m := runLog("a.swf", lines)
		num := func(k string) float64 {
			v, ok := m[k].(float64)
			if !ok {
				rt.Fatalf("key %q: %v is not a number", k, m[k])
			}
			return v
		}
		for _, k := range []string{"jobs", "skipped", "makespan", "utilization", "meanWait", "meanBoundedSlowdown", "maxWait", "stepP50", "stepP99"} {
			num(k)
		}
		skippedBy := 0.0
		for _, v := range m["skippedBy"].(map[string]any) {
			skippedBy += v.(float64)
		}
		if skippedBy != num("skipped") {
			rt.Fatalf("skippedBy %v sums to %v, skipped %v", m["skippedBy"], skippedBy, num("skipped"))
		}
		if limit == 0 || limit >= n {
			if got := num("jobs") + num("skipped"); got != float64(n) {
				rt.Fatalf("%d records, %v jobs and %v skipped", n, num("jobs"), num("skipped"))
			}
		}
		if got := num("completed") + num("killedAtLimit") + num("unfinished"); got != num("jobs") {
			rt.Fatalf("%v jobs, %v completed, %v killed, %v unfinished", num("jobs"), num("completed"), num("killedAtLimit"), num("unfinished"))
		}
		if num("medianWait") > num("maxWait") || num("p95Wait") > num("maxWait") || num("meanWait") > num("maxWait") ||
			num("medianWait") < 0 || num("utilization") < 0 || num("utilization") > 1 {
			rt.Fatalf("inconsistent figures: %s", out)
		}
		if num("completed")+num("killedAtLimit") > 0 && (num("meanBoundedSlowdown") < 1 || num("maxBoundedSlowdown") < num("meanBoundedSlowdown")) {
			rt.Fatalf("bounded slowdowns: %s", out)
		}
		shuffled := rapid.Permutation(lines).Draw(rt, "shuffled")
		if again, _ := runLog("b.swf", shuffled); again != out {
			rt.Fatalf("shuffled lines give\n%s\nwant\n%s", again, out)
		}
	})
}

func indicesFrom(n int) []int {
	ix := make([]int, n)
	for i := range ix {
		ix[i] = i
	}
	return ix
}
