package sim_test

import (
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/internal/trace"
	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/scheduler/sim"
	"github.com/gpusched/gpusched/topology"
)

// forecastJobs, when positive, makes TestForecastAccuracyReport replay
// that many jobs of each trace (0: the test is skipped; -1: every job).
var forecastJobs = flag.Int("forecast.jobs", 0, "replay this many jobs of each trace in TestForecastAccuracyReport (-1: all)")

// forecastOnly, when set, limits TestForecastAccuracyReport to the traces
// whose name contains it ("KTH", "Philly").
var forecastOnly = flag.String("forecast.only", "", "replay only the traces whose name contains this in TestForecastAccuracyReport")

// accuracy is how the forecasts made at submission compare with the
// actual starts of a replay.
type accuracy struct {
	jobs      int           // jobs replayed
	forecast  int           // jobs that got a start at submission
	waited    int           // of those, jobs not started at submission
	mae       time.Duration // mean |actual − forecast| over forecast
	maeWaited time.Duration // the same over waited
	noLater   float64       // share of forecast that started no later
	exact     float64       // share of forecast that started exactly then
	bias      time.Duration // mean actual − forecast (negative: early)
	wait      time.Duration // mean actual start − submit over forecast
}

func (a accuracy) String() string {
	return fmt.Sprintf("jobs %d, forecast %d (%d waited), MAE %s (waited: %s), no later %.1f%%, exact %.1f%%, mean actual−forecast %s, mean wait %s",
		a.jobs, a.forecast, a.waited, a.mae.Round(time.Second), a.maeWaited.Round(time.Second), 100*a.noLater, 100*a.exact, a.bias.Round(time.Second), a.wait.Round(time.Second))
}

// forecastAccuracy replays jobs on c under cfg and, at the first Step
// that sees each job (the instant it is submitted), records its forecast
// (Scheduler.Forecast on that Step's snapshot), then compares it with
// the job's first start.
func forecastAccuracy(t *testing.T, c topology.Cluster, jobs []sim.Job, cfg scheduler.Config) accuracy {
	s := scheduler.New(cfg)
	at := map[string]time.Time{}
	seen := map[string]bool{}
	var ferr error
	opt := sim.Options{Observe: func(snap *scheduler.Snapshot, _ *scheduler.Decision) {
		fresh := false
		for i := range snap.Jobs {
			if j := &snap.Jobs[i]; j.State == scheduler.Pending && !seen[j.ID] {
				fresh = true
			}
		}
		if !fresh || ferr != nil {
			return
		}
		f, err := s.Forecast(snap)
		if err != nil {
			ferr = err
			return
		}
		for _, e := range f.Jobs {
			if !seen[e.Job] {
				seen[e.Job] = true
				at[e.Job] = e.Start
			}
		}
	}}
	res, err := sim.Run(c, jobs, cfg, opt)
	require.NoError(t, err)
	require.NoError(t, ferr)
	start := sim.DefaultStart()
	var a accuracy
	var sum, sumWaited, signed, waits float64
	noLater, exact := 0, 0
	for i := range res.Jobs {
		r := &res.Jobs[i]
		a.jobs++
		f, ok := at[r.ID]
		if !ok || f.IsZero() || r.Attempts == 0 {
			continue
		}
		a.forecast++
		d := start.Add(r.Start).Sub(f)
		sum += math.Abs(d.Seconds())
		signed += d.Seconds()
		waits += (r.Start - r.Submit).Seconds()
		if d <= 0 {
			noLater++
		}
		if d == 0 {
			exact++
		}
		if f.After(start.Add(r.Submit)) || r.Start > r.Submit {
			a.waited++
			sumWaited += math.Abs(d.Seconds())
		}
	}
	if a.forecast > 0 {
		a.mae = time.Duration(sum / float64(a.forecast) * float64(time.Second))
		a.bias = time.Duration(signed / float64(a.forecast) * float64(time.Second))
		a.wait = time.Duration(waits / float64(a.forecast) * float64(time.Second))
		a.noLater = float64(noLater) / float64(a.forecast)
		a.exact = float64(exact) / float64(a.forecast)
	}
	if a.waited > 0 {
		a.maeWaited = time.Duration(sumWaited / float64(a.waited) * float64(time.Second))
	}
	return a
}

