package controller

import (
	"context"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// LeaderOptions configure leader election on a Lease.
type LeaderOptions struct {
	// Namespace and Name locate the Lease.
	Namespace, Name string
	// Identity names this replica (the pod name, say); it must be unique.
	Identity string
	// LeaseDuration, RenewDeadline and RetryPeriod are client-go's
	// (defaults 15s, 10s, 2s, as kube-scheduler's).
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// RunAsLeader starts the informers at once (so that readiness reflects
// synced caches and a new leader starts warm), waits to lead on the Lease,
// then schedules until ctx ends or leadership is lost. A new leader
// rebuilds everything from the API: what is bound is running, what is
// not is pending; nothing in memory is needed to be right, only the
// plan's promises and the fair-share usage start afresh.
func (c *Controller) RunAsLeader(ctx context.Context, client kubernetes.Interface, lo LeaderOptions) error {
	if lo.LeaseDuration <= 0 {
		lo.LeaseDuration = 15 * time.Second
	}
	if lo.RenewDeadline <= 0 {
		lo.RenewDeadline = 10 * time.Second
	}
	if lo.RetryPeriod <= 0 {
		lo.RetryPeriod = 2 * time.Second
	}
	lock, err := resourcelock.New(resourcelock.LeasesResourceLock, lo.Namespace, lo.Name, client.CoreV1(), client.CoordinationV1(),
		resourcelock.ResourceLockConfig{Identity: lo.Identity})
	if err != nil {
		return err
	}
	if err := c.Start(ctx); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var runErr error
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: lock, LeaseDuration: lo.LeaseDuration, RenewDeadline: lo.RenewDeadline, RetryPeriod: lo.RetryPeriod,
		ReleaseOnCancel: true, Name: lo.Name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				c.m.IsLeader.Set(1)
				c.log.Info("leading", "identity", lo.Identity)
				runErr = c.Run(ctx)
			},
			OnStoppedLeading: func() {
				c.m.IsLeader.Set(0)
				c.log.Info("not leading", "identity", lo.Identity)
				cancel()
			},
		},
	})
	if err != nil {
		return err
	}
	le.Run(ctx)
	return runErr
}
