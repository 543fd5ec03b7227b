// Package trace reads workload traces into a common job list for the
// simulator: Standard Workload Format (SWF) logs of HPC clusters, counted
// in processors, and the project's CSV format for GPU clusters; and the
// node and pod lists of Alibaba's GPU trace, with CPU and memory.
//
// Both readers return a [Trace] whose Jobs are sorted stably by submit
// time, so jobs submitted at the same second keep their file order. A
// record that parses but cannot be simulated is skipped and counted in
// [Trace.Skipped] by cause ([SkipNoProcessors], [SkipNoRuntime],
// [SkipNoSubmitTime]); a record
// that does not parse stops the read with a [*ParseError] that names the
// line, for example
//
//	swf: line 17: field 4 "abc": not a number
//
// Readers stream their input, so memory grows with the jobs read, not
// with the input: blank and comment lines cost nothing but reading time.
// A line longer than [MaxLineBytes] (1 MiB) or an input longer than
// [MaxInputBytes] (4 GiB) stops the read with a [*ParseError] that wraps
// [ErrTooLong] or [ErrTooLarge] and names the limit:
//
//	swf: line 1: line longer than 1048576 bytes
//
// so an endless stream such as /dev/zero ends in an error, not in running
// out of memory.
//
// Readers never panic on bad input. Every returned job has Procs,
// ReqProcs, Run and Limit of at least 1. Numbers may be written as
// integers or decimal floats ("3600.0", "1e3"); times are rounded to whole
// seconds, while processor and GPU counts and tiers must be whole.
// Infinities, NaN, hexadecimal and values beyond int64 are errors.
//
// # Standard Workload Format
//
// The format of the Parallel Workloads Archive: one job per line, 18
// whitespace-separated numeric fields, -1 meaning unknown. Lines whose
// first non-blank character is ';' are header comments; the headers
// "MaxProcs: N" and "MaxNodes: N" fill [Trace.MaxProcs] and
// [Trace.MaxNodes] (0 when absent). Blank and whitespace-only lines are
// ignored. A data line with any other number of fields is an error.
//
// Field mapping (1-based):
//
//	ID       field 1, job number
//	Submit   field 2, submit time (s)
//	Run      field 4, run time (s)
//	Procs    field 5, allocated processors; field 8, requested
//	         processors, when field 5 is <= 0
//	ReqProcs field 8, requested processors; Procs when field 8 is <= 0
//	Limit    field 9, requested time (s); the run time when field 9 is <= 0
//	Team     field 13, group number in decimal; "" when it is negative. (Field
//	         12, the user, is not kept.)
//	Tier     always DefaultTier
//	Kind     always KindTraining
//
// A job is skipped as "no-processors" when both fields 5 and 8 are <= 0,
// otherwise as "no-runtime" when field 4 is <= 0, otherwise as
// "no-submit-time" when field 2 is negative (unknown). No other filtering
// is applied: Limit may be below Run, and Procs may exceed MaxProcs.
//
// # CSV
//
// Comma-separated, one job per row, with the columns
//
//	id,submit,gpus,duration[,timeLimit][,team][,tier][,kind]
//
// in seconds and GPUs. Without a header the columns are positional, and a
// row holds 4 to 8 fields. The first row is a header when it names at least
// one known column and its second field is not a number; a header may list
// the columns in any order, must name submit, gpus and duration, and fixes
// the field count of every row. Names are matched ignoring case and the
// characters '_', '-', '.' and space, with these aliases:
//
//	id         id, job_id, job, name
//	submit     submit, submit_time, arrival, arrival_time
//	gpus       gpus, gpu, num_gpus, num_gpu, procs, processors
//	duration   duration, run, runtime
//	timeLimit  timeLimit, limit, requested_time, reqtime
//	team       team, group, account
//	tier       tier
//	kind       kind
//
// Other columns are ignored. So the normalized Philly trace
// (job_id,submit_time,gpus,duration,team) reads as is.
//
// Empty optional fields take defaults: id is the 0-based data row number,
// timeLimit is the duration (also when it is <= 0), team is "", tier is
// DefaultTier, kind is "training". kind must be "training" or "inference"
// (any case) and tier must be >= 0. Fields may be quoted as in RFC 4180,
// surrounding spaces are trimmed, and lines starting with '#' are comments
// (also the first line after a byte order mark).
// IDs are kept as written and are not checked for uniqueness. A row is
// skipped as "no-processors" when gpus <= 0, otherwise as "no-runtime" when
// duration <= 0.
//
// # Alibaba GPU trace (2023)
//
// [ReadAlibabaNodes] and [ReadAlibabaPods] read the node list and the
// pod list of Alibaba's GPU cluster trace of 2023 (the openb_*.csv files
// of cluster-trace-gpu-v2023), CSV with a header row that names the
// columns (in any order; others are ignored):
//
//	nodes  sn,cpu_milli,memory_mib,gpu,model
//	pods   name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,
//	       pod_phase,creation_time,deletion_time,scheduled_time
//
// A pod's CPU and memory are for the whole pod, its times in seconds;
// scheduled_time is empty for a pod never bound. Only pods that ask for
// whole GPUs (num_gpu >= 1, gpu_milli 1000) are kept, sorted stably by
// creation time; pods that share a GPU (gpu_milli below 1000), pods of no
// GPU and pods deleted before they were created are counted in
// [AlibabaPods]. Counts are whole numbers >= 0, gpu_milli at most 1000,
// times >= 0 and node names unique; errors are [*ParseError]s of format
// "alibaba", within the same limits as the other readers.
//
// # Files
//
// [Read] opens a file, decompresses gzip input (detected by content) as
// it reads, and picks the reader from the format argument or, when it is
// empty, from the file name (see [FormatOf]). The limits apply to the
// decompressed text.
package trace
