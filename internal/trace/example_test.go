package trace_test

import (
	"fmt"
	"strings"

	"github.com/gpusched/gpusched/internal/trace"
)

func ExampleReadSWF() {
	log := `; MaxProcs: 128
; MaxNodes: 128
    1   0  -1  3600   64  -1  -1   64  7200  -1  1  3  7  -1  -1  -1  -1  -1
    2  30  -1    -1   -1  -1  -1   32  3600  -1  5  3  7  -1  -1  -1  -1  -1
    3  60  -1   120   -1  -1  -1   16    -1  -1  1  4  9  -1  -1  -1  -1  -1
`
	tr, err := trace.ReadSWF(strings.NewReader(log))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("machine:", tr.MaxProcs, "processors")
	for _, j := range tr.Jobs {
		fmt.Printf("job %s: submit %ds, %d procs, run %ds, limit %ds, team %s\n",
			j.ID, j.Submit, j.Procs, j.Run, j.Limit, j.Team)
	}
	fmt.Println("skipped:", tr.Skipped, "total", tr.Skipped.Total())
	// Output:
	// machine: 128 processors
	// job 1: submit 0s, 64 procs, run 3600s, limit 7200s, team 7
	// job 3: submit 60s, 16 procs, run 120s, limit 120s, team 9
	// skipped: [{no-runtime 1}] total 1
}
