// Command simulate replays a workload trace through the scheduler's
// discrete-event simulator and prints the resulting metrics.
//
//	simulate -trace FILE [-format swf|csv] [-gpus N | -nodes N -gpus-per-node G]
//	         [-backfill easy|conservative|none] [-backfill-order priority|shortest]
//	         [-jobs N] [-json] [-plot out.svg] [-swf-procs allocated|requested]
//
// Jobs are ordered first come, first served within a tier
// (scheduler.TierOrder), as Parallel Workloads Archive simulators do;
// -backfill none is plain FCFS. SWF jobs all have the same tier; a CSV
// trace may give a tier column, which enables preemption between tiers
// (tiers above 3 count as 3, the lowest of the default four).
//
// Cluster size: -gpus N is a flat pool of N nodes of one GPU, and a job of
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
// and stepP99 (durations in seconds), plus medianWait, p95Wait,
// meanFlowTime, maxBoundedSlowdown, completed, killedAtLimit,
// preemptions, unfinished, steps, gpus, gpuHours, jain, skippedBy and
// teams. -plot draws utilization, queue length and per-team share over
// time as SVG or PNG (by extension). While the run lasts, a progress bar
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
)

func main() {
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
	gpus, nodes, perNode, jobs           int
	json                                 bool
}

// synopsis is the command line of the simulation contract.
const synopsis = `usage: simulate -trace FILE [-format swf|csv] [-gpus N | -nodes N -gpus-per-node G]
                [-backfill easy|conservative|none] [-backfill-order priority|shortest]
                [-jobs N] [-json] [-plot out.svg] [-swf-procs allocated|requested]`

// errHelp is returned by parseFlags for -h and -help: print the usage,
// exit 0.
var errHelp = errors.New("help requested")

// writeUsage prints the synopsis and every flag with its description.
func writeUsage(w io.Writer) {
	fs, _ := newFlagSet()
	fmt.Fprintf(w, "%s\n\nReplays a workload trace (SWF or GPU CSV) through the scheduler and prints\nutilization, waits, bounded slowdown and fairness.\n\nFlags:\n", synopsis)
	fs.SetOutput(w)
	fs.PrintDefaults()
}

