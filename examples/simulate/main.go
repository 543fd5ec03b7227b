// Command simulate replays a workload trace through the scheduler's
// discrete-event simulator and prints the resulting metrics.
//
//	simulate -trace FILE [-format swf|csv] [-gpus N | -nodes N -gpus-per-node G]
//	         [-backfill easy|conservative|none] [-backfill-order priority|shortest]
//	         [-jobs N] [-json] [-plot out.svg] [-swf-procs allocated|requested]
//	         [-cluster cluster.json] [-teams teams.json]
//	         [-config policy.json | -compare a.json,b.json,...]
//	simulate -trace openb_pod_list_default.csv -format alibaba
//	         [-alibaba-nodes openb_node_list_gpu_node.csv] [-alibaba-lifetime trace|forever]
//	         [-alibaba-copies N] ...
//
// Jobs are ordered first come, first served within a tier
// (scheduler.TierOrder), as Parallel Workloads Archive simulators do;
// -backfill none is plain FCFS. SWF jobs all have the same tier; a CSV
// trace may give a tier column, which enables preemption between tiers
// (tiers above 3 count as 3, the lowest of the default four).
//
// Alibaba: -format alibaba replays the pod list of Alibaba's GPU trace of
// 2023 on its own node list (-alibaba-nodes, by default
// openb_node_list_gpu_node.csv beside the pod list): the GPU nodes with
// their CPU, memory and GPU model, and the pods that ask for whole GPUs,
// each one member with the pod's CPU and memory, its QoS class as its
// team. Pods that share a GPU, ask for none or last no second, and nodes
// of no GPU, are left out and counted. A pod runs from its binding to its
// deletion (-alibaba-lifetime trace) or never leaves (forever);
// -alibaba-copies N replays N copies of the pods one after another, so
// that pods that never leave fill the cluster. On a
// cluster whose nodes limit CPU or memory (this one, or a -cluster file
// that sets them), the table and -json add the GPU-hours stranded by CPU
// or memory, and -plot draws the GPUs, CPU and memory held, the GPUs
// stranded and the pending jobs by reason over time.
//
// Policy: -config reads a policy file, the one the step command takes
// (scheduler.DecodeConfig), instead of -backfill and -backfill-order; its
// order is multifactor unless it says "order": "tier". -compare replays
// the trace under each policy file of a comma-separated list and prints
// the runs side by side; each run is the run that -config with that file
// makes. -teams reads a teams file (scheduler.DecodeTeams: a JSON array
// of teams as a snapshot lists them, with share, usage, parent and
// quota), whose shares, usage and quotas every run's snapshots carry.
//
// Cluster size: -cluster reads a cluster file (scheduler.DecodeCluster:
// a snapshot's "cluster" object, with topology levels, GPU types, CPU and
// memory), on whose largest node jobs are shaped as with -nodes below.
// -gpus N is a flat pool of N nodes of one GPU, and a job of
// p processors is p members of one GPU. -nodes N -gpus-per-node G gives N
// nodes of G GPUs: a job of p <= G GPUs is one member of p GPUs, a larger
// one ceil(p/G) members of G GPUs, so it is rounded up to whole nodes.
// Without either, an SWF trace runs on a flat pool of its header's
// MaxProcs (MaxNodes when MaxProcs is missing); a CSV trace needs a size.
// The cluster may have at most 1,048,576 nodes.
//
// Trace mapping (SWF): submit = field 2, run = field 4, processors =
// field 5 (field 8 when 5 is missing), time limit = field 9 (the run time
// when missing). Jobs with no processors or no run time are skipped, and
// so are jobs larger than the cluster or of more than 1,048,576 members
// (too-large); all are counted in "skipped".
// -jobs N simulates the first N usable jobs by submit time; records
// skipped as unusable are then still counted over the whole trace (the
// reader drops them before the jobs are sorted), jobs too large only
// among the N. A job that runs longer than its limit is killed at the limit. -swf-procs
// requested sizes jobs by the requested processors of field 8 instead
// (field 5 when 8 is missing), as the pyss simulator behind the published
// EASY figures of Gaussier et al. (SC'15) does; a CSV trace has one GPU
// count, which both settings use.
//
// Output: a table, or with -json one object with the keys jobs, skipped,
// makespan, utilization, meanWait, meanBoundedSlowdown, maxWait, stepP50
// and stepP99 (durations in seconds), plus policy, medianWait, p95Wait,
// meanFlowTime, maxBoundedSlowdown, completed, killedAtLimit,
// preemptions, promised, promisesKept (jobs given a reservation before
// they started, and those that started no later than the first one),
// unfinished, steps, gpus, gpuHours, strandedGPUHours, jain, skippedBy and
// teams (each with
// its share of the GPU time and the share it is entitled to). With
// -compare, the table has a column per policy and -json prints an array
// of those objects, one per policy in the order given. -plot draws
// utilization, queue length and per-team share over time as SVG or PNG
// (by extension); with -compare, the queue length of every policy over
// time, their mean and p95 waits and each team's share of GPU-hours under
// each against its entitled share. While the run lasts, a progress bar
// of the finished jobs goes to stderr when stderr is a terminal. Bad flags
// or files exit with status 2 and one line on stderr; a failure to write the results exits 1 with
// one line; -h prints the usage to stderr and exits 0.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/schollz/progressbar/v3"

	"github.com/gpusched/gpusched/internal/trace"
	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/scheduler/sim"
	"github.com/gpusched/gpusched/topology"
)

