package controller

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Metrics are the scheduler's Prometheus metrics.
type Metrics struct {
	// Registry holds every metric below.
	Registry *prometheus.Registry

	StepSeconds  prometheus.Histogram
	PodsBound    prometheus.Counter
	BindErrors   prometheus.Counter
	Evictions    *prometheus.CounterVec
	Pending      *prometheus.GaugeVec
	Promises     *prometheus.CounterVec
	ConfigValid  prometheus.Gauge
	IsLeader     prometheus.Gauge
	StepsRun     prometheus.Counter
	StatusWrites prometheus.Counter
}

// NewMetrics registers the metrics on a new registry (with the Go and
// process collectors).
func NewMetrics() *Metrics {
	r := prometheus.NewRegistry()
	m := &Metrics{
		Registry: r,
		StepSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name: "gpusched_step_duration_seconds", Help: "Time of one scheduling pass: snapshot, Step and decision, without the API calls.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 2, 18)}),
		PodsBound: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "gpusched_pods_bound_total", Help: "Pods bound to a node through the Binding API."}),
		BindErrors: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "gpusched_bind_errors_total", Help: "Bindings the API server refused."}),
		Evictions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gpusched_evictions_total", Help: "Pods evicted through the Eviction API, by reason (preempted, time-limit, node-down)."}, []string{"reason"}),
		Pending: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "gpusched_pending_pods", Help: "Pods waiting after the last pass, by reason (gpusched's pending reasons, reserved, and the adapter's problems)."}, []string{"reason"}),
		Promises: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gpusched_promises_total", Help: "Reserved jobs that started, by whether they started no later than their last promised start (kept) or after it (late)."}, []string{"result"}),
		ConfigValid: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "gpusched_config_valid", Help: "1 when the ConfigMap parsed, 0 when the scheduler runs on its last good configuration."}),
		IsLeader: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "gpusched_leader", Help: "1 while this replica is the leader."}),
		StepsRun: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "gpusched_steps_total", Help: "Scheduling passes run."}),
		StatusWrites: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "gpusched_status_writes_total", Help: "PodScheduled condition updates written."}),
	}
	r.MustRegister(m.StepSeconds, m.PodsBound, m.BindErrors, m.Evictions, m.Pending, m.Promises, m.ConfigValid, m.IsLeader,
		m.StepsRun, m.StatusWrites, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.ConfigValid.Set(1)
	return m
}
