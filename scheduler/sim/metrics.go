package sim

import (
	"math"
	"math/bits"
	"slices"
	"time"
)

// Summary aggregates the metrics of a run. Wait, bounded slowdown and
// flow time are over the jobs that finished (completed, killed or
// dropped); unfinished jobs are only counted.
type Summary struct {
	// Jobs is the number of input jobs; Finished those that finished,
	// Unfinished those that never did.
	Jobs, Finished, Unfinished int
	// Completed, KilledAtLimit and Dropped split Finished by outcome.
	Completed, KilledAtLimit, Dropped int
	// Preemptions counts evictions with reason preempted; NodeDown those
	// with reason node-down.
	Preemptions, NodeDown int
	// Steps counts the calls of Step.
	Steps int
	// Promised counts the jobs given a promised start before they first
	// started (see [JobResult.Promised]); PromisesKept those of them that
	// started, and no later than their first promise.
	Promised, PromisesKept int
	// Makespan is the last finish minus the first submit.
	Makespan time.Duration
	// Utilization is the GPU-seconds held by jobs (running or evicting)
	// from the first submit to the last finish, over GPUs × Makespan:
	// at most 1. (GPUHours counts all GPU time held, also after the
	// last finish by jobs that never finish.)
	Utilization float64
	// GPUHours is the GPU time held by jobs, in hours.
	GPUHours float64
	// StrandedGPUHours is the GPU time stranded by CPU or memory (see
	// [Point.Stranded]), in hours; zero on a cluster where no node limits
	// CPU or memory.
	StrandedGPUHours float64
	// Wait statistics (see [JobResult.Wait]); P95Wait is a nearest-rank
	// percentile, MedianWait the middle value (mean of the two middle
	// values for an even count).
	MeanWait, MedianWait, P95Wait, MaxWait time.Duration
	// MeanBoundedSlowdown and MaxBoundedSlowdown are over
	// [JobResult.BoundedSlowdown].
	MeanBoundedSlowdown, MaxBoundedSlowdown float64
	// MeanFlowTime is the mean of Finish − Submit (job completion time).
	MeanFlowTime time.Duration
	// Teams holds per-team figures, sorted by team name.
	Teams []TeamSummary
	// Jain is Jain's fairness index (Σx)²/(n·Σx²) over the teams, with x
	// a team's GPU-hours divided by its share in [Options.Teams] (1 for
	// teams not listed there or with no share): 1 when every team got
	// GPU time in proportion to its share, 1/n when one team got all.
	// It is 1 for a single team and 0 when nothing ran.
	Jain float64
	// StepP50 and StepP99 are nearest-rank percentiles of the Step
	// latency; zero without [Options.Clock].
	StepP50, StepP99 time.Duration
}

// TeamSummary is one team's figures.
type TeamSummary struct {
	// Team is the team's name ("" for jobs without a team).
	Team string
	// Jobs counts the team's jobs.
	Jobs int
	// GPUHours is the GPU time its jobs held; Share its fraction of all
	// GPU time held.
	GPUHours, Share float64
	// Entitled is the fraction of the GPU time its share entitles it to:
	// its share in [Options.Teams] (1 for a team not listed there or
	// with no share, as [Summary.Jain] weighs it) over the sum of the
	// shares of the teams jobs name. Share against Entitled tells
	// whether a policy gave each team what it is due.
	Entitled float64
	// MeanWait and MeanBoundedSlowdown are over its finished jobs.
	MeanWait            time.Duration
	MeanBoundedSlowdown float64
}

// Point is the cluster over one interval of time, averaged over it.
type Point struct {
	// At is the middle of the interval, as an offset from [Options.Start]
	// (or the last time the run may reach, for an interval of a run of
	// about 292 years that reaches past it; see [ErrTimeRange]).
	At time.Duration
	// Width is the length of the interval.
	Width time.Duration
	// Utilization is the mean fraction of the cluster's GPUs held.
	Utilization float64
	// Queue and Running are the mean numbers of pending and running jobs.
	Queue, Running float64
	// TeamShare[k] is team [Result.Teams][k]'s fraction of the GPU time
	// held during the interval (all zero when nothing ran).
	TeamShare []float64
	// Pending[k] is the mean number of pending jobs that the latest
	// decision gave reason [Result.Reasons][k] (a job that arrived since
	// has none until the next Step, at the same instant).
	Pending []float64
	// Stranded is the mean number of GPUs stranded by CPU or memory: free
	// GPUs of ready nodes whose free CPU or memory cannot hold one member
	// of the pending job that asks least of it or, with no job pending
	// (or none asking for it), is used up. Zero on a cluster where no
	// node limits CPU or memory.
	Stranded float64
	// CPU and Memory are the mean fractions of the CPU and memory of the
	// nodes that limit them held by jobs (zero where none does).
	CPU, Memory float64
}

