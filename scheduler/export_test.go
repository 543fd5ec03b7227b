package scheduler

// NewWithoutMemo returns a scheduler whose Steps remember nothing
// between jobs and search for victims for every job that may preempt:
// the reference that the memos and shortcuts must agree with.
func NewWithoutMemo(cfg Config) *Scheduler {
	return &Scheduler{cfg: cfg, noMemo: true}
}
