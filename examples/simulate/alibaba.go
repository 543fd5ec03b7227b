package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/gpusched/gpusched/internal/trace"
	"github.com/gpusched/gpusched/scheduler"
	"github.com/gpusched/gpusched/scheduler/sim"
	"github.com/gpusched/gpusched/topology"
)

// alibabaNodeList is the node list of the Alibaba GPU trace that
// -format alibaba reads beside the pod list when -alibaba-nodes is not
// given: its GPU nodes.
const alibabaNodeList = "openb_node_list_gpu_node.csv"

// Causes of pods left out of an Alibaba replay, in skippedBy.
const (
	skipFractional = "fractional-gpu"
	skipCPUOnly    = "cpu-only"
	skipNoLifetime = "no-lifetime"
)

// loadAlibaba reads an Alibaba pod list (o.trace) and its node list
// (-alibaba-nodes, or alibabaNodeList beside the pod list) into a
// workload: the GPU nodes with their CPU, memory and GPU model, and the
// whole-GPU pods as jobs of one member, each with the pod's CPU and
// memory. A pod arrives at its creation and, with -alibaba-lifetime
// trace, runs from its binding to its deletion (from creation, for one
// never bound), with that run as its limit; with forever it never leaves
// (it runs past the last deletion of the trace, with no limit), as in the
// replays that measure how full a placement policy packs the cluster. Its
// team is its QoS class. -alibaba-copies N replays N copies of the pods,
// copy c arriving c times the pod list's span (last creation − first
// creation, plus a second) after the first, each pod lasting as its
// original; with forever, load piles up copy after copy. Pods that share a GPU, ask for none
// or do not last a second are left out and counted, and so are the
// nodes of no GPU.
func loadAlibaba(o *options) (*workload, error) {
	nodesPath := o.alibabaNodes
	if nodesPath == "" {
		nodesPath = filepath.Join(filepath.Dir(o.trace), alibabaNodeList)
	}
	nodes, err := readFile(nodesPath, trace.ReadAlibabaNodes)
	if err != nil {
		return nil, err
	}
	pods, err := readFile(o.trace, trace.ReadAlibabaPods)
	if err != nil {
		return nil, err
	}
	w := &workload{skippedBy: map[string]int{}}
	c := topology.Cluster{}
	for _, n := range nodes {
		if n.GPUs == 0 {
			w.cpuOnlyNodes++
			continue
		}
		if n.GPUs > topology.MaxGPUsPerNode {
			return nil, usagef("simulate: %s: line %d: node %q has %d GPUs, more than %d", nodesPath, n.Line, n.Name, n.GPUs, topology.MaxGPUsPerNode)
		}
		c.Nodes = append(c.Nodes, topology.Node{Name: n.Name, GPUs: n.GPUs, GPUType: n.Model,
			CPUMillis: n.CPUMillis, MemoryMiB: n.MemoryMiB})
		w.perNode = max(w.perNode, n.GPUs)
		w.gpus += n.GPUs
	}
	if err := c.Validate(); err != nil {
		return nil, usagef("simulate: %s: %v", nodesPath, oneLine(err))
	}
	if len(c.Nodes) == 0 {
		return nil, usagef("simulate: %s: no node has a GPU", nodesPath)
	}
	w.file, w.nodes, w.clusterName = &c, len(c.Nodes), nodesPath
	w.count(skipFractional, pods.Fractional)
	w.count(skipCPUOnly, pods.CPUOnly)
	w.count(skipNoLifetime, pods.NoLifetime)
	list := pods.Pods
	if o.jobs > 0 && o.jobs < len(list) {
		list = list[:o.jobs]
	}
	copies := max(o.copies, 1)
	list = copyPods(list, copies)
	width := len(fmt.Sprint(len(list)))
	end := int64(0) // the last deletion
	for _, p := range list {
		end = max(end, p.Deleted)
	}
	for i, p := range list {
		from := p.Created
		if p.Bound && p.Scheduled > p.Created {
			from = p.Scheduled
		}
		run, limit := p.Deleted-from, p.Deleted-from
		if o.lifetime == "forever" {
			run, limit = end+1-p.Created, 0
		}
		if run <= 0 {
			w.count(trace.SkipNoRuntime, 1)
			continue
		}
		if p.GPUs > w.perNode {
			w.count(tooLarge, 1)
			continue
		}
		j := sim.Job{
			ID:     fmt.Sprintf("%0*d", width, i),
			Submit: time.Duration(p.Created) * time.Second,
			Run:    time.Duration(run) * time.Second, Limit: time.Duration(limit) * time.Second,
			Members: 1, GPUsPerMember: p.GPUs, CPUMillis: p.CPUMillis, MemoryMiB: p.MemoryMiB,
			Team: p.QoS,
		}
		if p.GPUSpec != "" && !strings.Contains(p.GPUSpec, "|") {
			j.GPUType = p.GPUSpec
		}
		w.jobs = append(w.jobs, j)
	}
	if o.teams != "" {
		if w.teams, err = readFile(o.teams, scheduler.DecodeTeams); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// count adds n records left out for cause.
func (w *workload) count(cause string, n int) {
	if n > 0 {
		w.skippedBy[cause] += n
		w.skipped += n
	}
}

// copyPods returns n copies of pods (sorted by creation), copy c shifted
// by c times the list's span plus a second, in creation order.
func copyPods(pods []trace.AlibabaPod, n int) []trace.AlibabaPod {
	if n <= 1 || len(pods) == 0 {
		return pods
	}
	span := pods[len(pods)-1].Created - pods[0].Created + 1
	out := make([]trace.AlibabaPod, 0, n*len(pods))
	for c := range int64(n) {
		for _, p := range pods {
			p.Created += c * span
			p.Deleted += c * span
			p.Scheduled += c * span
			out = append(out, p)
		}
	}
	return out
}
