package fairshare

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReport(t *testing.T) {
	tree, own := handTree(t)
	rows := tree.Factors(own).Report(map[string]int{"ml": 64, "ops": 32}, map[string]int{"web": 8, "ghost": 99})
	require.Len(t, rows, 4)
	require.Equal(t, "eng", rows[0].Account)
	require.Equal(t, 64, rows[1].RunningGPUs)
	require.Equal(t, 8, rows[2].PendingGPUs)
	require.Equal(t, 32, rows[3].RunningGPUs)

	var b strings.Builder
	require.NoError(t, WriteReport(&b, rows))
	want := `Account  RawShares  NormShares  RawUsage  NormUsage  EffectvUsage  Classic   LevelFS   FairTree  Running  Pending
eng      60         0.600000    70        0.700000   0.700000      0.445449  0.857143  0.666667  0        0
 ml      3          0.450000    50        0.500000   0.650000      0.367434  1.050000  0.666667  64       0
 web     1          0.150000    20        0.200000   0.325000      0.222725  0.875000  0.333333  0        8
ops      40         0.400000    30        0.300000   0.300000      0.594604  1.333333  1.000000  32       0
`
	require.Equal(t, want, b.String())

	b.Reset()
	require.NoError(t, WriteReport(&b, tree.Factors(nil).Report(nil, nil)))
	require.Contains(t, b.String(), "inf")
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriteReportError(t *testing.T) {
	tree, own := handTree(t)
	require.EqualError(t, WriteReport(failWriter{}, tree.Factors(own).Report(nil, nil)), "disk full")
}
