package scheduler

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gpusched/gpusched/topology"
)

// snapshotSeeds are FuzzDecodeStep's seeds besides the step command's
// test inputs and richSnapshot.
func snapshotSeeds() []string {
	return []string{
		snapJSON(`{"id":"A","members":2,"gpusPerMember":4}`, `{"id":"B","gpusPerMember":8,"tier":0}`,
			`{"id":"R","gpusPerMember":4,"state":"running","timeLimit":"1h","started":"2026-12-01T00:00:00Z","allocation":[{"node":"n1","gpus":[0,1,2,3]}]}`),
		`{"now":"2026-12-02T00:00:00Z"}`,
		// Levels declared, no nodes, a job that requires one: no domain.
		`{"now":"2026-12-02T00:00:00Z","cluster":{"levels":["spine"]},"jobs":[{"id":"a","gpusPerMember":1,"topology":{"required":"spine"}}]}`,
		// Scalars after objects in lists (once a panic), objects and
		// arrays of the wrong type, and nulls.
		snapJSON(`{"id":"R","gpusPerMember":1,"state":"running","allocation":[{"node":"n0","gpus":[0]},3]}`),
		`{"cluster":{"nodes":[{},1]},"now":5}`,
		`{"cluster":{"nodes":[[{}],null]},"now":true}`,
		`{"now":"2026-12-02T00:00:00Z","cluster":{"nodes":[{"name":"n0","gpus":8,"unhealthyGPUs":[{},1]}]}}`,
		`{"now":"2026-12-02T00:00:00Z","cluster":{"nodes":[{"name":"n0","gpus":8,"unhealthyGPUs":[0,null]}]}}`,
		snapJSON(`{"id":"R","gpusPerMember":1,"state":"running","allocation":[{"node":"n0","gpus":[null]}]}`),
		snapJSON(`{"id":"A","gpusPerMember":1,"tier":null,"members":null}`),
		`{"now":"2026-12-02T00:00:00Z","cluster":null}`,
		`null`,
	}
}

// policySeeds are FuzzDecodePolicy's seeds besides the step command's
// test inputs.
var policySeeds = []string{
	richPolicy, `{}`, `null`, `{"backfill":null}`, `{"backfill":[],"reservations":3}`,
	`{"preemption":{"matrix":[[false],{}],"disabled":1}}`, `{"preemption":{"matrix":[[false,null],[false,false]]}}`,
	`{"preemption":{"matrix":[{},3]},"order":5}`, `{"fairshare":{"weights":{"age":{}},"halfLife":"1h"}}`,
}

// FuzzDecodeStep feeds arbitrary bytes to DecodeSnapshot and every valid
// snapshot to Step under a policy chosen by mode. Decoding and Step never
// panic, decoding errors are *ValidationError (their messages may quote
// names with line breaks; the step command escapes those), Step accepts every snapshot
// DecodeSnapshot accepts and leaves it unmodified, and its decision passes
// checkDecision.
func FuzzDecodeStep(f *testing.F) {
	for _, data := range fuzzSeeds(f, "*.json") {
		for _, mode := range []uint8{0, 1, 2, 3, 9, 0x21, 0x41} {
			f.Add(data, mode)
		}
	}
	for _, data := range snapshotSeeds() {
		f.Add([]byte(data), uint8(0))
	}
	f.Add([]byte(richSnapshot), uint8(0x41))
	f.Fuzz(func(t *testing.T, data []byte, mode uint8) {
		snap, err := DecodeSnapshot(bytes.NewReader(data))
		if err != nil {
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("decode error of type %T: %v", err, err)
			}
			return
		}
		cfg := Config{
			Backfill:         BackfillMode(mode % 3),
			BackfillOrder:    BackfillOrder(mode / 3 % 2),
			IgnoreTimeLimits: mode&8 != 0,
			Reservations:     int(mode >> 4),
		}
		if mode&0x40 != 0 {
			cfg.Horizon = time.Hour
		}
		var before bytes.Buffer
		if err := EncodeSnapshot(&before, snap); err != nil {
			t.Fatal(err)
		}
		d, err := New(cfg).Step(snap)
		if err != nil {
			t.Fatalf("Step rejects a snapshot that DecodeSnapshot accepts: %v", err)
		}
		var after bytes.Buffer
		if err := EncodeSnapshot(&after, snap); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(before.Bytes(), after.Bytes()) {
			t.Fatalf("Step modified the snapshot")
		}
		if err := checkDecision(snap, d); err != nil {
			t.Fatalf("policy %+v: %v", cfg, err)
		}
		if err := EncodeDecision(&after, d); err != nil {
			t.Fatal(err)
		}
	})
}

