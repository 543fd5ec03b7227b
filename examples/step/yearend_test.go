package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// yearEndSnapshot is an hour before the end of year 9999: R, running,
// reaches its limit only in year 10000, so P, which needs its GPU, has no
// start that RFC 3339 can write.
const yearEndSnapshot = `{
  "now": "9999-12-31T23:00:00Z",
  "cluster": {"nodes": [{"name": "n0", "gpus": 1}]},
  "jobs": [
    {"id": "R", "tier": 1, "gpusPerMember": 1, "timeLimit": "2h", "state": "running",
     "started": "9999-12-31T22:00:00Z", "allocation": [{"node": "n0", "gpus": [0]}]},
    {"id": "P", "gpusPerMember": 1, "timeLimit": "1h", "submitted": "9999-12-31T22:59:00Z"}
  ]
}`

// Near the end of year 9999 the decision and the explanations are
// written, with no time past it.
func TestYearEnd(t *testing.T) {
	for _, args := range [][]string{nil, {"-explain", "P"}, {"-explain", "P", "-text"}, {"-explain", "R"}} {
		var out, errb bytes.Buffer
		code := run(args, strings.NewReader(yearEndSnapshot), &out, &errb)
		require.Equal(t, 0, code, "%v: %s", args, errb.String())
		require.Empty(t, errb.String())
		require.NotContains(t, out.String(), "10000-", args)
		if len(args) < 3 {
			require.True(t, json.Valid(out.Bytes()), out.String())
		}
	}
	var out, errb bytes.Buffer
	require.Equal(t, 0, run(nil, strings.NewReader(yearEndSnapshot), &out, &errb))
	require.Contains(t, out.String(), `"message": "needs 1×1 GPUs, 0 free; no start before the end of year 9999"`)
}

// A leap second at the very end of year 9999 reads as a time in year
// 10000: refused, naming the field.
func TestYearEndLeapSecond(t *testing.T) {
	in := strings.Replace(yearEndSnapshot, `"now": "9999-12-31T23:00:00Z"`, `"now": "9999-12-31T23:59:60Z"`, 1)
	var out, errb bytes.Buffer
	require.Equal(t, 2, run(nil, strings.NewReader(in), &out, &errb))
	require.Empty(t, out.String())
	require.Contains(t, errb.String(), "now")
	require.Contains(t, errb.String(), "is after 9999-12-31T23:59:59.999999999Z, the last time a decision can write in UTC")
}
