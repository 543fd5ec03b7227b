package scheduler

// NewWithoutPreemptionMemo returns a scheduler whose Steps search for
// victims for every job that may preempt, remembering nothing between
// jobs: the reference that the preemption memos must agree with.
func NewWithoutPreemptionMemo(cfg Config) *Scheduler {
	return &Scheduler{cfg: cfg, noMemo: true}
}
