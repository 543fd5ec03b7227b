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
	require.Contains(t, s, "C    96    reserved  from 12:00 on n00[0-7]")
	require.NotContains(t, s, "C    96    start now")
}
