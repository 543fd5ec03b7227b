package e2e

import (
	"fmt"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/gpusched/gpusched/examples/kubescheduler/controller"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// virtualClock is the scheduler's clock in tests that let hours pass.
type virtualClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *virtualClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *virtualClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// Three teams with shares 50, 30 and 20 keep the cluster saturated with
// one-hour jobs; over 30 virtual hours their GPU-hours converge to their
// shares.
func TestThreeTeamsConvergeToTheirShares(t *testing.T) {
	e := newEnv(t)
	e.mkNodes("n", 2, uniform(8))
	e.configMap(`{"teams": [{"name": "team-a", "share": 50}, {"name": "team-b", "share": 30}, {"name": "team-c", "share": 20}]}`, "")
	clock := &virtualClock{now: time.Now()}
	e.start("", controller.Options{Clock: clock.Now})
	teams := []string{"team-a", "team-b", "team-c"}
	const perTeam, rounds, gpus = 320, 30, 16
	var pods []*v1.Pod
	for _, ns := range teams {
		for i := range perTeam {
			pods = append(pods, gpuPod(ns, fmt.Sprintf("j-%03d", i), 1, timeLimit(time.Hour)))
		}
	}
	e.create(pods...)
	hours := map[string]int{}
	running := func() map[string][]string {
		out := map[string][]string{}
		for _, ns := range teams {
			l, err := e.admin.CoreV1().Pods(ns).List(e.ctx, metav1.ListOptions{FieldSelector: "status.phase!=Succeeded"})
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range l.Items {
				if p.Spec.NodeName != "" {
					out[ns] = append(out[ns], p.Name)
				}
			}
		}
		return out
	}
	for r := range rounds {
		var now map[string][]string
		e.waitFor(fmt.Sprintf("round %d: the cluster full", r), 60*time.Second, func() bool {
			now = running()
			n := 0
			for _, l := range now {
				n += len(l)
			}
			return n == gpus
		})
		for ns, l := range now {
			hours[ns] += len(l)
		}
		clock.advance(time.Hour)
		for ns, l := range now {
			if err := parallel(len(l), func(i int) error {
				p, err := e.admin.CoreV1().Pods(ns).Get(e.ctx, l[i], metav1.GetOptions{})
				if err != nil {
					return err
				}
				p.Status.Phase = v1.PodSucceeded
				_, err = e.admin.CoreV1().Pods(ns).UpdateStatus(e.ctx, p, metav1.UpdateOptions{})
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}
	}
	total := float64(rounds * gpus)
	for i, ns := range teams {
		want := []float64{0.5, 0.3, 0.2}[i]
		got := float64(hours[ns]) / total
		t.Logf("%s: %d GPU-hours, %.1f%% (share %.0f%%)", ns, hours[ns], 100*got, 100*want)
		if math.Abs(got-want) > 0.05 {
			t.Errorf("%s got %.1f%% of the GPU-hours, share %.0f%%", ns, 100*got, 100*want)
		}
	}
}