// TestForecastAccuracy replays the first 400 jobs of the KTH-SP2 log
// (100 one-GPU nodes, limits the users' requested times) and of the
// Philly trace (16 nodes of 8 GPUs, limits the run times), FCFS, under
// conservative backfill and EASY. Under conservative backfill every
// forecast made at submission is the job's reservation, a promise that
// later arrivals (all of lower priority in FCFS) and early ends do not
// move later: every job starts no later than forecast. Skipped when the
// traces are absent.
func TestForecastAccuracy(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("replays two traces with a forecast at every arrival; skipped in short mode and under the race detector")
	}
	for _, tc := range forecastTraces(t, 400) {
		for _, mode := range []scheduler.BackfillMode{scheduler.Conservative, scheduler.EASY} {
			a := forecastAccuracy(t, tc.cluster, tc.jobs, scheduler.Config{Backfill: mode, Order: scheduler.TierOrder{}})
			t.Logf("%s, %v: %v", tc.name, mode, a)
			require.Positive(t, a.forecast)
			if mode == scheduler.Conservative {
				require.Equal(t, 1.0, a.noLater, "%s: a job started after its forecast", tc.name)
			}
		}
	}
}

// TestForecastAccuracyReport is the replay of TestForecastAccuracy at
// the size given by -forecast.jobs (-1: whole traces), for the figures
// of BENCHMARKS.md:
//
//	go test ./scheduler/sim -run TestForecastAccuracyReport -forecast.jobs=-1 -v
//
// -forecast.only=KTH (or Philly) replays one trace.
func TestForecastAccuracyReport(t *testing.T) {
	if *forecastJobs == 0 {
		t.Skip("set -forecast.jobs=N (or -1 for whole traces) to measure forecast accuracy in replay")
	}
	for _, tc := range forecastTraces(t, *forecastJobs) {
		if !strings.Contains(tc.name, *forecastOnly) {
			continue
		}
		for _, mode := range []scheduler.BackfillMode{scheduler.EASY, scheduler.Conservative} {
			a := forecastAccuracy(t, tc.cluster, tc.jobs, scheduler.Config{Backfill: mode, Order: scheduler.TierOrder{}})
			t.Logf("%s, %v: %v", tc.name, mode, a)
		}
	}
}

// forecastTrace is one replay of the accuracy tests.
type forecastTrace struct {
	name    string
	cluster topology.Cluster
	jobs    []sim.Job
}

// forecastTraces reads the first n jobs (all when n < 0) of KTH-SP2 and
// of Philly, skipping the test when a trace is absent.
func forecastTraces(t *testing.T, n int) []forecastTrace {
	first := func(jobs []sim.Job) []sim.Job {
		if n >= 0 && n < len(jobs) {
			return jobs[:n]
		}
		return jobs
	}
	kth, err := trace.Read(tracePath(t, "swf/KTH-SP2-1996-2-predictsim-filtered.swf"), "swf")
	require.NoError(t, err)
	philly, err := trace.Read(tracePath(t, "gpu/philly-pollux-osdi21-normalized.csv"), "csv")
	require.NoError(t, err)
	return []forecastTrace{
		{"KTH-SP2 on 100 processors", sim.Uniform(100, 1), first(simJobs(kth, 1))},
		{"Philly on 16×8 GPUs", sim.Uniform(16, 8), first(simJobs(philly, 8))},
	}
}

// tracePath is sharedTrace for a checkout next to the shared directory,
// or one level further down (a work tree in a directory of work trees);
// it skips the test when the trace is in neither.
func tracePath(t *testing.T, rel string) string {
	t.Helper()
	root := repoRoot(t)
	for _, up := range []string{"..", filepath.Join("..", "..")} {
		p := filepath.Join(root, up, "shared", "traces", rel)
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skipf("trace %s not available next to the repository", rel)
	return ""
}