func main() {
	// A replay runs thousands of Steps, each of which allocates what it
	// drops when it returns, over a live heap of a few tens of MB: with
	// the default GOGC=100 the collector runs every few Steps. At 400 it
	// runs a quarter as often, and the heap may grow to five times what
	// is live (BENCHMARKS.md, "Eighth round", has the figures). A GOGC
	// or GOMEMLIMIT in the environment is obeyed instead.
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetGCPercent(400)
	}
	isTTY := false
	if fi, err := os.Stderr.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		isTTY = true
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr, isTTY, time.Now))
}

// usageError is a bad flag or input: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

type options struct {
	trace, format, backfill, order, plot string
	procs                                string
	config, cluster, teams, compare      string
	alibabaNodes, lifetime               string
	gpus, nodes, perNode, jobs, copies   int
	json                                 bool
	set                                  map[string]bool // the flags given
}

// synopsis is the command line of the simulation contract.
const synopsis = `usage: simulate -trace FILE [-format swf|csv] [-gpus N | -nodes N -gpus-per-node G]
                [-backfill easy|conservative|none] [-backfill-order priority|shortest]
                [-jobs N] [-json] [-plot out.svg] [-swf-procs allocated|requested]
                [-cluster cluster.json] [-teams teams.json]
                [-config policy.json | -compare a.json,b.json,...]
       simulate -trace PODS.csv -format alibaba [-alibaba-nodes NODES.csv]
                [-alibaba-lifetime trace|forever] [-alibaba-copies N] [other flags as above]`

// errHelp is returned by parseFlags for -h and -help: print the usage,
// exit 0.
var errHelp = errors.New("help requested")

// writeUsage prints the synopsis and every flag with its description.
func writeUsage(w io.Writer) {
	fs, _ := newFlagSet()
	fmt.Fprintf(w, "%s\n\nReplays a workload trace (SWF, GPU CSV or the Alibaba GPU trace) through the\nscheduler and prints utilization, waits, bounded slowdown and fairness, for one\npolicy or several side by side.\n\nFlags:\n", synopsis)
	fs.SetOutput(w)
	fs.PrintDefaults()
}

// newFlagSet defines the flags, which parse into the options returned.
func newFlagSet() (*flag.FlagSet, *options) {
	var o options
	fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.trace, "trace", "", "workload trace `FILE` (SWF or CSV), required")
	fs.StringVar(&o.format, "format", "", "trace `format`: swf, csv or alibaba (default: swf or csv by file name)")
	fs.StringVar(&o.lifetime, "alibaba-lifetime", "trace", "pod `lifetime` of -format alibaba: trace (binding to deletion) or forever (never leave)")
	fs.IntVar(&o.copies, "alibaba-copies", 1, "replay `N` copies of the pods of -format alibaba, one after another")
	fs.StringVar(&o.alibabaNodes, "alibaba-nodes", "", "node list `FILE` of -format alibaba (default: "+alibabaNodeList+" beside the trace)")
	fs.IntVar(&o.gpus, "gpus", 0, "flat pool of `N` one-GPU nodes (0, without -nodes: an SWF trace's header size)")
	fs.IntVar(&o.nodes, "nodes", 0, "`N` nodes (with -gpus-per-node)")
	fs.IntVar(&o.perNode, "gpus-per-node", 0, "`G` GPUs per node (with -nodes)")
	fs.StringVar(&o.backfill, "backfill", "easy", "backfill `mode`: easy, conservative or none")
	fs.StringVar(&o.order, "backfill-order", "priority", "backfill candidate `order`: priority or shortest")
	fs.IntVar(&o.jobs, "jobs", 0, "simulate only the first `N` usable jobs by submit time (0: all)")
	fs.BoolVar(&o.json, "json", false, "print one JSON object")
	fs.StringVar(&o.plot, "plot", "", "write a chart to `FILE`, .svg or .png")
	fs.StringVar(&o.procs, "swf-procs", "allocated", "SWF job `size`: allocated (field 5) or requested (field 8) processors")
	fs.StringVar(&o.config, "config", "", "policy `FILE` (JSON, as the step command takes) instead of -backfill and -backfill-order")
	fs.StringVar(&o.cluster, "cluster", "", "cluster `FILE` (JSON: levels, nodes with GPUs, GPU type, CPU, memory) instead of -gpus or -nodes")
	fs.StringVar(&o.teams, "teams", "", "teams `FILE` (JSON array of teams: name, share, usage, parent, quota)")
	fs.StringVar(&o.compare, "compare", "", "replay under each policy `FILE` of a comma-separated list, side by side")
	return fs, &o
}

