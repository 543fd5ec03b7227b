package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// steps splits the output into the lines of each step, keyed by part and
// time ("1 10:00"), with runs of spaces collapsed.
func steps(out string) map[string][]string {
	m := map[string][]string{}
	part, cur := "", ""
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && f[0] == "part" {
			part = strings.TrimSuffix(f[1], ":")
		}
		if len(f) >= 2 && f[1] == "step" {
			cur = part + " " + f[0]
		}
		if cur != "" {
			m[cur] = append(m[cur], strings.Join(f, " "))
		}
	}
	return m
}

func requireLine(t *testing.T, s map[string][]string, at, prefix string) {
	t.Helper()
	for _, l := range s[at] {
		if strings.HasPrefix(l, prefix) {
			return
		}
	}
	require.Failf(t, "missing line", "step %s has no line starting %q:\n%s", at, prefix, strings.Join(s[at], "\n"))
}

func requireNoLine(t *testing.T, s map[string][]string, at, prefix string) {
	t.Helper()
	for _, l := range s[at] {
		require.False(t, strings.HasPrefix(l, prefix), "step %s has %q", at, l)
	}
}

func TestSeedScenario(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(&out))
	s := steps(out.String())
	require.Len(t, s, 8)

	// Step 1: X is preempted by P with its grace and requeue, and P gets
	// the 64 GPUs from now + 5m.
	requireLine(t, s, "1 10:00", "X P3 8 evict preempted by P, grace 5m, requeue=true")
	requireLine(t, s, "1 10:00", "P P1 64 reserved from 10:05 on n00-n07")
	requireNoLine(t, s, "1 10:00", "P P1 64 start")

	// Step 2: X still checkpoints; P waits for it, still promised 10:05.
	requireLine(t, s, "1 10:02", "X P3 8 still evicting since 10:00, gone by 10:05")
	requireLine(t, s, "1 10:02", "P P1 64 reserved from 10:05 on n00-n07 (waits for X to checkpoint)")
	requireNoLine(t, s, "1 10:02", "P P1 64 start")
	requireNoLine(t, s, "1 10:02", "X P3 8 evict")

	// Step 3: X is gone and requeued; P starts, X waits.
	require.Contains(t, s["1 10:05"][0], "X is gone and requeued")
	requireLine(t, s, "1 10:05", "P P1 64 start now on n00-n07")
	requireLine(t, s, "1 10:05", "X P3 8 reserved from 22:05")

	// Part 2: the P0 service is never a victim.
	requireLine(t, s, "2 10:00", "Q56 P1 56 insufficient-gpus")
	requireLine(t, s, "2 10:00", "Y P3 8 evict preempted by R48")
	requireLine(t, s, "2 10:00", "R48 P1 48 reserved from 10:05 on n02-n07")
	requireNoLine(t, s, "2 10:00", "serve")

	// Part 3: one preemptor per Step within the default budget; the
	// others wait with the budget spent. C is protected by the minimum
	// runtime until 10:10, the nextWake of the first two Steps.
	requireLine(t, s, "3 10:00", "B P3 8 evict preempted by H1")
	requireLine(t, s, "3 10:00", "H2 P1 8 awaiting-preemption may preempt, but the disruption budget of this Step is spent (8 of 8 GPUs evicted)")
	requireLine(t, s, "3 10:00", "H3 P1 8 awaiting-preemption may preempt, but the disruption budget")
	requireNoLine(t, s, "3 10:00", "A P3 8 evict")
	requireLine(t, s, "3 10:00", "nextWake 10:10")
	requireLine(t, s, "3 10:05", "A P3 8 evict preempted by H2")
	requireLine(t, s, "3 10:05", "H1 P1 8 start")
	requireNoLine(t, s, "3 10:05", "C P3 8 evict")
	requireLine(t, s, "3 10:05", "nextWake 10:10")
	requireLine(t, s, "3 10:10", "H2 P1 8 start")
	requireLine(t, s, "3 10:10", "C P3 8 evict preempted by H3")
	requireLine(t, s, "3 10:15", "H3 P1 8 start")
}
