package host_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/gpusched/gpusched/internal/host"
)

// TestDuration: only zero minutes and seconds after a larger unit are
// trimmed, never digits of the larger unit ("20m" came out as "2",
// "1h30m" as "1h3", "10s" as "1").
func TestDuration(t *testing.T) {
	for _, tc := range []struct {
		d    time.Duration
		want string
	}{
		{0, "0s"},
		{time.Nanosecond, "1ns"},
		{1500 * time.Microsecond, "1.5ms"},
		{time.Second, "1s"},
		{10 * time.Second, "10s"},
		{90 * time.Second, "1m30s"},
		{1500 * time.Millisecond, "1.5s"},
		{time.Minute, "1m"},
		{5 * time.Minute, "5m"},
		{10 * time.Minute, "10m"},
		{20 * time.Minute, "20m"},
		{20*time.Minute + 10*time.Second, "20m10s"},
		{time.Hour, "1h"},
		{time.Hour + 30*time.Minute, "1h30m"},
		{time.Hour + 30*time.Second, "1h0m30s"},
		{time.Hour + 10*time.Minute + 20*time.Second, "1h10m20s"},
		{10 * time.Hour, "10h"},
		{100 * time.Hour, "100h"},
		{-20 * time.Minute, "-20m"},
		{-90 * time.Minute, "-1h30m"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			got := host.Duration(tc.d)
			require.Equal(t, tc.want, got, "%d ns", int64(tc.d))
			back, err := time.ParseDuration(got)
			require.NoError(t, err)
			require.Equal(t, tc.d, back, "%q does not parse back", got)
		})
	}
}
