package sim_test

import (
	"container/heap"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/internal/trace"
	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/scheduler/sim"
)

// textbookConservative replays tr on a flat pool of n processors with
// conservative backfilling as Mu'alem and Feitelson (IEEE TPDS 2001)
// define it, computed on processor counts, FCFS, requested times as
// limits, and returns each job's start (seconds). Every waiting job holds
// a reservation: the earliest time from which enough processors are free
// for its whole limit, given the running jobs (until their limits) and
// the reservations of the others. At each instant (the simulator's event
// order, as in textbookEASY: all completions, then all arrivals, then one
// pass), the pass first compresses the schedule: each waiting job, in
// queue order, gives up its reservation and takes the earliest one it
// can, never later than before since its old one is free again; then each
// new job, in queue order, takes the earliest reservation it can; then
// every job whose reservation starts now starts.
func textbookConservative(tr *trace.Trace, n int) []int64 {
	jobs := tr.Jobs
	start := make([]int64, len(jobs))
	type held struct{ from, to, procs int64 }
	running := map[int]held{}  // by job: its processors until its limit
	reserved := map[int]held{} // by waiting job: its reservation
	var queue []int            // waiting jobs in FCFS order
	ends := &endHeap{}
	next, seq, now := 0, int64(0), int64(0)
	// earliest is the first t >= now at which p processors are free over
	// [t, t+l), with every reservation but skip's.
	earliest := func(p, l int64, skip int) int64 {
		type delta struct{ at, d int64 }
		var ev []delta
		free := int64(n)
		for _, h := range running {
			if h.to > now {
				free -= h.procs
				ev = append(ev, delta{h.to, h.procs})
			}
		}
		for k, h := range reserved {
			if k != skip {
				ev = append(ev, delta{h.from, -h.procs}, delta{h.to, h.procs})
			}
		}
		slices.SortFunc(ev, func(a, b delta) int { return int(a.at - b.at) })
		// Free processors on [times[i], times[i+1]).
		times, frees := []int64{now}, []int64{free}
		for _, e := range ev {
			at := max(e.at, now)
			if at != times[len(times)-1] {
				times, frees = append(times, at), append(frees, frees[len(frees)-1])
			}
			frees[len(frees)-1] += e.d
		}
		for k := 0; ; {
			if frees[k] < p {
				k++
				continue
			}
			t, m := times[k], k
			for m < len(times) && times[m] < t+l && frees[m] >= p {
				m++
			}
			if m == len(times) || times[m] >= t+l {
				return t
			}
			k = m + 1
		}
	}
	run := func(k int) {
		start[k] = now
		running[k] = held{now, now + jobs[k].Limit, int64(jobs[k].Procs)}
		heap.Push(ends, [3]int64{now + min(jobs[k].Run, jobs[k].Limit), seq, int64(k)})
		seq++
	}
	pass := func() {
		for _, k := range queue {
			if _, ok := reserved[k]; ok {
				t := earliest(int64(jobs[k].Procs), jobs[k].Limit, k)
				reserved[k] = held{t, t + jobs[k].Limit, int64(jobs[k].Procs)}
			}
		}
		for _, k := range queue {
			if _, ok := reserved[k]; !ok {
				t := earliest(int64(jobs[k].Procs), jobs[k].Limit, -1)
				reserved[k] = held{t, t + jobs[k].Limit, int64(jobs[k].Procs)}
			}
		}
		queue = slices.DeleteFunc(queue, func(k int) bool {
			if reserved[k].from != now {
				return false
			}
			delete(reserved, k)
			run(k)
			return true
		})
	}
	for next < len(jobs) || ends.Len() > 0 {
		switch {
		case ends.Len() == 0:
			now = jobs[next].Submit
		case next == len(jobs):
			now = (*ends)[0][0]
		default:
			now = min(jobs[next].Submit, (*ends)[0][0])
		}
		for ends.Len() > 0 && (*ends)[0][0] == now {
			delete(running, int(heap.Pop(ends).([3]int64)[2]))
		}
		for next < len(jobs) && jobs[next].Submit == now {
			queue = append(queue, next)
			next++
		}
		pass()
	}
	return start
}