// FuzzDecodePolicy feeds arbitrary bytes to DecodeConfig: it never
// panics, its errors are one line starting with "config: ", and a policy
// file it accepts gives a Config that Step accepts too.
func FuzzDecodePolicy(f *testing.F) {
	for _, data := range fuzzSeeds(f, "*.policy.json") {
		f.Add(data)
	}
	for _, s := range policySeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := DecodeConfig(bytes.NewReader(data))
		if err != nil {
			if msg := err.Error(); !strings.HasPrefix(msg, "config: ") || strings.ContainsAny(msg, "\r\n") {
				t.Fatalf("error not one line starting with config: %q", msg)
			}
			return
		}
		if err := New(cfg).Validate(&Snapshot{Now: time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)}); err != nil {
			t.Fatalf("Step rejects a policy file that DecodeConfig accepts: %v", err)
		}
	})
}

// checkDecision checks the invariants of a decision for a valid snapshot:
//   - no GPU is allocated twice across running, evicting and newly placed
//     jobs;
//   - every placement lies on ready nodes, on healthy GPUs in range, of the
//     requested type, holds exactly members × gpusPerMember GPUs with each
//     node's share a multiple of gpusPerMember, and keeps to the required
//     topology level; reservations have the same shape;
//   - every pending job appears exactly once among placements,
//     reservations and pending, and no other job does;
//   - every running job appears at most once in evictions and is never
//     placed; only running jobs are evicted;
//   - each list is sorted by job ID.
func checkDecision(s *Snapshot, d *Decision) error {
	if d == nil {
		return errors.New("nil decision")
	}
	jobs := make(map[string]*Job, len(s.Jobs))
	for i := range s.Jobs {
		jobs[s.Jobs[i].ID] = &s.Jobs[i]
	}
	nodes := make(map[string]*topology.Node, len(s.Cluster.Nodes))
	for i := range s.Cluster.Nodes {
		nodes[s.Cluster.Nodes[i].Name] = &s.Cluster.Nodes[i]
	}
	for _, l := range []struct {
		name string
		ids  []string
	}{
		{"placements", ids(d.Placements, func(p Placement) string { return p.Job })},
		{"evictions", ids(d.Evictions, func(e Eviction) string { return e.Job })},
		{"reservations", ids(d.Reservations, func(r Reservation) string { return r.Job })},
		{"pending", ids(d.Pending, func(w Wait) string { return w.Job })},
	} {
		for i := 1; i < len(l.ids); i++ {
			if l.ids[i-1] >= l.ids[i] {
				return fmt.Errorf("%s not sorted by job ID: %q before %q", l.name, l.ids[i-1], l.ids[i])
			}
		}
	}

	held := make(map[string]topology.GPUSet)
	take := func(who string, a topology.Allocation) error {
		for _, ng := range a {
			for _, g := range ng.GPUs {
				if held[ng.Node].Has(g) {
					return fmt.Errorf("%s: GPU %d of node %q is allocated twice", who, g, ng.Node)
				}
				held[ng.Node] |= topology.SetOf(g)
			}
		}
		return nil
	}
	for i := range s.Jobs {
		if j := &s.Jobs[i]; j.State != Pending {
			if err := take(fmt.Sprintf("held job %q", j.ID), j.Allocation); err != nil {
				return err
			}
		}
	}

	seen := make(map[string]string)
	once := func(list, id string) (*Job, error) {
		j := jobs[id]
		if j == nil {
			return nil, fmt.Errorf("%s: unknown job %q", list, id)
		}
		if j.State != Pending {
			return nil, fmt.Errorf("%s: job %q is %s, not pending", list, id, j.State)
		}
		if prev, dup := seen[id]; dup {
			return nil, fmt.Errorf("%s: job %q is also in %s", list, id, prev)
		}
		seen[id] = list
		return j, nil
	}
	for _, p := range d.Placements {
		j, err := once("placements", p.Job)
		if err != nil {
			return err
		}
		if err := checkShape(s, nodes, j, p.Allocation); err != nil {
			return fmt.Errorf("placement of %q: %w", j.ID, err)
		}
		if err := take(fmt.Sprintf("placement of %q", j.ID), p.Allocation); err != nil {
			return err
		}
	}
	for _, r := range d.Reservations {
		j, err := once("reservations", r.Job)
		if err != nil {
			return err
		}
		if err := checkShape(s, nodes, j, r.Allocation); err != nil {
			return fmt.Errorf("reservation of %q: %w", j.ID, err)
		}
		if r.Start.Before(s.Now) {
			return fmt.Errorf("reservation of %q starts at %s, before now", j.ID, r.Start)
		}
	}
	for _, w := range d.Pending {
		if _, err := once("pending", w.Job); err != nil {
			return err
		}
		if w.Reason == "" {
			return fmt.Errorf("pending job %q has no reason", w.Job)
		}
	}
	for i := range s.Jobs {
		if j := &s.Jobs[i]; j.State == Pending && seen[j.ID] == "" {
			return fmt.Errorf("pending job %q is lost: not placed, reserved or pending", j.ID)
		}
	}
	evicted := make(map[string]bool)
	for _, e := range d.Evictions {
		j := jobs[e.Job]
		switch {
		case j == nil:
			return fmt.Errorf("evictions: unknown job %q", e.Job)
		case j.State != Running:
			return fmt.Errorf("evictions: job %q is %s, not running", e.Job, j.State)
		case evicted[e.Job]:
			return fmt.Errorf("evictions: job %q twice", e.Job)
		}
		evicted[e.Job] = true
		switch e.Reason {
		case EvictPreempted, EvictTimeLimit, EvictNodeDown:
		default:
			return fmt.Errorf("evictions: job %q: unknown reason %q", e.Job, e.Reason)
		}
	}
	return nil
}

