package trace

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
)

const alibabaPodHeader = "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"

func TestReadAlibabaPods(t *testing.T) {
	in := alibabaPodHeader +
		"p0,12000,16384,1,1000,,LS,Running,50,150,60\n" +
		"p1,6000,12288,1,460,,LS,Running,10,20,10\n" + // shares a GPU
		"p2,8000,0,0,0,,BE,Running,5,9,5\n" + // no GPU
		"p3,32000,65536,8,1000,V100M16|V100M32,Burstable,Pending,20,40,\n" +
		"\n" +
		"p4,1000,1024,2,1000,,BE,Failed,30,29,30\n" // deleted before created
	got, err := ReadAlibabaPods(strings.NewReader(in))
	noErr(t, err)
	want := &AlibabaPods{
		Pods: []AlibabaPod{
			{Name: "p3", CPUMillis: 32000, MemoryMiB: 65536, GPUs: 8, GPUSpec: "V100M16|V100M32", QoS: "Burstable",
				Phase: "Pending", Created: 20, Deleted: 40, Line: 5},
			{Name: "p0", CPUMillis: 12000, MemoryMiB: 16384, GPUs: 1, QoS: "LS", Phase: "Running",
				Created: 50, Deleted: 150, Scheduled: 60, Bound: true, Line: 2},
		},
		Fractional: 1, CPUOnly: 1, NoLifetime: 1,
	}
	equal(t, want, got, "pods")
}

func TestReadAlibabaNodes(t *testing.T) {
	in := "model,sn,gpu,cpu_milli,memory_mib,extra\nP100,n0,2,64000,262144,x\n,n1,0,32000,131072,y\n"
	got, err := ReadAlibabaNodes(strings.NewReader(in))
	noErr(t, err)
	equal(t, []AlibabaNode{
		{Name: "n0", CPUMillis: 64000, MemoryMiB: 262144, GPUs: 2, Model: "P100", Line: 2},
		{Name: "n1", CPUMillis: 32000, MemoryMiB: 131072, Line: 3},
	}, got, "nodes")
}

// Each malformed input stops the read with a *ParseError that names the
// line and, where one is at fault, the column.
func TestReadAlibabaErrors(t *testing.T) {
	pod := func(rows string) string { return alibabaPodHeader + rows }
	for _, tc := range []struct {
		nodes bool
		in    string
		want  string
	}{
		{true, "", "alibaba: line 1: no header row"},
		{true, "sn,cpu_milli,memory_mib,gpu\nn0,1,1,1\n", "alibaba: line 1: header has no model column"},
		{true, "sn,cpu_milli,memory_mib,gpu,model,gpu\n", `alibaba: line 1: column gpu "gpu": duplicate column (also field 4)`},
		{true, "sn,cpu_milli,memory_mib,gpu,model\nn0,1,1,x,T4\n", `alibaba: line 2: column gpu "x": not a number`},
		{true, "sn,cpu_milli,memory_mib,gpu,model\nn0,-1,1,1,T4\n", `alibaba: line 2: column cpu_milli "-1": out of range`},
		{true, "sn,cpu_milli,memory_mib,gpu,model\nn0,1,1.5,1,T4\n", `alibaba: line 2: column memory_mib "1.5": not a whole number`},
		{true, "sn,cpu_milli,memory_mib,gpu,model\nn0,1,1,1,T4\nn0,1,1,1,T4\n", `alibaba: line 3: column sn "n0": duplicate node (also line 2)`},
		{true, "sn,cpu_milli,memory_mib,gpu,model\n,1,1,1,T4\n", "alibaba: line 2: column sn \"\": empty node name"},
		{true, "sn,cpu_milli,memory_mib,gpu,model\nn0,1,1,1\n", "alibaba: line 2: 4 fields, want 5 as in the header"},
		{false, pod("p,1,1,1,1001,,LS,Running,0,1,0\n"), `alibaba: line 2: column gpu_milli "1001": more than 1000 thousandths of a GPU`},
		{false, pod("p,1,1,1,1000,,LS,Running,-5,1,0\n"), `alibaba: line 2: column creation_time "-5": out of range`},
		{false, pod("p,1,1,1,1000,,LS,Running,0,1,y\n"), `alibaba: line 2: column scheduled_time "y": not a number`},
		{false, pod("p,1,1,1,1000,\"x,LS,Running,0,1,0\n"), "alibaba: line 2:"},
	} {
		var err error
		if tc.nodes {
			_, err = ReadAlibabaNodes(strings.NewReader(tc.in))
		} else {
			_, err = ReadAlibabaPods(strings.NewReader(tc.in))
		}
		var pe *ParseError
		if err == nil || !errors.As(err, &pe) || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%q: got %v, want %s", tc.in, err, tc.want)
		}
	}
}

