// Command kubescheduler runs gpusched as a Kubernetes secondary scheduler:
// pods that name it in spec.schedulerName (default "gpusched") are
// scheduled by gpusched's Step, bound through the Binding API and evicted
// through the Eviction API; one replica at a time leads on a Lease.
//
//	kubescheduler [-kubeconfig FILE] [-scheduler-name gpusched]
//	  [-config-namespace gpusched-system] [-config-name gpusched]
//	  [-leader-elect=true] [-lease-namespace gpusched-system] [-lease-name gpusched]
//	  [-listen :10259] [-kube-api-qps 200] [-kube-api-burst 400]
//	  [-workers 32] [-coalesce 50ms] [-podgroups auto|on|off] [-log-level info]
//
// It serves Prometheus metrics on /metrics, liveness on /healthz and
// readiness (informers synced) on /readyz. See README.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/gpusched/gpusched/examples/kubescheduler/controller"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "kubescheduler:", err)
		os.Exit(1)
	}
}

// flags are the command line.
type flags struct {
	kubeconfig, name, cmNS, cmName, leaseNS, leaseName, listen, podGroups, level *string
	elect                                                                        *bool
	qps                                                                          *float64
	burst, workers                                                               *int
	coalesce                                                                     *time.Duration
}

// parseFlags parses and checks the command line.
func parseFlags(args []string) (*flags, error) {
	fs := flag.NewFlagSet("kubescheduler", flag.ContinueOnError)
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig file; empty: in-cluster configuration")
	name := fs.String("scheduler-name", "gpusched", "spec.schedulerName of the pods to schedule")
	cmNS := fs.String("config-namespace", "gpusched-system", "namespace of the ConfigMap")
	cmName := fs.String("config-name", "gpusched", "name of the ConfigMap (keys config.json and policy.json)")
	elect := fs.Bool("leader-elect", true, "lead on a Lease so that one replica schedules at a time")
	leaseNS := fs.String("lease-namespace", "gpusched-system", "namespace of the Lease")
	leaseName := fs.String("lease-name", "gpusched", "name of the Lease")
	listen := fs.String("listen", ":10259", "address of /metrics, /healthz and /readyz")
	qps := fs.Float64("kube-api-qps", 200, "queries per second to the API server")
	burst := fs.Int("kube-api-burst", 400, "burst of queries to the API server")
	workers := fs.Int("workers", 32, "API calls in flight at once")
	coalesce := fs.Duration("coalesce", 50*time.Millisecond, "wait after an event so a burst makes one pass")
	podGroups := fs.String("podgroups", "auto", "watch scheduling.x-k8s.io PodGroups: auto, on or off")
	level := fs.String("log-level", "info", "debug, info, warn or error")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %v", fs.Args())
	}
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(*level)); err != nil {
		return nil, fmt.Errorf("-log-level: %v", err)
	}
	switch *podGroups {
	case "auto", "on", "off":
	default:
		return nil, fmt.Errorf("-podgroups: want auto, on or off, got %q", *podGroups)
	}
	return &flags{kubeconfig, name, cmNS, cmName, leaseNS, leaseName, listen, podGroups, level, elect, qps, burst, workers, coalesce}, nil
}

func run(args []string) error {
	f, err := parseFlags(args)
	if err != nil {
		return err
	}
	kubeconfig, name, cmNS, cmName, leaseNS, leaseName, listen, podGroups := f.kubeconfig, f.name, f.cmNS, f.cmName, f.leaseNS, f.leaseName, f.listen, f.podGroups
	elect, qps, burst, workers, coalesce := f.elect, f.qps, f.burst, f.workers, f.coalesce
	var lv slog.Level
	_ = lv.UnmarshalText([]byte(*f.level))
	log := slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: lv}))
	slog.SetDefault(log)

	var cfg *rest.Config
	if *kubeconfig != "" {
		cfg, err = clientcmd.BuildConfigFromFlags("", *kubeconfig)
	} else {
		cfg, err = rest.InClusterConfig()
	}
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = float32(*qps), *burst
	cfg.UserAgent = *name
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	m := controller.NewMetrics()
	c := controller.New(client, dyn, controller.Options{SchedulerName: *name, ConfigMapNamespace: *cmNS, ConfigMapName: *cmName,
		Coalesce: *coalesce, Workers: *workers, PodGroups: *podGroups, Logger: log, Metrics: m})

	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !c.Ready() {
			http.Error(w, "informers not synced", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	srv := &http.Server{Addr: *listen, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("http server", "error", err)
			stop()
		}
	}()
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()

	if !*elect {
		return c.Run(ctx)
	}
	id, _ := os.Hostname()
	if pod := os.Getenv("POD_NAME"); pod != "" {
		id = pod
	}
	err = c.RunAsLeader(ctx, client, controller.LeaderOptions{Namespace: *leaseNS, Name: *leaseName, Identity: id})
	if ctx.Err() == nil && err == nil {
		return errors.New("lost leadership")
	}
	return err
}
