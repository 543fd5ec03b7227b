package scheduler_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/topology"
)

// Scenario files (testdata/scenarios/*.txt) drive a small host through
// a script, in the style of data-driven interaction tests. Each line is
// a comment (#...), blank, or a command. A command that prints something
// is followed by a line "----", the lines it prints and a blank line; a
// command that prints nothing has no such block. Commands:
//
//	cluster levels=spine,leaf
//	node n0 gpus=8 [type=H100] [spine=s0 leaf=l0] [state=draining] [unhealthy=6,7]
//	     [cpu=64000] [mem=524288]   (CPU in millicores, memory in MiB)
//	nodes n 16 gpus=8 ...        n00..n15, same options (a node line may redefine a node)
//	team a share=40 [usage=86400] [parent=x] [quota=100/20]
//	job C [tier=1] [members=12] gpus=8 [type=H100] [limit=24h] [grace=5m]
//	      [required=spine] [preferred=leaf] [spread] [group=web] [spreadlevel=leaf]
//	      [submitted=-1h] [team=a] [kind=inference] [cpu=8000] [mem=65536] (per member)
//	run J on=n0:0-7,n1:0-3 [started=-2h]
//	config [backfill=easy] [reservations=1] [order=tier|multifactor]
//	       [enforceTimeLimits=false] [backfillOrder=shortest] [preemption=off]
//	       [reserveMinGPUs=16]  (a ReservationPolicy: reserve only gangs this big)
//	       [plan=on]   (each snapshot carries the last applied decision's reservations)
//	       [maxEvictedGPUs=16] [minRuntime=10m]  (the "preemption" keys)
//	step          prints the decision of Step at the current time
//	wake          prints the last decision's nextWake (+2h, or none)
//	apply         the last decision, as a host would: placements run from now,
//	              evictions are evicting from now, reservations are the plan
//	advance 2h    moves the clock; evicting jobs whose grace has passed are
//	              requeued as pending or removed (printed)
//	finish J      J ends and is removed
//
// Times given as -1h are relative to the current time; times printed as
// +12h are relative to the start of the scenario, 2026-12-02T00:00:00Z.
// Defaults follow the JSON contract: tier 3, members 1, training, pack,
// submitted now, policy as Config{} (multifactor order). Run with -rewrite
// to regenerate the expected outputs in place.

var rewrite = flag.Bool("rewrite", false, "rewrite the expected outputs of testdata/scenarios")

var scenarioStart = time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)

func TestScenario(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "scenarios", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no scenario files")
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".txt"), func(t *testing.T) { runScenarioFile(t, f) })
	}
}

// scenItem is one line of a scenario file: a comment or blank line kept
// as it is, or a command with its expected output.
type scenItem struct {
	text   string
	cmd    bool
	line   int
	want   []string
	hasOut bool
}

func parseScenario(data string) []scenItem {
	lines := strings.Split(strings.TrimRight(data, "\n"), "\n")
	var items []scenItem
	for i := 0; i < len(lines); {
		l := lines[i]
		if tl := strings.TrimSpace(l); tl == "" || strings.HasPrefix(tl, "#") {
			items = append(items, scenItem{text: l, line: i + 1})
			i++
			continue
		}
		it := scenItem{text: l, cmd: true, line: i + 1}
		i++
		if i < len(lines) && lines[i] == "----" {
			it.hasOut = true
			for i++; i < len(lines) && lines[i] != ""; i++ {
				it.want = append(it.want, lines[i])
			}
			i++ // the blank line that ends the block
		}
		items = append(items, it)
	}
	return items
}

func formatScenario(items []scenItem, outs map[int][]string) string {
	var lines []string
	for _, it := range items {
		lines = append(lines, it.text)
		if out := outs[it.line]; it.cmd && len(out) > 0 {
			lines = append(lines, "----")
			lines = append(lines, out...)
			lines = append(lines, "")
		}
	}
	var b strings.Builder
	blank := false
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			if !blank {
				b.WriteString("\n")
			}
			blank = true
			continue
		}
		blank = false
		b.WriteString(l + "\n")
	}
	return strings.TrimRight(b.String(), "\n") + "\n"
}

