package scheduler

// NewWithoutMemo returns a scheduler whose Steps remember nothing
// between jobs and search for victims for every job that may preempt:
// the reference that the memos and shortcuts must agree with.
func NewWithoutMemo(cfg Config) *Scheduler {
	return &Scheduler{cfg: cfg, noMemo: true}
}

// ForecastPlan is Forecast, with the reservations the forecast made of
// its own for the jobs the Step left waiting.
func ForecastPlan(s *Scheduler, snap *Snapshot) (Forecast, []Reservation, error) {
	return s.forecast(snap, true)
}
