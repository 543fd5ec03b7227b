package sim_test

import (
	"container/heap"
	"slices"

	"github.com/gpusched/gpusched/internal/trace"
)

// textbookEASY replays tr on a flat pool of n processors with textbook
// EASY backfilling computed on processor counts, FCFS, requested times
// as limits, and returns each job's start (seconds). It follows the
// simulator's event order: at each instant all completions, then all
// arrivals, then one scheduling pass. (A job killed at its limit counts
// among the completions here; the simulator's first Step at that instant
// still sees its processors held: see the package doc.) A pass starts
// queue heads while they fit; the head that does not fit gets the shadow
// time (the earliest end, by limits, at which enough processors are
// free) and the extra processors (free at the shadow time minus what it
// needs); a later job (in queue order, or by requested time when sjbf)
// starts if it fits the free processors and either ends by the shadow
// time or fits the extra ones, which it then uses up.
//
// With perEvent it instead follows the event order of the pyss simulator
// that produced the published figures: at each instant every arrival (in
// trace order) and then every completion (in the order the jobs started)
// is applied on its own and followed by a pass, and a job whose limit
// ends at the instant counts as gone before its completion is applied.
func textbookEASY(tr *trace.Trace, n int, sjbf, perEvent bool) []int64 {
	jobs := tr.Jobs
	start := make([]int64, len(jobs))
	var running, queue []int
	ends := &endHeap{}
	next, seq := 0, int64(0)
	now := int64(0)
	run := func(k int) {
		start[k] = now
		running = append(running, k)
		heap.Push(ends, [3]int64{now + min(jobs[k].Run, jobs[k].Limit), seq, int64(k)})
		seq++
	}
	pass := func() {
		free := n
		for _, k := range running {
			if start[k]+jobs[k].Limit > now {
				free -= jobs[k].Procs
			}
		}
		for len(queue) > 0 && jobs[queue[0]].Procs <= free {
			run(queue[0])
			free -= jobs[queue[0]].Procs
			queue = queue[1:]
		}
		if len(queue) < 2 {
			return
		}
		// Shadow time and extra processors of the head, by limits.
		head := jobs[queue[0]]
		byEnd := slices.DeleteFunc(slices.Clone(running), func(k int) bool { return start[k]+jobs[k].Limit <= now })
		slices.SortFunc(byEnd, func(a, b int) int {
			return int(jobs[a].Limit+start[a]) - int(jobs[b].Limit+start[b])
		})
		shadow, avail := int64(0), free
		for _, k := range byEnd {
			end := start[k] + jobs[k].Limit
			if avail >= head.Procs && end > shadow {
				break // every job ending at the shadow time is counted
			}
			avail += jobs[k].Procs
			shadow = end
		}
		extra := avail - head.Procs
		tail := slices.Clone(queue[1:])
		if sjbf {
			slices.SortStableFunc(tail, func(a, b int) int { return int(jobs[a].Limit - jobs[b].Limit) })
		}
		for _, k := range tail {
			j := jobs[k]
			long := now+j.Limit > shadow
			if j.Procs > free || long && j.Procs > extra {
				continue
			}
			free -= j.Procs
			if long {
				extra -= j.Procs
			}
			run(k)
			queue = slices.DeleteFunc(queue, func(x int) bool { return x == k })
		}
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
		end := func() {
			k := int(heap.Pop(ends).([3]int64)[2])
			running = slices.DeleteFunc(running, func(x int) bool { return x == k })
		}
		if !perEvent {
			for ends.Len() > 0 && (*ends)[0][0] == now {
				end()
			}
			for next < len(jobs) && jobs[next].Submit == now {
				queue = append(queue, next)
				next++
			}
			pass()
			continue
		}
		for next < len(jobs) && jobs[next].Submit == now {
			queue = append(queue, next)
			next++
			pass()
		}
		for ends.Len() > 0 && (*ends)[0][0] == now {
			end()
			pass()
		}
	}
	return start
}

// endHeap holds (end, start sequence, job) triples, earliest end first
// and, at equal ends, the job started first.
type endHeap [][3]int64

func (h endHeap) Len() int { return len(h) }
func (h endHeap) Less(i, j int) bool {
	return h[i][0] < h[j][0] || h[i][0] == h[j][0] && h[i][1] < h[j][1]
}
func (h endHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *endHeap) Push(x any)   { *h = append(*h, x.([3]int64)) }
func (h *endHeap) Pop() any {
	o := *h
	x := o[len(o)-1]
	*h = o[:len(o)-1]
	return x
}
