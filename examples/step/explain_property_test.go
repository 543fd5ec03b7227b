package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/gpusched/gpusched/internal/gen"
	"github.com/gpusched/gpusched/scheduler"
)

// TestPropertyExplainFlag: for a random snapshot and policy file, the
// command's -explain output, in JSON and with -text, is what
// Scheduler.Explain says of the snapshot it reads under that policy.
func TestPropertyExplainFlag(t *testing.T) {
	policy := filepath.Join(t.TempDir(), "policy.json")
	rapid.Check(t, func(rt *rapid.T) {
		s := gen.Snapshot(rt)
		if len(s.Jobs) == 0 {
			return
		}
		id := rapid.SampledFrom(s.Jobs).Draw(rt, "job").ID
		pf := rapid.SampledFrom([]string{`{}`, `{"backfill": "conservative"}`, `{"backfill": "none"}`,
			`{"backfill": "easy", "reservations": 3, "backfillOrder": "shortest"}`, `{"order": "tier", "enforceTimeLimits": false}`,
			`{"fairshare": {"weights": {"fairshare": 1, "age": 1000, "size": 0}}}`}).Draw(rt, "policy")
		if err := os.WriteFile(policy, []byte(pf), 0o600); err != nil {
			rt.Fatalf("write policy: %v", err)
		}
		var in bytes.Buffer
		if err := scheduler.EncodeSnapshot(&in, s); err != nil {
			rt.Fatalf("encode: %v", err)
		}
		cfg, err := scheduler.DecodeConfig(strings.NewReader(pf))
		if err != nil {
			rt.Fatalf("policy %s: %v", pf, err)
		}
		sched := scheduler.New(cfg)
		snap, err := sched.DecodeSnapshot(bytes.NewReader(in.Bytes()))
		if err != nil {
			rt.Fatalf("decode: %v", err)
		}
		want, err := sched.Explain(snap, id)
		if err != nil {
			rt.Fatalf("Explain(%s): %v", id, err)
		}
		var out, errb bytes.Buffer
		if code := run([]string{"-config", policy, "-explain", id}, bytes.NewReader(in.Bytes()), &out, &errb); code != 0 {
			rt.Fatalf("exit %d: %s", code, errb.String())
		}
		var got, ref any
		wantJSON, err := json.Marshal(want)
		if err != nil {
			rt.Fatalf("marshal: %v", err)
		}
		if err := json.Unmarshal(out.Bytes(), &got); err != nil {
			rt.Fatalf("output %q: %v", out.String(), err)
		}
		if err := json.Unmarshal(wantJSON, &ref); err != nil {
			rt.Fatalf("unmarshal: %v", err)
		}
		if !reflect.DeepEqual(got, ref) {
			rt.Fatalf("-explain %s under %s:\n%s\nwant %s", id, pf, out.String(), wantJSON)
		}
		out.Reset()
		if code := run([]string{"-config", policy, "-explain", id, "-text"}, bytes.NewReader(in.Bytes()), &out, &errb); code != 0 {
			rt.Fatalf("exit %d: %s", code, errb.String())
		}
		if out.String() != want.String() {
			rt.Fatalf("-explain %s -text under %s:\n%s\nwant\n%s", id, pf, out.String(), want.String())
		}
	})
}