func runScenarioFile(t *testing.T, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	items := parseScenario(string(data))
	w := &scenWorld{now: scenarioStart, requeue: map[string]bool{}, goneAt: map[string]time.Time{}}
	outs := map[int][]string{}
	for _, it := range items {
		if !it.cmd {
			continue
		}
		out, err := w.exec(it.text)
		if err != nil {
			t.Fatalf("%s:%d: %s: %v", path, it.line, it.text, err)
		}
		outs[it.line] = out
		if !*rewrite && !slices.Equal(out, it.want) {
			t.Errorf("%s:%d: %s: output differs (-want +got):\n%s", path, it.line, it.text, scenDiff(it.want, out))
		}
	}
	if *rewrite {
		if err := os.WriteFile(path, []byte(formatScenario(items, outs)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// lineDiff is a line diff by longest common subsequence.
func scenDiff(a, b []string) string {
	n, m := len(a), len(b)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var s strings.Builder
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && a[i] == b[j]:
			s.WriteString("  " + a[i] + "\n")
			i, j = i+1, j+1
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			s.WriteString("- " + a[i] + "\n")
			i++
		default:
			s.WriteString("+ " + b[j] + "\n")
			j++
		}
	}
	return s.String()
}

// scenWorld is the host's state: the clock, the cluster, the teams and jobs.
type scenWorld struct {
	now     time.Time
	cluster topology.Cluster
	teams   []scheduler.Team
	jobs    []scheduler.Job
	cfg     scheduler.Config
	last    *scheduler.Decision
	// usePlan makes each snapshot carry the reservations of the last
	// decision applied (plan).
	usePlan bool
	plan    []scheduler.Reservation
	requeue map[string]bool
	goneAt  map[string]time.Time
}

// args are a command's words: positional ones and key=value pairs; a
// bare word after the positional ones is a flag (key with value "").
type scenArgs struct {
	pos []string
	kv  map[string]string
}

func parseScenArgs(words []string, npos int) (*scenArgs, error) {
	if len(words) < npos {
		return nil, fmt.Errorf("want %d arguments, got %d", npos, len(words))
	}
	a := &scenArgs{pos: words[:npos], kv: map[string]string{}}
	for _, w := range words[npos:] {
		k, v, _ := strings.Cut(w, "=")
		if _, dup := a.kv[k]; dup {
			return nil, fmt.Errorf("%s given twice", k)
		}
		a.kv[k] = v
	}
	return a, nil
}

// take removes and returns the value of key.
func (a *scenArgs) take(key string) (string, bool) {
	v, ok := a.kv[key]
	delete(a.kv, key)
	return v, ok
}

func (a *scenArgs) int(key string, def int) (int, error) {
	v, ok := a.take(key)
	if !ok {
		return def, nil
	}
	return strconv.Atoi(v)
}

func (a *scenArgs) dur(key string) (time.Duration, error) {
	v, ok := a.take(key)
	if !ok {
		return 0, nil
	}
	return time.ParseDuration(v)
}

// done reports keys nobody took.
func (a *scenArgs) done() error {
	if len(a.kv) == 0 {
		return nil
	}
	keys := make([]string, 0, len(a.kv))
	for k := range a.kv {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return fmt.Errorf("unknown arguments %s", strings.Join(keys, ", "))
}

func (w *scenWorld) exec(line string) ([]string, error) {
	if i := strings.Index(line, " #"); i >= 0 {
		line = line[:i]
	}
	words := strings.Fields(line)
	npos := map[string]int{"cluster": 0, "node": 1, "nodes": 2, "team": 1, "job": 1, "run": 1,
		"config": 0, "step": 0, "wake": 0, "apply": 0, "advance": 1, "finish": 1}
	n, ok := npos[words[0]]
	if !ok {
		return nil, fmt.Errorf("unknown command %q", words[0])
	}
	a, err := parseScenArgs(words[1:], n)
	if err != nil {
		return nil, err
	}
	var out []string
	switch words[0] {
	case "cluster":
		if v, ok := a.take("levels"); ok {
			w.cluster.Levels = strings.Split(v, ",")
		}
	case "node":
		err = w.node(a, []string{a.pos[0]})
	case "nodes":
		count, cerr := strconv.Atoi(a.pos[1])
		if cerr != nil {
			return nil, cerr
		}
		width := len(strconv.Itoa(count - 1))
		var names []string
		for i := range count {
			names = append(names, fmt.Sprintf("%s%0*d", a.pos[0], width, i))
		}
		err = w.node(a, names)
	case "team":
		err = w.team(a)
	case "job":
		err = w.job(a)
	case "run":
		err = w.run(a)
	case "config":
		err = w.config(a)
	case "step":
		out, err = w.step()
	case "wake":
		if w.last == nil {
			return nil, fmt.Errorf("no decision")
		}
		out = []string{"nextWake none"}
		if !w.last.NextWake.IsZero() {
			out = []string{"nextWake " + scenRel(w.last.NextWake)}
		}
	case "apply":
		err = w.apply()
	case "advance":
		out, err = w.advance(a.pos[0])
	case "finish":
		if i := w.find(a.pos[0]); i >= 0 {
			w.jobs = slices.Delete(w.jobs, i, i+1)
		} else {
			err = fmt.Errorf("no job %q", a.pos[0])
		}
	}
	if err != nil {
		return nil, err
	}
	return out, a.done()
}

func (w *scenWorld) node(a *scenArgs, names []string) error {
	gpus, err := a.int("gpus", 8)
	if err != nil {
		return err
	}
	typ, _ := a.take("type")
	doms := map[string]string{}
	for _, l := range w.cluster.Levels {
		if v, ok := a.take(l); ok {
			doms[l] = v
		}
	}
	st, _ := a.take("state")
	state, err := topology.ParseNodeState(st)
	if err != nil {
		return err
	}
	var bad []int
	if v, ok := a.take("unhealthy"); ok {
		for _, s := range strings.Split(v, ",") {
			g, err := strconv.Atoi(s)
			if err != nil {
				return err
			}
			bad = append(bad, g)
		}
	}
	cpu, err := a.int("cpu", 0)
	if err != nil {
		return err
	}
	mem, err := a.int("mem", 0)
	if err != nil {
		return err
	}
	for _, name := range names {
		nd := topology.Node{Name: name, GPUs: gpus, GPUType: typ, Domains: doms, State: state, Unhealthy: bad, CPUMillis: cpu, MemoryMiB: mem}
		if i := slices.IndexFunc(w.cluster.Nodes, func(n topology.Node) bool { return n.Name == name }); i >= 0 {
			w.cluster.Nodes[i] = nd
		} else {
			w.cluster.Nodes = append(w.cluster.Nodes, nd)
		}
	}
	return nil
}

func (w *scenWorld) team(a *scenArgs) error {
	t := scheduler.Team{Name: a.pos[0], Share: 1}
	for key, dst := range map[string]*float64{"share": &t.Share, "usage": &t.Usage} {
		if v, ok := a.take(key); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return err
			}
			*dst = f
		}
	}
	t.Parent, _ = a.take("parent")
	if v, ok := a.take("quota"); ok {
		g, b, _ := strings.Cut(v, "/")
		q := &scheduler.Quota{}
		var err error
		if q.GPUs, err = strconv.Atoi(g); err != nil {
			return err
		}
		if b != "" {
			if q.BorrowLimit, err = strconv.Atoi(b); err != nil {
				return err
			}
		}
		t.Quota = q
	}
	if i := slices.IndexFunc(w.teams, func(x scheduler.Team) bool { return x.Name == t.Name }); i >= 0 {
		w.teams[i] = t
	} else {
		w.teams = append(w.teams, t)
	}
	return nil
}

func (w *scenWorld) job(a *scenArgs) error {
	if w.find(a.pos[0]) >= 0 {
		return fmt.Errorf("job %q exists", a.pos[0])
	}
	j := scheduler.Job{ID: a.pos[0], Submitted: w.now}
	var err error
	if v, ok := a.take("tier"); ok { // absent: unset, the lowest tier
		k, err := strconv.Atoi(v)
		if err != nil {
			return err
		}
		j.Tier = scheduler.TierN(k)
	}
	if j.Members, err = a.int("members", 1); err != nil {
		return err
	}
	if j.GPUsPerMember, err = a.int("gpus", 1); err != nil {
		return err
	}
	if j.TimeLimit, err = a.dur("limit"); err != nil {
		return err
	}
	if j.CPUMillis, err = a.int("cpu", 0); err != nil {
		return err
	}
	if j.MemoryMiB, err = a.int("mem", 0); err != nil {
		return err
	}
	if j.CheckpointGrace, err = a.dur("grace"); err != nil {
		return err
	}
	if v, ok := a.take("submitted"); ok {
		d, err := time.ParseDuration(v)
		if err != nil {
			return err
		}
		j.Submitted = w.now.Add(d)
	}
	j.GPUType, _ = a.take("type")
	j.Topology.Required, _ = a.take("required")
	j.Topology.Preferred, _ = a.take("preferred")
	j.Group, _ = a.take("group")
	j.SpreadLevel, _ = a.take("spreadlevel")
	j.Team, _ = a.take("team")
	if _, ok := a.take("spread"); ok {
		j.Placement = scheduler.Spread
	}
	if v, ok := a.take("eligible"); ok { // eligible=n0,n3; eligible= is no node
		j.EligibleNodes = []string{}
		if v != "" {
			j.EligibleNodes = strings.Split(v, ",")
		}
	}
	if v, ok := a.take("kind"); ok {
		switch v {
		case "inference":
			j.Kind = scheduler.Inference
		case "training":
		default:
			return fmt.Errorf("unknown kind %q", v)
		}
	}
	w.jobs = append(w.jobs, j)
	return nil
}

func (w *scenWorld) find(id string) int {
	return slices.IndexFunc(w.jobs, func(j scheduler.Job) bool { return j.ID == id })
}

// run marks a job running on an allocation written n0:0-7,n1:0-3.
func (w *scenWorld) run(a *scenArgs) error {
	i := w.find(a.pos[0])
	if i < 0 {
		return fmt.Errorf("no job %q", a.pos[0])
	}
	j := &w.jobs[i]
	on, _ := a.take("on")
	var alloc topology.Allocation
	for _, part := range strings.Split(on, ",") {
		node, rng, ok := strings.Cut(part, ":")
		if !ok {
			return fmt.Errorf("bad allocation %q (want node:first-last)", part)
		}
		lo, hi, isRange := strings.Cut(rng, "-")
		first, err := strconv.Atoi(lo)
		if err != nil {
			return err
		}
		last := first
		if isRange {
			if last, err = strconv.Atoi(hi); err != nil {
				return err
			}
		}
		var gpus []int
		for g := first; g <= last; g++ {
			gpus = append(gpus, g)
		}
		alloc = append(alloc, topology.NodeGPUs{Node: node, GPUs: gpus})
	}
	j.State, j.Allocation, j.Started = scheduler.Running, alloc.Canonical(), w.now
	if v, ok := a.take("started"); ok {
		d, err := time.ParseDuration(v)
		if err != nil {
			return err
		}
		j.Started = w.now.Add(d)
	}
	return nil
}

// config sets the policy through the policy-file decoder; keys not given
// keep their defaults.
func (w *scenWorld) config(a *scenArgs) error {
	policy := map[string]any{}
	if v, ok := a.take("backfill"); ok {
		policy["backfill"] = v
	}
	if v, ok := a.take("backfillOrder"); ok {
		policy["backfillOrder"] = v
	}
	if v, ok := a.take("reservations"); ok {
		k, err := strconv.Atoi(v)
		if err != nil {
			return err
		}
		policy["reservations"] = k
	}
	if v, ok := a.take("enforceTimeLimits"); ok {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return err
		}
		policy["enforceTimeLimits"] = b
	}
	preemption := map[string]any{}
	if v, ok := a.take("maxEvictedGPUs"); ok {
		n, err := strconv.Atoi(v)
		if err != nil {
			return err
		}
		preemption["maxEvictedGPUs"] = n
	}
	if v, ok := a.take("minRuntime"); ok {
		preemption["minRuntime"] = v
	}
	if len(preemption) > 0 {
		policy["preemption"] = preemption
	}
	data, err := json.Marshal(policy)
	if err != nil {
		return err
	}
	cfg, err := scheduler.DecodeConfig(strings.NewReader(string(data)))
	if err != nil {
		return err
	}
	switch v, _ := a.take("order"); v {
	case "tier":
		cfg.Order = scheduler.TierOrder{}
	case "", "multifactor":
	default:
		return fmt.Errorf("unknown order %q", v)
	}
	switch v, _ := a.take("preemption"); v {
	case "off":
		cfg.DisablePreemption = true
	case "", "on":
	default:
		return fmt.Errorf("unknown preemption %q", v)
	}
	switch v, _ := a.take("plan"); v {
	case "on":
		w.usePlan = true
	case "", "off":
		w.usePlan = false
	default:
		return fmt.Errorf("unknown plan %q", v)
	}
	if v, ok := a.take("reserveMinGPUs"); ok {
		least, err := strconv.Atoi(v)
		if err != nil {
			return err
		}
		cfg.Reserve = scheduler.ReserveFunc(func(j *scheduler.Job, _ int) bool { return j.GPUs() >= least })
	}
	w.cfg = cfg
	return nil
}

