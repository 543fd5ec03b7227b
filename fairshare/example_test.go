package fairshare_test

import (
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/gpusched/gpusched/fairshare"
)

func ExampleLedger() {
	tree, _ := fairshare.NewTree([]fairshare.Account{
		{Name: "eng", Share: 60}, {Name: "ml", Share: 3, Parent: "eng"},
	})
	ledger := tree.NewLedger(0) // 7-day half-life
	monday := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	_ = ledger.Add("ml", 8*3600, monday)          // 8 GPU-hours
	_ = ledger.Add("eng", 2*3600, monday.Add(-1)) // charged directly to eng, just before

	week := monday.Add(fairshare.DefaultHalfLife)
	fmt.Printf("ml  now %.0f GPU-s, a week later %.0f\n", ledger.Usage("ml", monday), ledger.Usage("ml", week))
	fmt.Printf("eng now %.0f GPU-s, a week later %.0f (own %.0f)\n", ledger.Usage("eng", monday), ledger.Usage("eng", week), ledger.Own("eng", week))
	fmt.Printf("decay helper: %.1f\n", fairshare.Decay(100, 14*24*time.Hour, 0))
	// Output:
	// ml  now 28800 GPU-s, a week later 14400
	// eng now 36000 GPU-s, a week later 18000 (own 3600)
	// decay helper: 25.0
}

func ExampleTree_Factors() {
	tree, err := fairshare.NewTree([]fairshare.Account{
		{Name: "team-a", Share: 40}, {Name: "team-b", Share: 35}, {Name: "team-c", Share: 25},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	tree = tree.WithMissing("team-d") // a team without an entry: share 1
	usage := map[string]float64{"team-a": 600, "team-b": 200, "team-c": 200}
	for _, f := range tree.Factors(usage).Rows() {
		fmt.Printf("%s  share %.3f  usage %.3f  classic %.3f  levelFS %.3f  fairtree %.2f\n",
			f.Account, f.NormShares, f.NormUsage, f.Classic, f.LevelFS, f.FairTree)
	}
	// Output:
	// team-a  share 0.396  usage 0.600  classic 0.350  levelFS 0.660  fairtree 0.25
	// team-b  share 0.347  usage 0.200  classic 0.670  levelFS 1.733  fairtree 0.75
	// team-c  share 0.248  usage 0.200  classic 0.571  levelFS 1.238  fairtree 0.50
	// team-d  share 0.010  usage 0.000  classic 1.000  levelFS +Inf  fairtree 1.00
}

func ExampleWeights_Compare() {
	type job struct {
		id string
		f  fairshare.JobFactors
	}
	jobs := []job{
		{"train-big", fairshare.JobFactors{Tier: 2, FairShare: 1, Age: 48 * time.Hour, GPUs: 256, ClusterGPUs: 512}},
		{"serve", fairshare.JobFactors{Tier: 0, FairShare: 0.1, GPUs: 8, ClusterGPUs: 512}},
		{"train-a", fairshare.JobFactors{Tier: 2, FairShare: 0.25, Age: 168 * time.Hour, GPUs: 64, ClusterGPUs: 512}},
		{"train-b", fairshare.JobFactors{Tier: 2, FairShare: 0.75, GPUs: 64, ClusterGPUs: 512}},
	}
	var w fairshare.Weights // defaults: fair-share 1000, age 100, size 0, ageMax 168h
	slices.SortStableFunc(jobs, func(a, b job) int { return w.Compare(a.f, b.f) })
	for _, j := range jobs {
		fmt.Printf("%-9s tier %d  priority %7.2f\n", j.id, j.f.Tier, w.Priority(j.f))
	}
	// Output:
	// serve     tier 0  priority  100.00
	// train-big tier 2  priority 1028.57
	// train-b   tier 2  priority  750.00
	// train-a   tier 2  priority  350.00
}

func ExampleQuota_AdmitTeam() {
	q := fairshare.Quota{GPUs: 100, BorrowLimit: 20}
	for _, request := range []int{16, 32} {
		ok, why := q.AdmitTeam("team-a", 96, request, 200)
		fmt.Printf("%d GPUs: %v %q\n", request, ok, why)
	}
	fmt.Println("borrowed:", q.Borrowed(112))
	// Output:
	// 16 GPUs: true ""
	// 32 GPUs: false "team-a uses 96 of 100 nominal + 20 borrowable GPUs; job needs 32"
	// borrowed: 12
}

func ExampleWriteReport() {
	tree, _ := fairshare.NewTree([]fairshare.Account{
		{Name: "eng", Share: 60}, {Name: "ml", Share: 3, Parent: "eng"},
		{Name: "web", Share: 1, Parent: "eng"}, {Name: "ops", Share: 40},
	})
	fs := tree.Factors(map[string]float64{"ml": 50 * 3600, "web": 20 * 3600, "ops": 30 * 3600})
	rows := fs.Report(map[string]int{"ml": 64, "ops": 32}, map[string]int{"web": 8})
	_ = fairshare.WriteReport(os.Stdout, rows)
	// Output:
	// Account  RawShares  NormShares  RawUsage  NormUsage  EffectvUsage  Classic   LevelFS   FairTree  Running  Pending
	// eng      60         0.600000    252000    0.700000   0.700000      0.445449  0.857143  0.666667  0        0
	//  ml      3          0.450000    180000    0.500000   0.650000      0.367434  1.050000  0.666667  64       0
	//  web     1          0.150000    72000     0.200000   0.325000      0.222725  0.875000  0.333333  0        8
	// ops      40         0.400000    108000    0.300000   0.300000      0.594604  1.333333  1.000000  32       0
}
