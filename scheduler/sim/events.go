package sim

import "time"

// eventKind orders the events of one instant: GPUs are released (evictions
// finished, jobs completed) before time limits fall due, nodes change
// state and new jobs arrive.
type eventKind uint8

const (
	evEvicted  eventKind = iota // an evicting job is gone
	evComplete                  // a running job finished its work
	evLimit                     // a running job reaches its time limit
	evNode                      // a node changes state
	evWake                      // a decision's NextWake: see runner.wake
)

// event is one entry of the event queue. Arrivals are not queued: they
// are read in submit order from a sorted list.
type event struct {
	at    time.Duration
	kind  eventKind
	seq   uint64 // insertion order, the last tie-break
	job   int32  // job index, or node-event index for evNode
	epoch uint32 // the job's attempt when queued; stale events are dropped
}

func (a *event) less(b *event) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	if a.kind != b.kind {
		return a.kind < b.kind
	}
	return a.seq < b.seq
}

// queue is a binary min-heap of events.
type queue struct {
	h   []event
	seq uint64
}

func (q *queue) len() int { return len(q.h) }

func (q *queue) push(e event) {
	e.seq = q.seq
	q.seq++
	q.h = append(q.h, e)
	i := len(q.h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !q.h[i].less(&q.h[p]) {
			break
		}
		q.h[i], q.h[p] = q.h[p], q.h[i]
		i = p
	}
}

// peek returns the earliest event; the queue must not be empty.
func (q *queue) peek() *event { return &q.h[0] }

func (q *queue) pop() event {
	top := q.h[0]
	n := len(q.h) - 1
	q.h[0] = q.h[n]
	q.h = q.h[:n]
	i := 0
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		m := l
		if r := l + 1; r < n && q.h[r].less(&q.h[l]) {
			m = r
		}
		if !q.h[m].less(&q.h[i]) {
			break
		}
		q.h[i], q.h[m] = q.h[m], q.h[i]
		i = m
	}
	return top
}