// result gathers the Result once the events have run out.
func (r *runner) result() *Result {
	out := &Result{Jobs: r.res, Teams: r.samp.teams}
	s := &out.Summary
	s.Jobs = len(r.jobs)
	s.Steps = r.steps
	s.NodeDown = r.nodeDown
	s.GPUHours = r.gpuSec / 3600
	s.StrandedGPUHours = r.strandedSec / 3600
	byTeam := r.tally(s)
	s.Teams, s.Jain = r.teamSummaries(byTeam)
	if len(r.lat) > 0 {
		lat := slices.Clone(r.lat)
		slices.Sort(lat)
		s.StepP50 = nearestRank(lat, 0.50)
		s.StepP99 = nearestRank(lat, 0.99)
	}
	var of []int32
	out.Reasons, of = r.reasons.sorted()
	var cpuCap, memCap int
	if r.rb != nil {
		cpuCap, memCap = r.rb.cpuCap, r.rb.memCap
	}
	out.Series = r.samp.points(r.gpus, cpuCap, memCap, of)
	return out
}

// teamTally is what the jobs of one team add up to.
type teamTally struct {
	jobs, done int // jobs, and those finished
	wait       durSum
	bsld       float64
}

// tally fills the job counts, outcomes, waits, slowdowns, makespan and
// utilization of s from the job results, and returns the per-team sums.
func (r *runner) tally(s *Summary) []teamTally {
	byTeam := make([]teamTally, len(r.teams.names))
	waits := make([]time.Duration, 0, len(r.res))
	first, last := time.Duration(math.MaxInt64), time.Duration(math.MinInt64)
	var sumWait, sumFlow durSum
	var sumB float64
	for i := range r.res {
		j := &r.res[i]
		first = min(first, j.Submit)
		tt := &byTeam[r.st[i].team]
		tt.jobs++
		s.Preemptions += j.Preemptions
		if j.Promised {
			s.Promised++
			if j.Attempts > 0 && j.Start <= j.Promise {
				s.PromisesKept++
			}
		}
		switch j.Outcome {
		case Unfinished:
			s.Unfinished++
			continue
		case Completed:
			s.Completed++
		case Killed:
			s.KilledAtLimit++
		case Dropped:
			s.Dropped++
		}
		s.Finished++
		last = max(last, j.Finish)
		waits = append(waits, j.Wait)
		sumWait.add(j.Wait)
		sumFlow.add(j.Flow())
		b := j.BoundedSlowdown()
		sumB += b
		s.MaxBoundedSlowdown = max(s.MaxBoundedSlowdown, b)
		tt.done++
		tt.wait.add(j.Wait)
		tt.bsld += b
	}
	if s.Finished == 0 {
		return byTeam
	}
	s.MeanWait = sumWait.mean(s.Finished)
	s.MeanFlowTime = sumFlow.mean(s.Finished)
	s.MeanBoundedSlowdown = sumB / float64(s.Finished)
	waitStats(s, waits)
	s.Makespan = last - first
	if s.Makespan > 0 && r.gpus > 0 {
		// At most 1 but for rounding in the sum of float seconds.
		s.Utilization = min(r.doneSec/(float64(r.gpus)*s.Makespan.Seconds()), 1)
	}
	return byTeam
}

// waitStats sets the maximum, p95 and median of the waits, which it sorts;
// there is at least one.
func waitStats(s *Summary, waits []time.Duration) {
	slices.Sort(waits)
	s.MaxWait = waits[len(waits)-1]
	s.P95Wait = nearestRank(waits, 0.95)
	m := len(waits) / 2
	if len(waits)%2 == 1 {
		s.MedianWait = waits[m]
	} else {
		// Halve the gap, not the sum, which could overflow.
		s.MedianWait = waits[m-1] + (waits[m]-waits[m-1])/2
	}
}

