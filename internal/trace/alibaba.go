package trace

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// This file reads the Alibaba GPU cluster trace of 2023 (the "openb"
// files of cluster-trace-gpu-v2023): a node list and a pod list, both CSV
// with a header row.

// AlibabaNode is one node of an Alibaba node list
// (sn,cpu_milli,memory_mib,gpu,model).
type AlibabaNode struct {
	// Name is the node's serial number (column sn).
	Name string
	// CPUMillis is its CPU in thousandths of a core; MemoryMiB its memory.
	CPUMillis, MemoryMiB int
	// GPUs is its GPU count, 0 for a CPU-only node.
	GPUs int
	// Model is its GPU model ("V100M32", "T4", ...), "" for none.
	Model string
	// Line is the 1-based line the node was read from.
	Line int
}

// AlibabaPod is one whole-GPU pod of an Alibaba pod list
// (name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,
// creation_time,deletion_time,scheduled_time).
type AlibabaPod struct {
	// Name is the pod's name.
	Name string
	// CPUMillis and MemoryMiB are what the pod asks for, for all its GPUs.
	CPUMillis, MemoryMiB int
	// GPUs is the number of whole GPUs it asks for, >= 1.
	GPUs int
	// GPUSpec names the GPU models it accepts, "" for any (the trace
	// separates several with '|').
	GPUSpec string
	// QoS and Phase are the pod's class ("LS", "BE", ...) and the phase
	// the trace recorded last ("Running", "Pending", "Failed", ...).
	QoS, Phase string
	// Created and Deleted are the pod's creation and deletion times in
	// seconds; Deleted >= Created.
	Created, Deleted int64
	// Scheduled is when it was bound to a node, when Bound is set; a pod
	// that was never bound has no scheduled_time.
	Scheduled int64
	Bound     bool
	// Line is the 1-based line the pod was read from.
	Line int
}

// AlibabaPods is an Alibaba pod list as read.
type AlibabaPods struct {
	// Pods are the pods that ask for whole GPUs, sorted stably by
	// creation time (ties keep file order).
	Pods []AlibabaPod
	// Fractional counts the pods left out because they share a GPU
	// (gpu_milli below 1000), CPUOnly those that ask for no GPU, and
	// NoLifetime those deleted before they were created.
	Fractional, CPUOnly, NoLifetime int
}

// alibabaFormat names the format in errors.
const alibabaFormat = "alibaba"

// alibabaTable reads a headed CSV table: the header names the columns,
// each of want must be there (others are ignored), and every row has the
// header's field count.
type alibabaTable struct {
	pos   []int // pos[k] is the field of column want[k]
	want  []string
	width int
}

// header reads the header record rec of line into t.
func (t *alibabaTable) header(rec []string, line int) error {
	t.width = len(rec)
	t.pos = make([]int, len(t.want))
	for k, w := range t.want {
		t.pos[k] = -1
		for i, name := range rec {
			if strings.EqualFold(strings.TrimSpace(name), w) {
				if t.pos[k] >= 0 {
					return &ParseError{Format: alibabaFormat, Line: line, Field: "column " + w, Value: name,
						Err: fmt.Errorf("duplicate column (also field %d)", t.pos[k]+1)}
				}
				t.pos[k] = i
			}
		}
		if t.pos[k] < 0 {
			return &ParseError{Format: alibabaFormat, Line: line, Err: fmt.Errorf("header has no %s column", w)}
		}
	}
	return nil
}

// read reads the table from r, calling row for each data record (blank
// lines skipped) with its line.
func (t *alibabaTable) read(r io.Reader, row func(rec []string, line int) error) error {
	cr := newCSVReader(r)
	first := true
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			if first {
				return &ParseError{Format: alibabaFormat, Line: 1, Err: errors.New("no header row")}
			}
			return nil
		}
		if err != nil {
			return alibabaError(err)
		}
		line, _ := cr.FieldPos(0)
		if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
			continue
		}
		if first {
			first = false
			if err := t.header(rec, line); err != nil {
				return err
			}
			continue
		}
		if len(rec) != t.width {
			return &ParseError{Format: alibabaFormat, Line: line,
				Err: fmt.Errorf("%d fields, want %d as in the header", len(rec), t.width)}
		}
		if err := row(rec, line); err != nil {
			return err
		}
	}
}

// alibabaError converts an error of the CSV reader as csvError does,
// naming the Alibaba format.
func alibabaError(err error) error {
	err = csvError(err)
	var pe *ParseError
	if errors.As(err, &pe) && pe.Format == "csv" {
		c := *pe
		c.Format = alibabaFormat
		return &c
	}
	return err
}

// field returns column k of rec, trimmed.
func (t *alibabaTable) field(rec []string, k int) string { return strings.TrimSpace(rec[t.pos[k]]) }

// count parses column k of rec as a whole number in 0..maxInt.
func (t *alibabaTable) count(rec []string, k, line int) (int, error) {
	s := t.field(rec, k)
	v, err := parseNum(s, true)
	if err == nil && (v < 0 || v > maxInt) {
		err = ErrRange
	}
	if err != nil {
		return 0, &ParseError{Format: alibabaFormat, Line: line, Field: "column " + t.want[k], Value: s, Err: err}
	}
	return int(v), nil
}

// seconds parses column k of rec as a time in seconds, >= 0.
func (t *alibabaTable) seconds(rec []string, k, line int) (int64, error) {
	s := t.field(rec, k)
	v, err := parseNum(s, false)
	if err == nil && v < 0 {
		err = ErrRange
	}
	if err != nil {
		return 0, &ParseError{Format: alibabaFormat, Line: line, Field: "column " + t.want[k], Value: s, Err: err}
	}
	return v, nil
}