func parseFlags(args []string) (*options, error) {
	fs, o := newFlagSet()
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, errHelp
		}
		return nil, usagef("simulate: %v", err)
	}
	o.set = map[string]bool{}
	fs.Visit(func(f *flag.Flag) { o.set[f.Name] = true })
	switch {
	case fs.NArg() > 0:
		return nil, usagef("simulate: unexpected argument %q", fs.Arg(0))
	case o.trace == "":
		return nil, usagef("simulate: -trace is required")
	case o.format != "" && o.format != "swf" && o.format != "csv" && o.format != "alibaba":
		return nil, usagef("simulate: -format must be swf, csv or alibaba, got %q", o.format)
	case o.format == "alibaba" && (o.gpus > 0 || o.nodes > 0 || o.perNode > 0 || o.cluster != ""):
		return nil, usagef("simulate: -format alibaba runs on the trace's node list (-alibaba-nodes), not -gpus, -nodes or -cluster")
	case (o.alibabaNodes != "" || o.set["alibaba-lifetime"] || o.set["alibaba-copies"]) && o.format != "alibaba":
		return nil, usagef("simulate: -alibaba-nodes, -alibaba-lifetime and -alibaba-copies go with -format alibaba")
	case o.copies < 1 || o.copies > 1000:
		return nil, usagef("simulate: -alibaba-copies must be in 1..1000, got %d", o.copies)
	case o.lifetime != "trace" && o.lifetime != "forever":
		return nil, usagef("simulate: -alibaba-lifetime must be trace or forever, got %q", o.lifetime)
	case o.gpus < 0 || o.nodes < 0 || o.perNode < 0 || o.jobs < 0:
		return nil, negative(o)
	case o.gpus > 0 && (o.nodes > 0 || o.perNode > 0):
		return nil, usagef("simulate: use either -gpus or -nodes with -gpus-per-node, not both")
	case (o.nodes > 0) != (o.perNode > 0):
		return nil, usagef("simulate: -nodes and -gpus-per-node go together")
	case o.perNode > 64:
		return nil, usagef("simulate: -gpus-per-node must be <= 64, got %d", o.perNode)
	case o.procs != "allocated" && o.procs != "requested":
		return nil, usagef("simulate: -swf-procs must be allocated or requested, got %q", o.procs)
	case o.config != "" && o.compare != "":
		return nil, usagef("simulate: use either -config or -compare, not both")
	case (o.config != "" || o.compare != "") && (o.set["backfill"] || o.set["backfill-order"]):
		return nil, usagef("simulate: -backfill and -backfill-order go without -config and -compare: the policy file sets them")
	case o.cluster != "" && (o.gpus > 0 || o.nodes > 0 || o.perNode > 0):
		return nil, usagef("simulate: use either -cluster or -gpus or -nodes, not two")
	case o.set["compare"] && len(compareFiles(o.compare)) == 0:
		return nil, usagef("simulate: -compare needs policy files, comma-separated")
	case o.plot != "" && !strings.HasSuffix(strings.ToLower(o.plot), ".svg") && !strings.HasSuffix(strings.ToLower(o.plot), ".png"):
		return nil, usagef("simulate: -plot file must end in .svg or .png, got %q", o.plot)
	}
	return o, nil
}

// negative names the first of -gpus, -nodes, -gpus-per-node and -jobs
// that is below zero, with its value.
func negative(o *options) error {
	for _, f := range []struct {
		name string
		v    int
	}{{"gpus", o.gpus}, {"nodes", o.nodes}, {"gpus-per-node", o.perNode}, {"jobs", o.jobs}} {
		if f.v < 0 {
			return usagef("simulate: -%s must be >= 0, got %d", f.name, f.v)
		}
	}
	return nil
}

