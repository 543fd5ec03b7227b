package main

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// section returns the lines of the output from the one starting with
// header up to the next blank line, with runs of spaces collapsed.
func section(t *testing.T, out, header string) []string {
	t.Helper()
	var lines []string
	in := false
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(strings.Join(strings.Fields(l), " "), header) {
			in = true
		}
		if in && strings.TrimSpace(l) == "" {
			break
		}
		if in {
			lines = append(lines, strings.Join(strings.Fields(l), " "))
		}
	}
	require.NotEmpty(t, lines, "no section %q", header)
	return lines
}

func pct(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	require.NoError(t, err)
	return v
}

func TestSeedScenario(t *testing.T) {
	var buf bytes.Buffer
	require.NoError(t, run(&buf))
	out := buf.String()

	// Part 1: A, over its share, falls; B and C rise; Fair Tree ranks B, C, A.
	rep := section(t, out, "Account")
	require.Equal(t, "A 40 0.400000 64170121 0.600000 0.600000 0.353553 0.666667 0.333333 96 96", rep[1])
	require.Equal(t, "B 35 0.350000 21390040 0.200000 0.200000 0.672950 1.750000 1.000000 96 96", rep[2])
	require.Equal(t, "C 25 0.250000 21390040 0.200000 0.200000 0.574349 1.250000 0.666667 32 96", rep[3])
	cmp := section(t, out, "team share used")
	require.Equal(t, "A 40% 60% 0.500 0.354 (falls) 0.333 333.3", cmp[1])
	require.Equal(t, "B 35% 20% 0.500 0.673 (rises) 1.000 1000.0", cmp[2])
	require.Equal(t, "C 25% 20% 0.500 0.574 (rises) 0.667 666.7", cmp[3])

	// Part 2: Step serves B's jobs, then C's, then A's, each team's in
	// submit order.
	var order []string
	for _, l := range section(t, out, "position")[1:] {
		order = append(order, strings.Fields(l)[1])
	}
	require.Equal(t, []string{"B1", "B2", "B3", "C1", "C2", "C3", "A1", "A2", "A3"}, order)

	// Part 3: the cluster stays full; week 1 pays back A's overuse, and
	// from week 2 on every team is within 3 points of its share.
	weeksTable := section(t, out, "week GPU-hours")[1:]
	require.Len(t, weeksTable, weeks)
	target := []float64{40, 35, 25}
	for k, l := range weeksTable {
		f := strings.Fields(l)
		require.Equal(t, "43008", f[1], "week %d: the cluster was not saturated", k+1)
		a := pct(t, f[2])
		if k == 0 {
			require.Less(t, a, 35.0, "week 1: A should get less than its share")
			continue
		}
		for i, want := range target {
			require.InDelta(t, want, pct(t, f[2+i]), 3, "week %d, team %s: %s", k+1, teamNames[i], l)
		}
	}
}
