package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// steps splits the output into the lines of each step, keyed by the
// step's time, with runs of spaces collapsed.
func steps(out string) map[string][]string {
	m := map[string][]string{}
	cur := ""
	for _, l := range strings.Split(out, "\n") {
		l = strings.Join(strings.Fields(l), " ")
		if f := strings.Fields(l); len(f) >= 2 && f[1] == "step" {
			cur = f[0]
		}
		if cur != "" {
			m[cur] = append(m[cur], l)
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

func TestSeedScenario(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(&out))
	s := steps(out.String())
	require.Len(t, s, 5)

	// 08:00: C is reserved for A's end; E backfills into the 32 free GPUs.
	requireLine(t, s, "08:00", "C 96 4h reserved from 14:00")
	requireLine(t, s, "08:00", "E 32 1h start now, ends by 09:00")
	requireLine(t, s, "08:00", "D 8 2h insufficient-gpus")

	// 09:00: E is done; D and G backfill, F's 10 h would delay C.
	require.Contains(t, s["09:00"][0], "E finished at 09:00")
	requireLine(t, s, "09:00", "D 8 2h start now, ends by 11:00")
	requireLine(t, s, "09:00", "G 8 1h start now, ends by 10:00")
	requireLine(t, s, "09:00", "F 8 10h behind-reservation")
	requireLine(t, s, "09:00", "C 96 4h reserved from 14:00")

	// 10:00: G reaches its limit and is killed, not requeued.
	requireLine(t, s, "10:00", "G 8 1h evict time-limit now, requeue=false")
	requireLine(t, s, "10:00", "F 8 10h behind-reservation")

	// 14:00: A ends and C starts at its reserved time.
	requireLine(t, s, "14:00", "C 96 4h start now")
	for _, at := range []string{"08:00", "09:00", "10:00", "11:00"} {
		for _, l := range s[at] {
			require.False(t, strings.HasPrefix(l, "C 96 4h start"), "C started before its reservation at %s", at)
			require.False(t, strings.HasPrefix(l, "F 8 10h start"), "F started at %s and would delay C", at)
		}
	}
}

// TestPromisesKept: under conservative backfill with the plan carried,
// R1's early end moves P and Q earlier, and no promise moves later.
func TestPromisesKept(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(&out))
	o := out.String()
	for _, want := range []string{
		"P promised 12:00\n",
		"Q promised 11:00\n",
		"Q starts now (was promised 11:00)",
		"P promised 11:00 (was promised 12:00)",
		"P starts now (was promised 11:00)",
	} {
		require.Contains(t, o, want)
	}
}