// checkShape checks that a is a valid allocation for j on ready nodes.
func checkShape(s *Snapshot, nodes map[string]*topology.Node, j *Job, a topology.Allocation) error {
	per := make(map[string]int)
	var domain string
	for _, ng := range a {
		n := nodes[ng.Node]
		if n == nil {
			return fmt.Errorf("unknown node %q", ng.Node)
		}
		if n.State != topology.Ready {
			return fmt.Errorf("node %q is %s", n.Name, n.State)
		}
		if j.GPUType != "" && n.GPUType != j.GPUType {
			return fmt.Errorf("node %q has GPU type %q, want %q", n.Name, n.GPUType, j.GPUType)
		}
		if l := j.Topology.Required; l != "" {
			// The domain path of the required level, outermost first.
			var path []string
			for _, lv := range s.Cluster.Levels {
				path = append(path, n.Domains[lv])
				if lv == l {
					break
				}
			}
			p := strings.Join(path, "/")
			if domain == "" {
				domain = p
			} else if p != domain {
				return fmt.Errorf("members in %s domains %q and %q", l, domain, p)
			}
		}
		for _, g := range ng.GPUs {
			if g < 0 || g >= n.GPUs {
				return fmt.Errorf("GPU %d of node %q out of range", g, n.Name)
			}
			if slices.Contains(n.Unhealthy, g) {
				return fmt.Errorf("GPU %d of node %q is unhealthy", g, n.Name)
			}
		}
		per[ng.Node] += len(ng.GPUs)
	}
	total := 0
	for name, k := range per {
		if k%j.GPUsPerMember != 0 {
			return fmt.Errorf("%d GPUs on node %q, not a multiple of %d", k, name, j.GPUsPerMember)
		}
		total += k
	}
	if total != j.GPUs() {
		return fmt.Errorf("%d GPUs, want %d×%d", total, j.Members, j.GPUsPerMember)
	}
	return nil
}

func ids[T any](list []T, id func(T) string) []string {
	out := make([]string, len(list))
	for i, x := range list {
		out[i] = id(x)
	}
	return out
}

// fuzzSeeds returns the contents of the step command's test inputs that
// match pattern.
func fuzzSeeds(f testing.TB, pattern string) [][]byte {
	paths, err := filepath.Glob(filepath.Join("../examples/step/testdata", pattern))
	if err != nil {
		f.Fatal(err)
	}
	var out [][]byte
	for _, path := range paths {
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, data)
	}
	return out
}

// FuzzRoundTripExplain: a snapshot that decodes survives EncodeSnapshot
// and DecodeSnapshot unchanged, byte for byte on the second pass, Step
// decides the same on both, and Explain answers for its jobs without an
// error. go test runs the seeds; go test -fuzz explores.
func FuzzRoundTripExplain(f *testing.F) {
	for _, data := range fuzzSeeds(f, "*.json") {
		f.Add(data)
	}
	for _, data := range snapshotSeeds() {
		f.Add([]byte(data))
	}
	f.Add([]byte(richSnapshot))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := DecodeSnapshot(bytes.NewReader(data))
		if err != nil {
			return
		}
		var a, b bytes.Buffer
		if err := EncodeSnapshot(&a, s); err != nil {
			t.Fatal(err)
		}
		s2, err := DecodeSnapshot(bytes.NewReader(a.Bytes()))
		if err != nil {
			t.Fatalf("re-decode: %v\n%s", err, a.String())
		}
		if err := EncodeSnapshot(&b, s2); err != nil {
			t.Fatal(err)
		}
		if a.String() != b.String() {
			t.Fatalf("round trip changed:\n%s\n%s", a.String(), b.String())
		}
		d1, err1 := New(Config{}).Step(s)
		d2, err2 := New(Config{}).Step(s2)
		if err1 != nil || err2 != nil {
			t.Fatal(err1, err2)
		}
		var e1, e2 bytes.Buffer
		if err := EncodeDecision(&e1, d1); err != nil {
			t.Fatal(err)
		}
		if err := EncodeDecision(&e2, d2); err != nil {
			t.Fatal(err)
		}
		if e1.String() != e2.String() {
			t.Fatalf("decisions differ after round trip:\n%s\n%s", e1.String(), e2.String())
		}
		for i := range min(len(s.Jobs), 5) {
			if _, err := New(Config{}).Explain(s, s.Jobs[i].ID); err != nil {
				t.Fatal(err)
			}
		}
	})
}
