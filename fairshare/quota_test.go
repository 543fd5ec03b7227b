package fairshare

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestQuotaAdmit(t *testing.T) {
	q := Quota{GPUs: 100, BorrowLimit: 20}
	tests := []struct {
		name                 string
		q                    Quota
		inUse, request, idle int
		ok                   bool
		why                  string
	}{
		{"within nominal", q, 60, 40, 0, true, ""},
		{"within nominal needs no idle GPUs", q, 0, 100, 0, true, ""},
		{"borrows idle GPUs", q, 96, 24, 50, true, ""},
		{"beyond the borrowing limit", q, 96, 32, 500, false, "team-a uses 96 of 100 nominal + 20 borrowable GPUs; job needs 32"},
		{"not enough idle GPUs to borrow", q, 90, 20, 5, false, "team-a uses 90 of 100 nominal GPUs; job needs 20, of which 10 borrowed, but only 5 GPUs are idle"},
		{"one idle GPU is too few", q, 96, 10, 1, false, "team-a uses 96 of 100 nominal GPUs; job needs 10, of which 6 borrowed, but only 1 GPU is idle"},
		{"already borrowing", q, 110, 8, 8, true, ""},
		{"no borrowing allowed", Quota{GPUs: 8}, 8, 1, 100, false, "team-a uses 8 of 8 nominal + 0 borrowable GPUs; job needs 1"},
		{"zero quota admits everything", Quota{}, 1000, 1000, 0, true, ""},
		{"borrow only", Quota{BorrowLimit: 16}, 0, 16, 16, true, ""},
		{"negative inputs count 0", q, -5, -5, -5, true, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ok, why := tc.q.AdmitTeam("team-a", tc.inUse, tc.request, tc.idle)
			require.Equal(t, tc.ok, ok)
			require.Equal(t, tc.why, why)
			ok2, why2 := tc.q.Admit(tc.inUse, tc.request, tc.idle)
			require.Equal(t, ok, ok2)
			if !ok {
				require.Contains(t, why2, "team uses ")
			}
		})
	}
}

func TestQuotaBorrowedAndLimit(t *testing.T) {
	q := Quota{GPUs: 100, BorrowLimit: 20}
	require.Equal(t, 120, q.Limit())
	require.Equal(t, 0, q.Borrowed(60))
	require.Equal(t, 0, q.Borrowed(100))
	require.Equal(t, 16, q.Borrowed(116))
	require.Equal(t, 0, Quota{}.Borrowed(500))
	require.True(t, Quota{}.IsZero())
	require.False(t, q.IsZero())
}

func TestQuotaValidate(t *testing.T) {
	require.NoError(t, Quota{GPUs: 1}.Validate())
	require.EqualError(t, Quota{GPUs: -1}.Validate(), "fairshare: quota.gpus must be >= 0, got -1")
	require.EqualError(t, Quota{BorrowLimit: -2}.Validate(), "fairshare: quota.borrowLimit must be >= 0, got -2")
}

// TestQuotaNearIntRange: sums beyond the int range neither wrap nor
// refuse what fits: GPUs+BorrowLimit does not wrap negative (refusing
// everything above nominal), nor inUse+request (admitting a job of
// MaxInt GPUs).
func TestQuotaNearIntRange(t *testing.T) {
	q := Quota{GPUs: math.MaxInt - 5, BorrowLimit: 10}
	require.Equal(t, math.MaxInt, q.Limit())
	ok, why := q.Admit(math.MaxInt-5, 1, 100)
	require.True(t, ok, why)
	ok, _ = Quota{GPUs: 8}.Admit(8, math.MaxInt, math.MaxInt)
	require.False(t, ok)
	ok, why = Quota{GPUs: 4, BorrowLimit: math.MaxInt}.Admit(0, 8, 8)
	require.True(t, ok, why)
	ok, _ = Quota{GPUs: 4, BorrowLimit: math.MaxInt}.Admit(0, 8, 3)
	require.False(t, ok, "4 borrowed, 3 idle")
}

// TestQuotaLimitIsWhatAdmitAllows: Limit is the most GPUs a team may
// hold, so a job that brings the team to Limit (with enough idle GPUs) is
// admitted and one more GPU is not. The zero Quota admits everything: its
// limit is math.MaxInt (it was 0, which Admit does not enforce).
func TestQuotaLimitIsWhatAdmitAllows(t *testing.T) {
	for _, q := range []Quota{{}, {GPUs: 8}, {BorrowLimit: 4}, {GPUs: 8, BorrowLimit: 4}, {GPUs: -1}} {
		l := q.Limit()
		ok, why := q.Admit(0, l, math.MaxInt)
		require.True(t, ok, "%+v: limit %d: %s", q, l, why)
		if l < math.MaxInt {
			ok, _ = q.Admit(0, l+1, math.MaxInt)
			require.False(t, ok, "%+v: limit %d", q, l)
		}
	}
	require.Equal(t, math.MaxInt, Quota{}.Limit())
}

// TestQuotaResources: CPU and memory caps are hard, independent of the
// GPU quota (a Quota with only them set limits no GPUs), and say which
// cap a job would pass.
func TestQuotaResources(t *testing.T) {
	q := Quota{CPUMillis: 128000, MemoryMiB: 1 << 20}
	ok, _ := q.AdmitTeam("a", 1000, 512, 0)
	require.True(t, ok, "no GPU quota")
	require.Equal(t, math.MaxInt, q.Limit())
	require.Equal(t, 0, q.Borrowed(1000))
	ok, why := q.AdmitResources("a", 96000, 0, 64000, 0)
	require.False(t, ok)
	require.Equal(t, "a uses 96 CPUs of 128 CPUs; job needs 64 CPUs", why)
	ok, _ = q.AdmitResources("a", 64000, 0, 64000, 0)
	require.True(t, ok, "exactly at the cap")
	ok, why = q.AdmitResources("a", 0, 1<<20, 0, 1)
	require.False(t, ok)
	require.Contains(t, why, "MiB of memory")
	ok, _ = Quota{GPUs: 8}.AdmitResources("a", 1<<40, 1<<40, 1<<40, 1<<40)
	require.True(t, ok, "no CPU or memory cap")
	require.Error(t, Quota{CPUMillis: -1}.Validate())
	require.Error(t, Quota{MemoryMiB: -1}.Validate())
}
