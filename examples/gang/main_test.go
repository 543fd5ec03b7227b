package main

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSeedScenario(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(&out))
	s := out.String()
	require.Contains(t, s, "A    64    start now  n00[0-7] n01[0-7]")
	require.Contains(t, s, "B    64    start now  n08[0-7]")
	// All of A's nodes (n00–n07) and four of B's (n08–n11, 32 GPUs), as
	// the closing sentence says.
	require.Contains(t, s, "C    96    reserved  from 12:00 on n00[0-7] n01[0-7] n02[0-7] n03[0-7] n04[0-7] n05[0-7] n06[0-7] n07[0-7] n08[0-7] n09[0-7] n10[0-7] n11[0-7]\n")
	require.Contains(t, s, "all of A's GPUs and 32 of B's from 12:00")
	// At 08:00 B has ended and 64 GPUs are free: C still waits whole,
	// with the same reservation.
	require.Contains(t, s, "step at 08:00\njob  GPUs  decision  where / why\n"+
		"C    96    reserved  from 12:00 on n00[0-7] n01[0-7] n02[0-7] n03[0-7] n04[0-7] n05[0-7] n06[0-7] n07[0-7] n08[0-7] n09[0-7] n10[0-7] n11[0-7]\n")
	require.Contains(t, s, "B's 64 GPUs are free, but C needs 96")
	require.NotContains(t, s, "C    96    start now")
}