func (w *scenWorld) snapshot() *scheduler.Snapshot {
	s := &scheduler.Snapshot{Now: w.now, Cluster: topology.Cluster{Levels: w.cluster.Levels}, Teams: slices.Clone(w.teams)}
	s.Cluster.Nodes = slices.Clone(w.cluster.Nodes)
	if w.usePlan {
		s.Plan = slices.Clone(w.plan)
	}
	for _, j := range w.jobs {
		j.Allocation = j.Allocation.Clone()
		s.Jobs = append(s.Jobs, j)
	}
	return s
}

// rel formats t relative to the start of the scenario: +12h, +2h30m, +0s.
func scenRel(t time.Time) string {
	d := t.Sub(scenarioStart)
	sign := "+"
	if d < 0 {
		sign, d = "-", -d
	}
	if d == 0 {
		return "+0s"
	}
	s := sign
	if h := d / time.Hour; h > 0 {
		s += fmt.Sprintf("%dh", h)
		d -= h * time.Hour
	}
	if m := d / time.Minute; m > 0 {
		s += fmt.Sprintf("%dm", m)
		d -= m * time.Minute
	}
	if d > 0 {
		s += d.String()
	}
	return s
}

func (w *scenWorld) step() ([]string, error) {
	d, err := scheduler.New(w.cfg).Step(w.snapshot())
	if err != nil {
		w.last = nil
		return []string{"error: " + err.Error()}, nil
	}
	w.last = d
	var out []string
	for _, p := range d.Placements {
		out = append(out, fmt.Sprintf("place %s %s", p.Job, p.Allocation.Canonical()))
	}
	for _, e := range d.Evictions {
		s := fmt.Sprintf("evict %s %s", e.Job, e.Reason)
		if e.By != "" {
			s += " by=" + e.By
		}
		s += " grace=" + e.Grace.String()
		if e.Requeue {
			s += " requeue"
		}
		out = append(out, s)
	}
	for _, r := range d.Reservations {
		out = append(out, fmt.Sprintf("reserve %s at %s %s", r.Job, scenRel(r.Start), r.Allocation.Canonical()))
	}
	for _, p := range d.Pending {
		s := fmt.Sprintf("wait %s %s: %s", p.Job, p.Reason, p.Message)
		if !p.Start.IsZero() {
			s += " (start " + scenRel(p.Start) + ")"
		}
		out = append(out, s)
	}
	if len(out) == 0 {
		out = []string{"(empty decision)"}
	}
	return out, nil
}