// teamSummaries returns each team's figures, in name order, and Jain's
// index over the teams' GPU-hours weighted by their shares.
func (r *runner) teamSummaries(byTeam []teamTally) ([]TeamSummary, float64) {
	weight := map[string]float64{}
	for _, t := range r.opt.Teams {
		if t.Share > 0 {
			weight[t.Name] = t.Share
		}
	}
	var out []TeamSummary
	of := func(name string) float64 {
		if w := weight[name]; w > 0 {
			return w
		}
		return 1
	}
	var sx, sxx, sw float64
	for _, name := range r.teams.names {
		sw += of(name)
	}
	for k, name := range r.teams.names {
		tt := &byTeam[k]
		ts := TeamSummary{Team: name, Jobs: tt.jobs, GPUHours: r.teams.sec[k] / 3600}
		if r.gpuSec > 0 {
			ts.Share = r.teams.sec[k] / r.gpuSec
		}
		if tt.done > 0 {
			ts.MeanWait = tt.wait.mean(tt.done)
			ts.MeanBoundedSlowdown = tt.bsld / float64(tt.done)
		}
		w := of(name)
		ts.Entitled = w / sw
		out = append(out, ts)
		x := ts.GPUHours / w
		sx += x
		sxx += x * x
	}
	jain := 0.0
	if sxx > 0 {
		jain = sx * sx / (float64(len(byTeam)) * sxx)
	}
	return out, jain
}

// durSum is an exact sum of durations in 128 bits, two's complement (hi
// the upper word). A sum of time.Duration, int64 nanoseconds, overflows
// at about 292 years, which the waits of a long trace on a small cluster
// exceed; a mean of durations always fits in a Duration.
type durSum struct {
	hi, lo uint64
}

func (s *durSum) add(d time.Duration) {
	var carry uint64
	s.lo, carry = bits.Add64(s.lo, uint64(d), 0)
	ext := uint64(0) // sign extension of d
	if d < 0 {
		ext = math.MaxUint64
	}
	s.hi, _ = bits.Add64(s.hi, ext, carry)
}

// mean returns the sum divided by n > 0, truncated toward zero as integer
// division of Durations is.
func (s durSum) mean(n int) time.Duration {
	hi, lo := s.hi, s.lo
	neg := int64(hi) < 0
	if neg { // negate: invert and add one
		var borrow uint64
		lo, borrow = bits.Sub64(0, lo, 0)
		hi, _ = bits.Sub64(0, hi, borrow)
	}
	// The quotient fits in 64 bits (hi < n) because the mean of n
	// Durations lies within the range of a Duration.
	q, _ := bits.Div64(hi, lo, uint64(n))
	if neg {
		return -time.Duration(q)
	}
	return time.Duration(q)
}

// nearestRank returns the p-quantile of sorted v by the nearest-rank
// rule: the smallest value with at least p·n values at or below it.
func nearestRank(v []time.Duration, p float64) time.Duration {
	k := int(math.Ceil(p*float64(len(v)))) - 1
	return v[min(max(k, 0), len(v)-1)]
}

// sampler keeps time-weighted averages of the cluster state in at most
// max buckets of equal width from origin, doubling the width (merging
// bucket pairs) whenever the run outgrows them. Times run up to
// math.MaxInt64 after origin: the arithmetic never forms the end of a
// bucket past the time being added, nor a width of more than
// math.MaxInt64. A bucket keeps the GPU time of the teams that held GPUs
// during it only, so adding an interval costs O(teams holding GPUs).
type sampler struct {
	max    int
	origin time.Duration
	width  time.Duration
	teams  []string
	dt     []float64 // seconds covered per bucket
	busy   []float64 // integrals per bucket
	queue  []float64
	run    []float64
	team   []map[int32]float64 // per bucket: GPU-seconds by team index
	// Per bucket: integrals of the extras, and of the pending jobs by
	// reason number (see reasonBook).
	stranded, cpu, mem []float64
	why                [][]float64
}

// extras are the figures of the cluster state beyond GPUs that a
// sampler integrates.
type extras struct {
	stranded, cpu, mem int
	reasons            []int // pending jobs by reason number
}

func newSampler(max int, origin time.Duration, teams []string) sampler {
	return sampler{max: max, origin: origin, width: time.Second, teams: teams}
}

