package preempt

import "time"

// Worth decides whether preemption beats waiting. It preempts only when
// waiting would be worse: the victims need maxGrace to stop, so the
// preemptor could start no earlier than now + maxGrace; if, judged by the
// time limits of the running jobs, it can start without preemption by
// then (wait is its earliest start, as a duration from now, and canWait
// says such a start is known at all), it should wait instead.
//
// Worth reports true when !canWait or wait > maxGrace. A job whose start
// is unknown (running jobs without time limits, such as inference) is
// worth preempting for.
func Worth(maxGrace, wait time.Duration, canWait bool) bool {
	return !canWait || wait > maxGrace
}