// TestTextbookConservative replays the SWF logs of the shared trace
// directory (each on its header's processors, FCFS, requested times as
// limits) through the simulator under conservative backfill, which
// carries each decision's reservations into the next snapshot as plan,
// and compares every job's start with textbookConservative.
//
// The textbook counts processors, so a job compressed (or started now)
// onto processors that later reservations were counted on implicitly
// moves those reservations to other processors free at their starts;
// Step re-pins them explicitly (repinAt), keeping their starts. On
// lublin_256 and KTH-SP2 every start agrees, and the test requires it.
// On the two others a few still differ, and the test pins how many
// agree and the first that differs, and requires the mean bounded
// slowdown within 20% of the textbook's. The first difference of each:
//
//   - HPC2N (3,144 of 3,145): job 1388 starts at 2,571,530 s instead of
//     2,573,016 s. The textbook compresses each job once, in queue order;
//     when jobs behind 1388 (1401 started now, 1403 moved earlier) free
//     capacity during its run, Step gives it another chance to start now
//     (startKeptNow: work conservation) and the textbook does not.
//   - SDSC-SP2 (2,933 of 3,000; job 1277 is the first whose start
//     differs): the plans first part at 1,119,641 s, when job 570 reaches
//     its time limit (its run is 26 s longer), and the simulator Steps
//     twice at that instant. The first Step compresses
//     job 641 from 1,140,179 s to 1,136,579 s, as the textbook's pass
//     does; the second then compresses job 632 (32 processors, ahead of
//     641) from 1,147,379 s to 1,143,779 s, when 641 ends, and 634, 645
//     and 675 after it. The textbook makes one pass per instant, in which
//     632 came before 641 moved.
//
// Both are a second compression of a job ahead of one that moved
// earlier, which Step's protocol gives and the textbook's single pass
// does not: neither is about which processors reservations hold.
func TestTextbookConservative(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("replays thousands of jobs; skipped in short mode and under the race detector")
	}
	for _, tc := range []struct {
		file string
		jobs int // the first jobs of the log, to bound the time
		// agree is how many starts agree, and first the first job whose
		// start differs (see above); 0: all of them agree. Both are
		// pinned: a change either way changes how Step compresses.
		agree, first int
	}{
		{"swf/lublin_256.swf", 1500, 0, 0},
		{"swf/HPC2N-2002-2.2-first3170-alea.swf", 3170, 3144, 1388},
		{"swf/SDSC-SP2-1998-first4961-raw.swf", 3000, 2933, 1277},
		{"swf/KTH-SP2-1996-2-predictsim-filtered.swf", 3000, 0, 0},
	} {
		t.Run(tc.file, func(t *testing.T) {
			tr, err := trace.Read(sharedTrace(t, tc.file), "swf")
			require.NoError(t, err)
			tr.Jobs = tr.Jobs[:min(tc.jobs, len(tr.Jobs))]
			n := tr.MaxProcs
			if n == 0 {
				n = tr.MaxNodes
			}
			tr.Jobs = slices.DeleteFunc(tr.Jobs, func(j trace.Job) bool { return j.Procs > n })
			want := textbookConservative(tr, n)
			cfg := scheduler.Config{Backfill: scheduler.Conservative, Order: scheduler.TierOrder{}}
			res, err := sim.Run(sim.Uniform(n, 1), simJobs(tr, 1), cfg, sim.Options{})
			require.NoError(t, err)
			bsld := func(start func(i int) int64) float64 {
				sum := 0.0
				for i, j := range tr.Jobs {
					r := sim.JobResult{Wait: time.Duration(start(i)-j.Submit) * time.Second, Run: time.Duration(min(j.Run, j.Limit)) * time.Second}
					sum += r.BoundedSlowdown()
				}
				return sum / float64(len(tr.Jobs))
			}
			same, first := 0, -1
			for i := range want {
				if int64(res.Jobs[i].Start/time.Second) == want[i] {
					same++
				} else if first < 0 {
					first = i
				}
			}
			tb := bsld(func(i int) int64 { return want[i] })
			got := bsld(func(i int) int64 { return int64(res.Jobs[i].Start / time.Second) })
			t.Logf("%d of %d starts agree (first differing: job %d); mean bounded slowdown %.3f, textbook %.3f", same, len(want), first, got, tb)
			if tc.agree == 0 {
				require.Equal(t, len(want), same, "job %d starts at %v, the textbook at %d s", first, res.Jobs[max(first, 0)].Start, want[max(first, 0)])
				return
			}
			require.Equal(t, tc.agree, same, "starts that agree")
			require.Equal(t, tc.first, first, "the first job whose start differs")
			require.InEpsilon(t, tb, got, 0.2, "mean bounded slowdown")
		})
	}
}