// compareFiles splits the -compare list, leaving out empty names.
func compareFiles(list string) []string {
	var out []string
	for _, f := range strings.Split(list, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// policy is one policy to replay the trace under: its name in the output
// (the -backfill mode, or the policy file's name) and the policy.
type policy struct {
	name, file string
	cfg        scheduler.Config
}

// policies returns the policies to run: those of -compare, or of
// -config, or the one of -backfill and -backfill-order.
func (o *options) policies() ([]policy, error) {
	files := compareFiles(o.compare)
	if o.config != "" {
		files = []string{o.config}
	}
	if len(files) == 0 {
		cfg, err := o.flagConfig()
		return []policy{{name: o.backfill, cfg: cfg}}, err
	}
	var out []policy
	for _, f := range files {
		cfg, err := readFile(f, scheduler.DecodeConfig)
		if err != nil {
			return nil, err
		}
		out = append(out, policy{name: policyName(f, files), file: f, cfg: cfg})
	}
	return out, nil
}

// policyName names the policy file f among files: its base name without
// ".json" and then ".policy", or the path itself when another file has that name too.
func policyName(f string, files []string) string {
	base := func(f string) string {
		return strings.TrimSuffix(strings.TrimSuffix(filepath.Base(f), ".json"), ".policy")
	}
	for _, g := range files {
		if g != f && base(g) == base(f) {
			return f
		}
	}
	return base(f)
}

// flagConfig is the policy of -backfill and -backfill-order: first come,
// first served within a tier.
func (o *options) flagConfig() (scheduler.Config, error) {
	cfg := scheduler.Config{Order: scheduler.TierOrder{}}
	switch o.backfill {
	case "easy":
		cfg.Backfill = scheduler.EASY
	case "conservative":
		cfg.Backfill = scheduler.Conservative
	case "none":
		cfg.Backfill = scheduler.NoBackfill
	default:
		return cfg, usagef("simulate: -backfill must be easy, conservative or none, got %q", o.backfill)
	}
	switch o.order {
	case "priority":
		cfg.BackfillOrder = scheduler.ByPriority
	case "shortest":
		cfg.BackfillOrder = scheduler.ShortestFirst
	default:
		return cfg, usagef("simulate: -backfill-order must be priority or shortest, got %q", o.order)
	}
	return cfg, nil
}

// workload is the simulator's input built from a trace.
type workload struct {
	jobs []sim.Job
	// The cluster: nodes of perNode GPUs (Uniform), or the -cluster file's
	// when file is set, whose largest node has perNode GPUs; gpus in all.
	nodes, perNode, gpus int
	file                 *topology.Cluster
	clusterName          string           // the file the cluster was read from
	teams                []scheduler.Team // of -teams
	cpuOnlyNodes         int              // nodes of no GPU left out (-format alibaba)
	skipped              int
	skippedBy            map[string]int
}

// limited reports whether a node of the cluster limits CPU or memory.
func (w *workload) limited() bool {
	if w.file == nil {
		return false
	}
	for i := range w.file.Nodes {
		if w.file.Nodes[i].CPUMillis > 0 || w.file.Nodes[i].MemoryMiB > 0 {
			return true
		}
	}
	return false
}

// longestQueue returns the point of res's series with the most pending
// jobs, false when no job ever waited (or there is no series).
func longestQueue(res *sim.Result) (sim.Point, bool) {
	var best sim.Point
	for _, p := range res.Series {
		if p.Queue > best.Queue {
			best = p
		}
	}
	return best, best.Queue > 0
}

// atPoint describes the cluster at point p: hours since the first submit,
// GPUs, CPU and memory held, GPUs stranded and pending jobs by reason
// (time-averaged over the point's interval).
func atPoint(res *sim.Result, p sim.Point, gpus int) string {
	origin := res.Series[0].At - res.Series[0].Width/2
	var b strings.Builder
	fmt.Fprintf(&b, "hour %.0f: GPUs %.3f, CPU %.3f, memory %.3f held; %.0f of %d GPUs stranded; %.0f pending",
		(p.At - origin).Hours(), p.Utilization, p.CPU, p.Memory, p.Stranded, gpus, p.Queue)
	for k, why := range res.Reasons {
		if p.Pending[k] >= 0.5 {
			fmt.Fprintf(&b, ", %s %.0f", why, p.Pending[k])
		}
	}
	return b.String()
}

// ratio is a / b, 0 when b is 0.
func ratio(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// skipLine lists the records left out by cause, in cause order, and the
// nodes of no GPU left out of an Alibaba node list.
func skipLine(w *workload) string {
	causes := make([]string, 0, len(w.skippedBy))
	for c := range w.skippedBy {
		causes = append(causes, c)
	}
	slices.Sort(causes)
	parts := make([]string, 0, len(causes)+1)
	for _, c := range causes {
		parts = append(parts, fmt.Sprintf("%s %d", c, w.skippedBy[c]))
	}
	if w.cpuOnlyNodes > 0 {
		parts = append(parts, fmt.Sprintf("nodes of no GPU %d", w.cpuOnlyNodes))
	}
	return strings.Join(parts, ", ")
}

// cluster returns the cluster to run on.
func (w *workload) cluster() topology.Cluster {
	if w.file != nil {
		return *w.file
	}
	return sim.Uniform(w.nodes, w.perNode)
}

// tooLarge counts jobs that need more GPUs than the cluster has.
const tooLarge = "too-large"

// maxNodes bounds the cluster a run builds (a node costs a few hundred
// bytes), and maxMembers is the most members Step takes in one gang.
const (
	maxNodes   = 1 << 20
	maxMembers = 1 << 20
)

// load reads the trace and turns it into the simulator's jobs on the
// cluster the options and the trace give.
func load(o *options) (*workload, error) {
	if o.format == "alibaba" {
		return loadAlibaba(o)
	}
	tr, err := trace.Read(o.trace, o.format)
	if err != nil {
		return nil, usagef("simulate: %v", oneLine(err))
	}
	w := &workload{skippedBy: map[string]int{}}
	for _, s := range tr.Skipped {
		w.skippedBy[s.Cause] = s.Count
		w.skipped += s.Count
	}
	if err := w.size(o, tr); err != nil {
		return nil, err
	}
	if o.teams != "" {
		if w.teams, err = readFile(o.teams, scheduler.DecodeTeams); err != nil {
			return nil, err
		}
	}
	jobs := tr.Jobs
	if o.jobs > 0 && o.jobs < len(jobs) {
		jobs = jobs[:o.jobs]
	}
	if err := w.convert(o, jobs); err != nil {
		return nil, err
	}
	return w, nil
}

// size sets the cluster's shape: -gpus, -nodes with -gpus-per-node, or a
// flat pool of the SWF header's MaxProcs (MaxNodes without it); at most
// maxNodes nodes.
func (w *workload) size(o *options, tr *trace.Trace) error {
	var from string
	switch {
	case o.cluster != "":
		c, err := readFile(o.cluster, scheduler.DecodeCluster)
		if err != nil {
			return err
		}
		w.file, w.nodes, w.clusterName = &c, len(c.Nodes), o.cluster
		for i := range c.Nodes {
			w.perNode = max(w.perNode, c.Nodes[i].GPUs)
			w.gpus += c.Nodes[i].GPUs
		}
		if w.nodes == 0 {
			return usagef("simulate: %s: the cluster has no nodes", o.cluster)
		}
		return nil
	case o.gpus > 0:
		w.nodes, w.perNode, from = o.gpus, 1, fmt.Sprintf("-gpus %d", o.gpus)
	case o.nodes > 0:
		w.nodes, w.perNode, from = o.nodes, o.perNode, fmt.Sprintf("-nodes %d", o.nodes)
	case tr.MaxProcs > 0:
		w.nodes, w.perNode, from = tr.MaxProcs, 1, fmt.Sprintf("%s: header MaxProcs %d", o.trace, tr.MaxProcs)
	case tr.MaxNodes > 0:
		w.nodes, w.perNode, from = tr.MaxNodes, 1, fmt.Sprintf("%s: header MaxNodes %d", o.trace, tr.MaxNodes)
	default:
		return usagef("simulate: %s: no cluster size: give -gpus N or -nodes N -gpus-per-node G", o.trace)
	}
	if w.nodes > maxNodes {
		return usagef("simulate: %s: more nodes than the simulator takes (at most %d)", from, maxNodes)
	}
	w.gpus = w.nodes * w.perNode
	return nil
}

// readFile opens path and decodes it with decode; an error is a usage
// error that starts with the path.
func readFile[T any](path string, decode func(io.Reader) (T, error)) (T, error) {
	f, err := os.Open(path)
	if err != nil {
		var zero T
		return zero, usagef("simulate: %v", err)
	}
	defer f.Close()
	v, err := decode(f)
	if err != nil {
		return v, usagef("simulate: %s: %v", path, oneLine(err))
	}
	return v, nil
}

// maxSec is the most seconds a time.Duration holds (about 292 years):
// times beyond it would wrap around.
const maxSec = int64(math.MaxInt64 / int64(time.Second))

// convert turns trace jobs into the simulator's, skipping (and counting)
// those too large for the cluster. It fails when a time is out of range,
// or when the times the run can reach (the last submit plus all the run
// time, jobs running one after another at worst, plus a limit) are: the
// simulator counts time from the start of the trace (second 0) and from
// the first submit, and past maxSec from either it would wrap around.
func (w *workload) convert(o *options, jobs []trace.Job) error {
	total := w.gpus
	lo, hi, runs, longest := int64(math.MaxInt64), int64(math.MinInt64), int64(0), int64(0)
	width := len(fmt.Sprint(len(jobs)))
	w.jobs = make([]sim.Job, 0, len(jobs))
	for i, j := range jobs {
		if err := checkSeconds(o.trace, &j); err != nil {
			return err
		}
		procs := j.Procs
		if o.procs == "requested" {
			procs = j.ReqProcs
		}
		m, per, ok := w.shape(procs, total)
		if !ok {
			w.skippedBy[tooLarge]++
			w.skipped++
			continue
		}
		kind := scheduler.Training
		if j.Kind == trace.KindInference {
			kind = scheduler.Inference
		}
		w.jobs = append(w.jobs, sim.Job{
			// Trace positions, zero-padded: ID order is trace order, which
			// breaks ties between jobs submitted at the same second.
			ID:      fmt.Sprintf("%0*d", width, i),
			Submit:  time.Duration(j.Submit) * time.Second,
			Run:     time.Duration(j.Run) * time.Second,
			Limit:   time.Duration(j.Limit) * time.Second,
			Members: m, GPUsPerMember: per,
			Team: j.Team, Tier: scheduler.TierN(min(j.Tier, scheduler.DefaultTiers-1)), Kind: kind,
		})
		lo, hi = min(lo, j.Submit), max(hi, j.Submit)
		runs = min(runs+j.Run, maxSec) // saturates: each run is at most maxSec
		longest = max(longest, j.Limit)
	}
	// The sums fit an int64: each term is within ±maxSec.
	if len(w.jobs) > 0 && (hi-min(lo, 0) > maxSec || hi-min(lo, 0)+runs > maxSec-longest) {
		return usagef("simulate: %s: submit times from %d to %d s plus %d s of run time reach past %d s: times would overflow", o.trace, lo, hi, runs, maxSec)
	}
	return nil
}

// checkSeconds fails when a time of j lies beyond maxSec either way.
func checkSeconds(path string, j *trace.Job) error {
	for _, f := range []struct {
		name string
		v    int64
	}{{"submit time", j.Submit}, {"run time", j.Run}, {"time limit", j.Limit}} {
		if f.v > maxSec || f.v < -maxSec {
			return usagef("simulate: %s: line %d: %s %d s is out of range (at most %d s)", path, j.Line, f.name, f.v, maxSec)
		}
	}
	return nil
}

// shape returns the gang shape of a job of procs processors or GPUs on the
// cluster's nodes (see sim.Shape), and false when it is larger than the
// cluster's total GPUs or than maxMembers members.
func (w *workload) shape(procs, total int) (members, perMember int, ok bool) {
	if procs > total { // before Shape, which would overflow on huge counts
		return 0, 0, false
	}
	m, per := sim.Shape(procs, w.perNode)
	if m*per > total || m > maxMembers {
		return 0, 0, false
	}
	return m, per, true
}

func oneLine(err error) string {
	return strings.ReplaceAll(err.Error(), "\n", " ")
}

func run(args []string, stdout, stderr io.Writer, isTTY bool, clock func() time.Time) int {
	err := simulate(args, stdout, stderr, isTTY, clock)
	if err == nil {
		return 0
	}
	if errors.Is(err, errHelp) {
		writeUsage(stderr)
		return 0
	}
	fmt.Fprintln(stderr, oneLine(err))
	var ue *usageError
	if errors.As(err, &ue) {
		return 2
	}
	return 1
}

func simulate(args []string, stdout, stderr io.Writer, isTTY bool, clock func() time.Time) error {
	o, err := parseFlags(args)
	if err != nil {
		return err
	}
	pols, err := o.policies()
	if err != nil {
		return err
	}
	w, err := load(o)
	if err != nil {
		return err
	}
	runs := make([]*sim.Result, len(pols))
	for k := range pols {
		if runs[k], err = replay(o, w, &pols[k], stderr, isTTY, clock); err != nil {
			return err
		}
	}
	if o.plot != "" {
		switch {
		case len(runs) == 1 && w.limited():
			err = writeResourcePlot(o.plot, runs[0], w.gpus)
		case len(runs) == 1:
			err = writePlot(o.plot, runs[0], w.gpus)
		default:
			err = writeComparePlot(o.plot, pols, runs, w.gpus)
		}
		if err != nil {
			return usagef("simulate: -plot: %v", oneLine(err))
		}
	}
	switch {
	case o.json && o.compare == "":
		err = writeJSON(stdout, summaryOf(runs[0], w, &pols[0], o))
	case o.json:
		all := make([]*summaryJSON, len(runs))
		for k := range runs {
			all[k] = summaryOf(runs[k], w, &pols[k], o)
		}
		err = writeJSON(stdout, all)
	case o.compare == "":
		err = writeTable(stdout, runs[0], w, o, &pols[0])
	default:
		err = writeCompareTable(stdout, runs, w, o, pols)
	}
	if err != nil {
		return fmt.Errorf("simulate: write output: %w", err)
	}
	return nil
}

// replay runs the workload under policy p, with a progress bar on stderr
// when it is a terminal.
func replay(o *options, w *workload, p *policy, stderr io.Writer, isTTY bool, clock func() time.Time) (*sim.Result, error) {
	opt := sim.Options{Clock: clock, Teams: w.teams}
	if o.plot == "" && !w.limited() {
		// Only the chart (and the longest queue of a cluster that limits
		// CPU or memory) reads the time series, which holds a share per
		// team and point: without them, one point will do.
		opt.MaxPoints = 1
	}
	var bar *progressbar.ProgressBar
	if isTTY {
		bar = newProgress(stderr, len(w.jobs), p.name)
		opt.Progress = func(finished, _ int) { _ = bar.Set(finished) }
	}
	res, err := sim.Run(w.cluster(), w.jobs, p.cfg, opt)
	if bar != nil {
		_ = bar.Finish() // erases the bar
	}
	if errors.Is(err, sim.ErrTimeRange) {
		// The trace's times, not the simulator, are at fault: bad input.
		return nil, usagef("simulate: %s: times would overflow: %v", o.trace, oneLine(err))
	}
	if err != nil {
		return nil, fmt.Errorf("simulate: %s: %w", p.name, err)
	}
	return res, nil
}

// newProgress returns a bar on w counting the finished jobs of total
// under the policy name,
// redrawn at most ten times a second and erased when the run ends.
func newProgress(w io.Writer, total int, name string) *progressbar.ProgressBar {
	return progressbar.NewOptions(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(name+": jobs"),
		progressbar.OptionSetWidth(40),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
}

func secs(d time.Duration) float64 { return d.Seconds() }

// teamJSON is one team in the -json output.
type teamJSON struct {
	Team                string  `json:"team"`
	Jobs                int     `json:"jobs"`
	GPUHours            float64 `json:"gpuHours"`
	Share               float64 `json:"share"`
	Entitled            float64 `json:"entitled"`
	MeanWait            float64 `json:"meanWait"`
	MeanBoundedSlowdown float64 `json:"meanBoundedSlowdown"`
}

// summaryJSON is the -json output of one run; the first nine keys are
// the contract.
type summaryJSON struct {
	Jobs                int            `json:"jobs"`
	Skipped             int            `json:"skipped"`
	Makespan            float64        `json:"makespan"`
	Utilization         float64        `json:"utilization"`
	MeanWait            float64        `json:"meanWait"`
	MeanBoundedSlowdown float64        `json:"meanBoundedSlowdown"`
	MaxWait             float64        `json:"maxWait"`
	StepP50             float64        `json:"stepP50"`
	StepP99             float64        `json:"stepP99"`
	Policy              string         `json:"policy"`
	MedianWait          float64        `json:"medianWait"`
	P95Wait             float64        `json:"p95Wait"`
	MeanFlowTime        float64        `json:"meanFlowTime"`
	MaxBoundedSlowdown  float64        `json:"maxBoundedSlowdown"`
	Completed           int            `json:"completed"`
	KilledAtLimit       int            `json:"killedAtLimit"`
	Preemptions         int            `json:"preemptions"`
	Promised            int            `json:"promised"`
	PromisesKept        int            `json:"promisesKept"`
	Unfinished          int            `json:"unfinished"`
	Steps               int            `json:"steps"`
	GPUs                int            `json:"gpus"`
	GPUHours            float64        `json:"gpuHours"`
	StrandedGPUHours    float64        `json:"strandedGPUHours"`
	Jain                float64        `json:"jain"`
	SkippedBy           map[string]int `json:"skippedBy"`
	Teams               []teamJSON     `json:"teams"`
}

// summaryOf is the -json object of one run under policy p.
func summaryOf(res *sim.Result, w *workload, p *policy, o *options) *summaryJSON {
	s := &res.Summary
	j := &summaryJSON{
		Jobs: s.Jobs, Skipped: w.skipped, Makespan: secs(s.Makespan), Utilization: s.Utilization,
		MeanWait: secs(s.MeanWait), MeanBoundedSlowdown: s.MeanBoundedSlowdown, MaxWait: secs(s.MaxWait),
		StepP50: secs(s.StepP50), StepP99: secs(s.StepP99), Policy: p.name, MedianWait: secs(s.MedianWait),
		P95Wait: secs(s.P95Wait), MeanFlowTime: secs(s.MeanFlowTime), MaxBoundedSlowdown: s.MaxBoundedSlowdown,
		Completed: s.Completed, KilledAtLimit: s.KilledAtLimit, Preemptions: s.Preemptions,
		Promised: s.Promised, PromisesKept: s.PromisesKept,
		Unfinished: s.Unfinished, Steps: s.Steps, GPUs: w.gpus, GPUHours: s.GPUHours, StrandedGPUHours: s.StrandedGPUHours,
		Jain: s.Jain, SkippedBy: w.skippedBy, Teams: []teamJSON{},
	}
	for _, t := range s.Teams {
		j.Teams = append(j.Teams, teamJSON{Team: t.Team, Jobs: t.Jobs, GPUHours: t.GPUHours, Share: t.Share,
			Entitled: t.Entitled, MeanWait: secs(t.MeanWait), MeanBoundedSlowdown: t.MeanBoundedSlowdown})
	}
	return j
}

// writeJSON writes v, indented.
func writeJSON(out io.Writer, v any) error {
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// describe says what policy p is in the table.
func describe(p *policy) string {
	order := "multifactor"
	if _, ok := p.cfg.Order.(scheduler.TierOrder); ok {
		order = "FCFS"
	}
	d := fmt.Sprintf("%s, backfill %s, backfill order %s", order, p.cfg.Backfill, p.cfg.BackfillOrder)
	if p.file != "" {
		d = p.file + ": " + d
	}
	return d
}

// clusterLine describes the cluster in the table.
func clusterLine(w *workload, o *options) string {
	if w.file != nil {
		return fmt.Sprintf("%s: %d nodes, %d GPUs", w.clusterName, w.nodes, w.gpus)
	}
	return fmt.Sprintf("%d nodes × %d GPUs = %d GPUs", w.nodes, w.perNode, w.gpus)
}

func writeTable(out io.Writer, res *sim.Result, w *workload, o *options, p *policy) error {
	s := &res.Summary
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	row := func(k, f string, args ...any) { fmt.Fprintf(tw, "%s\t"+f+"\n", append([]any{k}, args...)...) }
	row("trace", "%s", o.trace)
	row("cluster", "%s", clusterLine(w, o))
	row("policy", "%s", describe(p))
	row("jobs", "%d (%d skipped)", s.Jobs, w.skipped)
	row("completed / killed at limit / unfinished", "%d / %d / %d", s.Completed, s.KilledAtLimit, s.Unfinished)
	row("makespan", "%s (%.0f s)", s.Makespan, secs(s.Makespan))
	row("utilization", "%.4f", s.Utilization)
	row("wait mean / median / p95 / max", "%.1f / %.1f / %.1f / %.1f s", secs(s.MeanWait), secs(s.MedianWait), secs(s.P95Wait), secs(s.MaxWait))
	row("bounded slowdown mean / max", "%.4f / %.1f", s.MeanBoundedSlowdown, s.MaxBoundedSlowdown)
	row("mean flow time", "%.1f s", secs(s.MeanFlowTime))
	row("preemptions", "%d", s.Preemptions)
	row("promises kept / made", "%d / %d", s.PromisesKept, s.Promised)
	if w.limited() {
		row("GPU-hours stranded by CPU or memory", "%.1f (%.4f of the GPU-hours held)", s.StrandedGPUHours, ratio(s.StrandedGPUHours, s.GPUHours))
		if p, ok := longestQueue(res); ok {
			row("at the longest queue", "%s", atPoint(res, p, w.gpus))
		}
	}
	if len(w.skippedBy) > 0 {
		row("left out", "%s", skipLine(w))
	}
	row("Jain's index over teams", "%.4f (%d teams)", s.Jain, len(s.Teams))
	row("steps", "%d, latency p50 %s, p99 %s", s.Steps, s.StepP50, s.StepP99)
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(s.Teams) > 1 {
		fmt.Fprintln(out)
		tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "team\tjobs\tGPU-hours\tshare\tentitled\tmean wait (s)\tmean bsld\t")
		for _, t := range topTeams(s.Teams, 15) {
			fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.4f\t%.4f\t%.1f\t%.2f\t\n", teamLabel(t.Team), t.Jobs, t.GPUHours, t.Share, t.Entitled, secs(t.MeanWait), t.MeanBoundedSlowdown)
		}
		if len(s.Teams) > 15 {
			fmt.Fprintf(tw, "(%d more)\t\t\t\t\t\t\t\n", len(s.Teams)-15)
		}
		return tw.Flush()
	}
	return nil
}

// compareRow is a row of the comparison table: a label and each run's
// figure.
type compareRow struct {
	label string
	cell  func(s *sim.Summary) string
}

// compareRows are the rows of the comparison table.
var compareRows = []compareRow{
	{"utilization", func(s *sim.Summary) string { return fmt.Sprintf("%.4f", s.Utilization) }},
	{"mean wait (s)", func(s *sim.Summary) string { return fmt.Sprintf("%.1f", secs(s.MeanWait)) }},
	{"p95 wait (s)", func(s *sim.Summary) string { return fmt.Sprintf("%.1f", secs(s.P95Wait)) }},
	{"max wait (s)", func(s *sim.Summary) string { return fmt.Sprintf("%.1f", secs(s.MaxWait)) }},
	{"mean bounded slowdown", func(s *sim.Summary) string { return fmt.Sprintf("%.4f", s.MeanBoundedSlowdown) }},
	{"makespan (s)", func(s *sim.Summary) string { return fmt.Sprintf("%.0f", secs(s.Makespan)) }},
	{"completed / killed / unfinished", func(s *sim.Summary) string {
		return fmt.Sprintf("%d / %d / %d", s.Completed, s.KilledAtLimit, s.Unfinished)
	}},
	{"preemptions", func(s *sim.Summary) string { return fmt.Sprint(s.Preemptions) }},
	{"promises kept / made", func(s *sim.Summary) string { return fmt.Sprintf("%d / %d", s.PromisesKept, s.Promised) }},
	{"Jain's index over teams", func(s *sim.Summary) string { return fmt.Sprintf("%.4f", s.Jain) }},
}

// writeCompareTable writes the runs side by side: one column per policy,
// one row per figure, then each team's share of the GPU-hours against
// its entitled share (the 15 teams with the most GPU-hours under the
// first policy).
func writeCompareTable(out io.Writer, runs []*sim.Result, w *workload, o *options, pols []policy) error {
	fmt.Fprintf(out, "trace    %s (%d jobs, %d skipped)\ncluster  %s\n", o.trace, runs[0].Summary.Jobs, w.skipped, clusterLine(w, o))
	for k := range pols {
		fmt.Fprintf(out, "%-8s %s\n", fmt.Sprintf("[%d]", k+1), describe(&pols[k]))
	}
	fmt.Fprintln(out)
	// Labels are padded to one width, so that they stand left-aligned in
	// a table whose figures align right.
	rows := compareRows
	if w.limited() {
		rows = append(slices.Clip(rows), compareRow{"GPU-hours stranded by CPU or memory", func(s *sim.Summary) string {
			return fmt.Sprintf("%.1f", s.StrandedGPUHours)
		}})
	}
	labels := make([]string, 0, len(rows)+15)
	for _, r := range rows {
		labels = append(labels, r.label)
	}
	s0 := &runs[0].Summary
	teams := topTeams(s0.Teams, 15)
	if len(s0.Teams) < 2 {
		teams = nil
	}
	for _, t := range teams {
		labels = append(labels, fmt.Sprintf("share %s (entitled %.4f)", teamLabel(t.Team), t.Entitled))
	}
	width := 0
	for _, l := range labels {
		width = max(width, utf8.RuneCountInString(l))
	}
	pad := func(l string) string { return l + strings.Repeat(" ", width-utf8.RuneCountInString(l)) }
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\t", pad(""))
	for k := range pols {
		fmt.Fprintf(tw, "[%d] %s\t", k+1, pols[k].name)
	}
	fmt.Fprintln(tw)
	for i, r := range rows {
		fmt.Fprintf(tw, "%s\t", pad(labels[i]))
		for _, res := range runs {
			fmt.Fprintf(tw, "%s\t", r.cell(&res.Summary))
		}
		fmt.Fprintln(tw)
	}
	for i, t := range teams {
		fmt.Fprintf(tw, "%s\t", pad(labels[len(rows)+i]))
		for _, res := range runs {
			fmt.Fprintf(tw, "%.4f\t", teamShare(&res.Summary, t.Team))
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(teams) > 0 && len(s0.Teams) > len(teams) {
		fmt.Fprintf(out, "(%d more teams)\n", len(s0.Teams)-len(teams))
	}
	return nil
}

// teamShare is team's share of the GPU time in s.
func teamShare(s *sim.Summary, team string) float64 {
	for _, t := range s.Teams {
		if t.Team == team {
			return t.Share
		}
	}
	return 0
}

// teamLabel is a team's name for the table: quoted when it holds a
// character that would break the row (a line break, a tab) or bytes that
// are not UTF-8 (which a terminal shows as it likes).
func teamLabel(t string) string {
	if t == "" {
		return "(none)"
	}
	if !utf8.ValidString(t) || strings.ContainsFunc(t, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return strconv.Quote(t)
	}
	return t
}