// add integrates a constant state over [from, to), the teams' GPUs as
// held in tb.
func (s *sampler) add(from, to time.Duration, busy, queue, running int, tb *teamBook, x *extras) {
	if to <= from || from < s.origin {
		return
	}
	// Merge while the buckets cover less than [origin, to): while
	// width·max < to−origin, which is (to−origin−1)/max >= width without
	// the product, which could overflow.
	for (to-s.origin-1)/time.Duration(s.max) >= s.width {
		s.merge()
	}
	for from < to {
		b := int((from - s.origin) / s.width)
		start := s.origin + s.width*time.Duration(b)
		end := to
		if to-start > s.width {
			end = start + s.width
		}
		for len(s.dt) <= b {
			s.dt = append(s.dt, 0)
			s.busy = append(s.busy, 0)
			s.queue = append(s.queue, 0)
			s.run = append(s.run, 0)
			s.team = append(s.team, nil)
			s.stranded = append(s.stranded, 0)
			s.cpu = append(s.cpu, 0)
			s.mem = append(s.mem, 0)
			s.why = append(s.why, nil)
		}
		d := (end - from).Seconds()
		s.dt[b] += d
		s.busy[b] += float64(busy) * d
		s.queue[b] += float64(queue) * d
		s.run[b] += float64(running) * d
		s.stranded[b] += float64(x.stranded) * d
		s.cpu[b] += float64(x.cpu) * d
		s.mem[b] += float64(x.mem) * d
		for k, c := range x.reasons {
			if c == 0 {
				continue
			}
			for len(s.why[b]) <= k {
				s.why[b] = append(s.why[b], 0)
			}
			s.why[b][k] += float64(c) * d
		}
		for _, k := range tb.holders() {
			if s.team[b] == nil {
				s.team[b] = map[int32]float64{}
			}
			s.team[b][k] += float64(tb.busy[k]) * d
		}
		from = end
	}
}

// merge doubles the bucket width.
func (s *sampler) merge() {
	n := (len(s.dt) + 1) / 2
	for i := range n {
		a, b := 2*i, 2*i+1
		s.dt[i], s.busy[i], s.queue[i], s.run[i] = s.dt[a], s.busy[a], s.queue[a], s.run[a]
		s.team[i] = s.team[a]
		s.stranded[i], s.cpu[i], s.mem[i], s.why[i] = s.stranded[a], s.cpu[a], s.mem[a], s.why[a]
		if b < len(s.dt) {
			s.stranded[i] += s.stranded[b]
			s.cpu[i] += s.cpu[b]
			s.mem[i] += s.mem[b]
			for k, v := range s.why[b] {
				for len(s.why[i]) <= k {
					s.why[i] = append(s.why[i], 0)
				}
				s.why[i][k] += v
			}
			s.dt[i] += s.dt[b]
			s.busy[i] += s.busy[b]
			s.queue[i] += s.queue[b]
			s.run[i] += s.run[b]
			for k, v := range s.team[b] {
				if s.team[i] == nil {
					s.team[i] = map[int32]float64{}
				}
				s.team[i][k] += v
			}
		}
	}
	clear(s.team[n:])
	clear(s.why[n:])
	s.dt, s.busy, s.queue, s.run, s.team = s.dt[:n], s.busy[:n], s.queue[:n], s.run[:n], s.team[:n]
	s.stranded, s.cpu, s.mem, s.why = s.stranded[:n], s.cpu[:n], s.mem[:n], s.why[:n]
	// A width past math.MaxInt64/2 covers more than half of all times
	// after origin, so at most two buckets were merged into one that
	// covers them all.
	if s.width > math.MaxInt64/2 {
		s.width = math.MaxInt64
	} else {
		s.width *= 2
	}
}

// points returns the buckets as points: fractions of gpus GPUs and of
// cpuCap and memCap, and the pending jobs of reason number of[k] in
// column k.
func (s *sampler) points(gpus, cpuCap, memCap int, of []int32) []Point {
	nt := len(s.teams)
	// The middle of a bucket that reaches past the last time after origin
	// a Duration holds is shown at that time.
	room := time.Duration(math.MaxInt64) - max(s.origin, 0)
	var out []Point
	for b, dt := range s.dt {
		if dt <= 0 {
			continue
		}
		mid := s.width * time.Duration(b) // at most room: the bucket holds a time added
		if mid > room-s.width/2 {
			mid = room
		} else {
			mid += s.width / 2
		}
		p := Point{
			At:        s.origin + mid,
			Width:     s.width,
			Queue:     s.queue[b] / dt,
			Running:   s.run[b] / dt,
			TeamShare: make([]float64, nt),
			Pending:   make([]float64, len(of)),
			Stranded:  s.stranded[b] / dt,
		}
		if cpuCap > 0 {
			p.CPU = s.cpu[b] / (float64(cpuCap) * dt)
		}
		if memCap > 0 {
			p.Memory = s.mem[b] / (float64(memCap) * dt)
		}
		for k, i := range of {
			if int(i) < len(s.why[b]) {
				p.Pending[k] = s.why[b][i] / dt
			}
		}
		if gpus > 0 {
			p.Utilization = s.busy[b] / (float64(gpus) * dt)
		}
		if s.busy[b] > 0 {
			for k, v := range s.team[b] {
				p.TeamShare[k] = v / s.busy[b]
			}
		}
		out = append(out, p)
	}
	return out
}
