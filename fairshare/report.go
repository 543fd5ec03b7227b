package fairshare

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// ReportRow is one line of a fair-share report in the spirit of Slurm's
// `sshare -l`: an account's factors plus the GPUs its jobs run and wait for.
type ReportRow struct {
	// Factor holds the account's shares, usage and factors.
	Factor
	// RunningGPUs and PendingGPUs are supplied by the caller.
	RunningGPUs, PendingGPUs int
}

// Report returns one row per account in tree order, with the running and
// pending GPUs of each account taken from the given lookups (missing
// accounts count 0).
func (fs *Factors) Report(running, pending map[string]int) []ReportRow {
	rows := fs.Rows()
	out := make([]ReportRow, len(rows))
	for i, f := range rows {
		out[i] = ReportRow{Factor: f, RunningGPUs: running[f.Account], PendingGPUs: pending[f.Account]}
	}
	return out
}

// WriteReport writes rows as an aligned text table: the account (indented
// one space per level), raw and normalized shares, raw usage (GPU-seconds),
// normalized and effective usage, the classic factor, LevelFS, the Fair Tree
// factor, and running and pending GPUs. It returns the first write error.
func WriteReport(w io.Writer, rows []ReportRow) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "Account\tRawShares\tNormShares\tRawUsage\tNormUsage\tEffectvUsage\tClassic\tLevelFS\tFairTree\tRunning\tPending")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%g\t%.6f\t%.0f\t%.6f\t%.6f\t%.6f\t%s\t%.6f\t%d\t%d\n",
			strings.Repeat(" ", r.Depth)+r.Account, r.RawShares, r.NormShares, r.RawUsage,
			r.NormUsage, r.EffectiveUsage, r.Classic, formatLevelFS(r.LevelFS), r.FairTree,
			r.RunningGPUs, r.PendingGPUs)
	}
	return tw.Flush()
}

func formatLevelFS(v float64) string {
	if math.IsInf(v, 1) {
		return "inf"
	}
	return fmt.Sprintf("%.6f", v)
}