// Columns of a node list, in the order of alibabaNodeCols.
const (
	anName = iota
	anCPU
	anMemory
	anGPU
	anModel
)

var alibabaNodeCols = []string{"sn", "cpu_milli", "memory_mib", "gpu", "model"}

// ReadAlibabaNodes reads an Alibaba node list: a header row naming at
// least the columns sn, cpu_milli, memory_mib, gpu and model (in any
// order; others are ignored), then one node per row. Counts must be whole
// numbers >= 0 and names unique and non-empty. Malformed input gives a
// [*ParseError] (`alibaba: line 7: column gpu "x": not a number`), and so
// does a line or input beyond [MaxLineBytes] or [MaxInputBytes].
func ReadAlibabaNodes(r io.Reader) ([]AlibabaNode, error) {
	t := alibabaTable{want: alibabaNodeCols}
	var nodes []AlibabaNode
	seen := map[string]int{}
	models := interner{}
	err := t.read(r, func(rec []string, line int) error {
		n := AlibabaNode{Name: t.field(rec, anName), Line: line}
		if n.Name == "" {
			return &ParseError{Format: alibabaFormat, Line: line, Field: "column sn", Err: errors.New("empty node name")}
		}
		if prev, dup := seen[n.Name]; dup {
			return &ParseError{Format: alibabaFormat, Line: line, Field: "column sn", Value: n.Name,
				Err: fmt.Errorf("duplicate node (also line %d)", prev)}
		}
		n.Name = strings.Clone(n.Name)
		seen[n.Name] = line
		var err error
		if n.CPUMillis, err = t.count(rec, anCPU, line); err != nil {
			return err
		}
		if n.MemoryMiB, err = t.count(rec, anMemory, line); err != nil {
			return err
		}
		if n.GPUs, err = t.count(rec, anGPU, line); err != nil {
			return err
		}
		if m := t.field(rec, anModel); m != "" {
			n.Model = models.get(m)
		}
		nodes = append(nodes, n)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return nodes, nil
}

// Columns of a pod list, in the order of alibabaPodCols.
const (
	apName = iota
	apCPU
	apMemory
	apGPUs
	apGPUMilli
	apSpec
	apQoS
	apPhase
	apCreated
	apDeleted
	apScheduled
)

var alibabaPodCols = []string{"name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec",
	"qos", "pod_phase", "creation_time", "deletion_time", "scheduled_time"}

// ReadAlibabaPods reads an Alibaba pod list: a header row naming at least
// the columns name, cpu_milli, memory_mib, num_gpu, gpu_milli, gpu_spec,
// qos, pod_phase, creation_time, deletion_time and scheduled_time (in any
// order; others are ignored), then one pod per row. It keeps the pods
// that ask for whole GPUs (num_gpu >= 1 and gpu_milli 1000) and counts
// the others: those that share a GPU (gpu_milli below 1000), those of no
// GPU, and those deleted before they were created. scheduled_time may be
// empty (a pod never bound). Counts must be whole numbers >= 0, gpu_milli
// at most 1000 and times >= 0. Malformed input gives a [*ParseError], as
// [ReadAlibabaNodes] does.
func ReadAlibabaPods(r io.Reader) (*AlibabaPods, error) {
	t := alibabaTable{want: alibabaPodCols}
	out := &AlibabaPods{}
	strs := interner{}
	err := t.read(r, func(rec []string, line int) error {
		p, keep, err := t.pod(rec, line, strs)
		if err != nil {
			return err
		}
		switch {
		case p.GPUs == 0:
			out.CPUOnly++
		case !keep:
			out.Fractional++
		case p.Deleted < p.Created:
			out.NoLifetime++
		default:
			out.Pods = append(out.Pods, p)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(out.Pods, func(a, b AlibabaPod) int { return cmp.Compare(a.Created, b.Created) })
	return out, nil
}

// pod parses one pod record; whole is false for a pod that shares a GPU.
func (t *alibabaTable) pod(rec []string, line int, strs interner) (p AlibabaPod, whole bool, err error) {
	p = AlibabaPod{Name: strings.Clone(t.field(rec, apName)), Line: line}
	if p.CPUMillis, err = t.count(rec, apCPU, line); err != nil {
		return p, false, err
	}
	if p.MemoryMiB, err = t.count(rec, apMemory, line); err != nil {
		return p, false, err
	}
	if p.GPUs, err = t.count(rec, apGPUs, line); err != nil {
		return p, false, err
	}
	milli, err := t.count(rec, apGPUMilli, line)
	if err != nil {
		return p, false, err
	}
	if milli > 1000 {
		return p, false, &ParseError{Format: alibabaFormat, Line: line, Field: "column gpu_milli",
			Value: t.field(rec, apGPUMilli), Err: errors.New("more than 1000 thousandths of a GPU")}
	}
	for _, f := range []struct {
		k   int
		dst *string
	}{{apSpec, &p.GPUSpec}, {apQoS, &p.QoS}, {apPhase, &p.Phase}} {
		if s := t.field(rec, f.k); s != "" {
			*f.dst = strs.get(s)
		}
	}
	if p.Created, err = t.seconds(rec, apCreated, line); err != nil {
		return p, false, err
	}
	if p.Deleted, err = t.seconds(rec, apDeleted, line); err != nil {
		return p, false, err
	}
	if t.field(rec, apScheduled) != "" {
		if p.Scheduled, err = t.seconds(rec, apScheduled, line); err != nil {
			return p, false, err
		}
		p.Bound = true
	}
	return p, milli == 1000, nil
}