func (w *scenWorld) apply() error {
	d := w.last
	if d == nil {
		return fmt.Errorf("no decision to apply")
	}
	w.last = nil
	w.plan = slices.Clone(d.Reservations)
	for _, p := range d.Placements {
		i := w.find(p.Job)
		if i < 0 {
			return fmt.Errorf("placement of unknown job %q", p.Job)
		}
		j := &w.jobs[i]
		j.State, j.Started, j.Allocation = scheduler.Running, w.now, p.Allocation.Clone()
	}
	for _, e := range d.Evictions {
		i := w.find(e.Job)
		if i < 0 {
			return fmt.Errorf("eviction of unknown job %q", e.Job)
		}
		w.jobs[i].State, w.jobs[i].EvictedAt = scheduler.Evicting, w.now
		w.requeue[e.Job], w.goneAt[e.Job] = e.Requeue, w.now.Add(e.Grace)
	}
	return nil
}

// advance moves the clock and lets evicting jobs whose grace has passed
// go: back to pending when their eviction said requeue, else removed.
func (w *scenWorld) advance(by string) ([]string, error) {
	d, err := time.ParseDuration(by)
	if err != nil {
		return nil, err
	}
	if d < 0 {
		return nil, fmt.Errorf("time runs forward, got %s", d)
	}
	w.now = w.now.Add(d)
	var out []string
	kept := w.jobs[:0]
	for _, j := range w.jobs {
		if j.State != scheduler.Evicting || w.goneAt[j.ID].After(w.now) {
			kept = append(kept, j)
			continue
		}
		delete(w.goneAt, j.ID)
		if !w.requeue[j.ID] {
			out = append(out, fmt.Sprintf("gone %s", j.ID))
			continue
		}
		out = append(out, fmt.Sprintf("requeued %s", j.ID))
		j.State, j.Allocation, j.Started, j.EvictedAt = scheduler.Pending, nil, time.Time{}, time.Time{}
		kept = append(kept, j)
	}
	w.jobs = kept
	return out, nil
}