// The shared copy of the trace reads with the counts its SOURCES.md
// states: 1,213 GPU nodes of 6,212 GPUs by model, 1,523 nodes in all,
// 8,152 pods of which 3,078 share a GPU and 1,088 ask for none.
func TestSharedAlibaba(t *testing.T) {
	open := func(rel string) *os.File {
		f, err := os.Open(sharedFile(t, rel))
		noErr(t, err)
		t.Cleanup(func() { f.Close() })
		return f
	}
	nodes, err := ReadAlibabaNodes(open("gpu/alibaba-gpu-v2023/openb_node_list_gpu_node.csv"))
	noErr(t, err)
	gpus, models := 0, map[string]int{}
	for _, n := range nodes {
		gpus += n.GPUs
		models[n.Model]++
	}
	equal(t, 1213, len(nodes), "GPU nodes")
	equal(t, 6212, gpus, "GPUs")
	equal(t, map[string]int{"G2": 549, "T4": 404, "P100": 134, "V100M16": 55, "G3": 39, "V100M32": 30, "A10": 2}, models, "nodes by model")
	all, err := ReadAlibabaNodes(open("gpu/alibaba-gpu-v2023/openb_node_list_all_node.csv"))
	noErr(t, err)
	equal(t, 1523, len(all), "all nodes")

	pods, err := ReadAlibabaPods(open("gpu/alibaba-gpu-v2023/openb_pod_list_default.csv"))
	noErr(t, err)
	equal(t, 3078, pods.Fractional, "pods sharing a GPU")
	equal(t, 1088, pods.CPUOnly, "pods of no GPU")
	byGPUs := map[int]int{}
	for i, p := range pods.Pods {
		byGPUs[p.GPUs]++
		if i > 0 && pods.Pods[i-1].Created > p.Created {
			t.Fatalf("pods %d and %d out of creation order", i-1, i)
		}
	}
	equal(t, 8152, len(pods.Pods)+pods.Fractional+pods.CPUOnly+pods.NoLifetime, "pods")
	equal(t, 6989-3078, byGPUs[1], "whole one-GPU pods")
	equal(t, map[int]int{1: 3911, 2: 16, 4: 15, 8: 44}, byGPUs, "whole pods by GPUs")
}

func FuzzReadAlibabaPods(f *testing.F) {
	f.Add([]byte(alibabaPodHeader + "p0,12000,16384,1,1000,,LS,Running,50,150,60\np1,1,1,1,460,,BE,Failed,1,2,\n"))
	f.Add([]byte(alibabaPodHeader + strings.Repeat("a,0,0,1,1000,,,,0,0,\n", 300)))
	f.Add([]byte(alibabaPodHeader + "\"p,1\",1,1,1,1000,x|y,LS,Pending,1e3,2000.5,\n"))
	f.Add([]byte("name\n\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var pods *AlibabaPods
		var err error
		checkAllocs(t, len(data), func() { pods, err = ReadAlibabaPods(bytes.NewReader(data)) })
		if err != nil {
			var pe *ParseError
			if pods != nil || !errors.As(err, &pe) || pe.Line < 1 {
				t.Fatalf("error %v with pods %v", err, pods)
			}
			return
		}
		for i, p := range pods.Pods {
			if p.GPUs < 1 || p.Deleted < p.Created || p.CPUMillis < 0 || p.MemoryMiB < 0 ||
				(i > 0 && pods.Pods[i-1].Created > p.Created) {
				t.Fatalf("pod %d: %+v", i, p)
			}
		}
	})
}

func FuzzReadAlibabaNodes(f *testing.F) {
	f.Add([]byte("sn,cpu_milli,memory_mib,gpu,model\nopenb-node-0000,64000,262144,2,P100\n"))
	f.Add([]byte("sn,cpu_milli,memory_mib,gpu,model\n" + strings.Repeat("a,0,0,0,\n", 2) + "b,1,1,1,x\n"))
	f.Add([]byte("model,gpu,sn,memory_mib,cpu_milli\nT4,1,n,1,1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var nodes []AlibabaNode
		var err error
		checkAllocs(t, len(data), func() { nodes, err = ReadAlibabaNodes(bytes.NewReader(data)) })
		if err != nil {
			var pe *ParseError
			if nodes != nil || !errors.As(err, &pe) || pe.Line < 1 {
				t.Fatalf("error %v with nodes %v", err, nodes)
			}
			return
		}
		seen := map[string]bool{}
		for _, n := range nodes {
			if n.Name == "" || seen[n.Name] || n.GPUs < 0 || n.CPUMillis < 0 || n.MemoryMiB < 0 {
				t.Fatalf("node %+v", n)
			}
			seen[n.Name] = true
		}
	})
}
