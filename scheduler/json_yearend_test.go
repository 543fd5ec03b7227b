package scheduler

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// lastRFC3339 is the last instant RFC 3339 can write in UTC.
var lastRFC3339 = time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)

// A decoded time is at most the last instant RFC 3339 writes in UTC: a
// leap second at the very end of year 9999, which reads as the next
// second, and a time after it written with an offset, are refused with
// the field named; the last instants before it are taken.
func TestDecodeTimeAtEndOfYear9999(t *testing.T) {
	decode := func(now string) (*Snapshot, error) {
		return DecodeSnapshot(strings.NewReader(`{"now":"` + now + `","cluster":{"nodes":[{"name":"n0","gpus":8}]}}`))
	}
	for in, want := range map[string]time.Time{
		"9999-12-31T23:59:59.999999999Z":      lastRFC3339,
		"9999-12-31T23:59:59Z":                time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
		"9999-12-31T22:59:60+01:00":           time.Date(9999, 12, 31, 22, 0, 0, 0, time.UTC),
		"9999-12-31T23:59:59.999999999+01:00": time.Date(9999, 12, 31, 22, 59, 59, 999999999, time.UTC),
		"0000-01-01T00:00:00Z":                time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC),
	} {
		s, err := decode(in)
		require.NoError(t, err, in)
		require.True(t, want.Equal(s.Now), "%s: got %s", in, s.Now)
		var buf bytes.Buffer
		require.NoError(t, EncodeSnapshot(&buf, s), in)
	}
	for _, in := range []string{
		"9999-12-31T23:59:60Z",
		"9999-12-31T23:59:60.5Z",
		"9999-12-31T23:30:00-01:00",
		"9999-12-31T22:59:60-01:00",
	} {
		_, err := decode(in)
		require.Error(t, err, in)
		var ve *ValidationError
		require.ErrorAs(t, err, &ve, in)
		require.Equal(t, "now", ve.Field, in)
		require.Contains(t, err.Error(), "is after 9999-12-31T23:59:59.999999999Z, the last time a decision can write in UTC", in)
	}
	// Every time field is checked alike.
	_, err := DecodeSnapshot(strings.NewReader(`{"now":"9999-12-31T00:00:00Z","cluster":{"nodes":[{"name":"n0","gpus":8}]},
		"jobs":[{"id":"A","gpusPerMember":1,"submitted":"9999-12-31T23:59:60Z"}]}`))
	require.Error(t, err)
	require.Contains(t, err.Error(), "submitted")
	require.Contains(t, err.Error(), "is after 9999-12-31T23:59:59.999999999Z, the last time a decision can write in UTC")
}