// newFlagSet defines the flags, which parse into the options returned.
func newFlagSet() (*flag.FlagSet, *options) {
	var o options
	fs := flag.NewFlagSet("simulate", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&o.trace, "trace", "", "workload trace `FILE` (SWF or CSV), required")
	fs.StringVar(&o.format, "format", "", "trace `format`: swf or csv (default: by file name)")
	fs.IntVar(&o.gpus, "gpus", 0, "flat pool of `N` one-GPU nodes (0, without -nodes: an SWF trace's header size)")
	fs.IntVar(&o.nodes, "nodes", 0, "`N` nodes (with -gpus-per-node)")
	fs.IntVar(&o.perNode, "gpus-per-node", 0, "`G` GPUs per node (with -nodes)")
	fs.StringVar(&o.backfill, "backfill", "easy", "backfill `mode`: easy, conservative or none")
	fs.StringVar(&o.order, "backfill-order", "priority", "backfill candidate `order`: priority or shortest")
	fs.IntVar(&o.jobs, "jobs", 0, "simulate only the first `N` usable jobs by submit time (0: all)")
	fs.BoolVar(&o.json, "json", false, "print one JSON object")
	fs.StringVar(&o.plot, "plot", "", "write a chart to `FILE`, .svg or .png")
	fs.StringVar(&o.procs, "swf-procs", "allocated", "SWF job `size`: allocated (field 5) or requested (field 8) processors")
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
	switch {
	case fs.NArg() > 0:
		return nil, usagef("simulate: unexpected argument %q", fs.Arg(0))
	case o.trace == "":
		return nil, usagef("simulate: -trace is required")
	case o.format != "" && o.format != "swf" && o.format != "csv":
		return nil, usagef("simulate: -format must be swf or csv, got %q", o.format)
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

func (o *options) config() (scheduler.Config, error) {
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
	jobs      []sim.Job
	nodes     int
	perNode   int
	skipped   int
	skippedBy map[string]int
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
	return nil
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
	total := w.nodes * w.perNode
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
	cfg, err := o.config()
	if err != nil {
		return err
	}
	w, err := load(o)
	if err != nil {
		return err
	}
	opt := sim.Options{Clock: clock}
	if o.plot == "" {
		// Only the chart reads the time series, which holds a share per
		// team and point: without one, one point will do.
		opt.MaxPoints = 1
	}
	var bar *progressbar.ProgressBar
	if isTTY {
		bar = newProgress(stderr, len(w.jobs))
		opt.Progress = func(finished, _ int) { _ = bar.Set(finished) }
	}
	res, err := sim.Run(sim.Uniform(w.nodes, w.perNode), w.jobs, cfg, opt)
	if bar != nil {
		_ = bar.Finish() // erases the bar
	}
	if errors.Is(err, sim.ErrTimeRange) {
		// The trace's times, not the simulator, are at fault: bad input.
		return usagef("simulate: %s: times would overflow: %v", o.trace, oneLine(err))
	}
	if err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	if o.plot != "" {
		if err := writePlot(o.plot, res, w.nodes*w.perNode); err != nil {
			return usagef("simulate: -plot: %v", oneLine(err))
		}
	}
	if o.json {
		err = writeJSON(stdout, res, w)
	} else {
		err = writeTable(stdout, res, w, o, cfg)
	}
	if err != nil {
		return fmt.Errorf("simulate: write output: %w", err)
	}
	return nil
}

// newProgress returns a bar on w counting the finished jobs of total,
// redrawn at most ten times a second and erased when the run ends.
func newProgress(w io.Writer, total int) *progressbar.ProgressBar {
	return progressbar.NewOptions(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription("jobs"),
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
	MeanWait            float64 `json:"meanWait"`
	MeanBoundedSlowdown float64 `json:"meanBoundedSlowdown"`
}

// summaryJSON is the -json output; the first nine keys are the contract.
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
	MedianWait          float64        `json:"medianWait"`
	P95Wait             float64        `json:"p95Wait"`
	MeanFlowTime        float64        `json:"meanFlowTime"`
	MaxBoundedSlowdown  float64        `json:"maxBoundedSlowdown"`
	Completed           int            `json:"completed"`
	KilledAtLimit       int            `json:"killedAtLimit"`
	Preemptions         int            `json:"preemptions"`
	Unfinished          int            `json:"unfinished"`
	Steps               int            `json:"steps"`
	GPUs                int            `json:"gpus"`
	GPUHours            float64        `json:"gpuHours"`
	Jain                float64        `json:"jain"`
	SkippedBy           map[string]int `json:"skippedBy"`
	Teams               []teamJSON     `json:"teams"`
}

func writeJSON(out io.Writer, res *sim.Result, w *workload) error {
	s := &res.Summary
	j := summaryJSON{
		Jobs: s.Jobs, Skipped: w.skipped, Makespan: secs(s.Makespan), Utilization: s.Utilization,
		MeanWait: secs(s.MeanWait), MeanBoundedSlowdown: s.MeanBoundedSlowdown, MaxWait: secs(s.MaxWait),
		StepP50: secs(s.StepP50), StepP99: secs(s.StepP99), MedianWait: secs(s.MedianWait),
		P95Wait: secs(s.P95Wait), MeanFlowTime: secs(s.MeanFlowTime), MaxBoundedSlowdown: s.MaxBoundedSlowdown,
		Completed: s.Completed, KilledAtLimit: s.KilledAtLimit, Preemptions: s.Preemptions,
		Unfinished: s.Unfinished, Steps: s.Steps, GPUs: w.nodes * w.perNode, GPUHours: s.GPUHours,
		Jain: s.Jain, SkippedBy: w.skippedBy, Teams: []teamJSON{},
	}
	for _, t := range s.Teams {
		j.Teams = append(j.Teams, teamJSON{Team: t.Team, Jobs: t.Jobs, GPUHours: t.GPUHours, Share: t.Share,
			MeanWait: secs(t.MeanWait), MeanBoundedSlowdown: t.MeanBoundedSlowdown})
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(&j)
}

func writeTable(out io.Writer, res *sim.Result, w *workload, o *options, cfg scheduler.Config) error {
	s := &res.Summary
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	row := func(k, f string, args ...any) { fmt.Fprintf(tw, "%s\t"+f+"\n", append([]any{k}, args...)...) }
	row("trace", "%s", o.trace)
	row("cluster", "%d nodes × %d GPUs = %d GPUs", w.nodes, w.perNode, w.nodes*w.perNode)
	row("policy", "FCFS, backfill %s, backfill order %s", cfg.Backfill, cfg.BackfillOrder)
	row("jobs", "%d (%d skipped)", s.Jobs, w.skipped)
	row("completed / killed at limit / unfinished", "%d / %d / %d", s.Completed, s.KilledAtLimit, s.Unfinished)
	row("makespan", "%s (%.0f s)", s.Makespan, secs(s.Makespan))
	row("utilization", "%.4f", s.Utilization)
	row("wait mean / median / p95 / max", "%.1f / %.1f / %.1f / %.1f s", secs(s.MeanWait), secs(s.MedianWait), secs(s.P95Wait), secs(s.MaxWait))
	row("bounded slowdown mean / max", "%.4f / %.1f", s.MeanBoundedSlowdown, s.MaxBoundedSlowdown)
	row("mean flow time", "%.1f s", secs(s.MeanFlowTime))
	row("preemptions", "%d", s.Preemptions)
	row("Jain's index over teams", "%.4f (%d teams)", s.Jain, len(s.Teams))
	row("steps", "%d, latency p50 %s, p99 %s", s.Steps, s.StepP50, s.StepP99)
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(s.Teams) > 1 {
		fmt.Fprintln(out)
		tw = tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "team\tjobs\tGPU-hours\tshare\tmean wait (s)\tmean bsld\t")
		for _, t := range topTeams(s.Teams, 15) {
			fmt.Fprintf(tw, "%s\t%d\t%.1f\t%.4f\t%.1f\t%.2f\t\n", teamLabel(t.Team), t.Jobs, t.GPUHours, t.Share, secs(t.MeanWait), t.MeanBoundedSlowdown)
		}
		if len(s.Teams) > 15 {
			fmt.Fprintf(tw, "(%d more)\t\t\t\t\t\t\n", len(s.Teams)-15)
		}
		return tw.Flush()
	}
	return nil
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
