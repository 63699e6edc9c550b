package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/openparallax/sandbox/internal/spec"
)

// Limits bound the resources a confined program may consume. Each field's
// zero value means no limit for that resource; a negative value is a
// *ConfigError. No limit is ever imposed silently: a Config without Limits
// limits nothing.
//
// # What is enforced, where
//
// A limit is a promise about a set of processes, and the mechanisms differ
// in which set they can bound:
//
//   - A cgroup (v2, or v1 controllers on hosts still on the legacy
//     hierarchy) bounds the whole process tree: every task it creates,
//     the memory of all of them (memfd and tmpfs pages included), their
//     total CPU time. It needs a cgroup the caller may manage, found
//     without side effects (internal/cgroup): on cgroup v2 the nearest
//     cgroup, from the caller's own upwards, that the caller may write and
//     whose cgroup.subtree_control already enables pids and memory for
//     its children: for root under systemd, the slice above the caller's
//     unit (system.slice, a user's slice), or the root cgroup; for any
//     user, a delegated cgroup (systemd's Delegate=yes, a container's own
//     cgroup) in a leaf of which the caller runs, with the controllers
//     enabled in it; on cgroup v1, the caller's own cgroup in each
//     controller's hierarchy, writable (as root). The plan names the
//     directory. WrapCommand and Run
//     make one fresh cgroup per tree, write the limits into it before the
//     target starts, and pass its cgroup.procs descriptors (one per
//     hierarchy) to the child half, which writes "0" to each before
//     anything else and fails closed if it cannot: the target's first
//     instruction already runs in it. Processes is pids.max; MemoryBytes
//     is memory.max (v2, swap.max 0, oom.group 1) or
//     memory.limit_in_bytes with memsw the same (v1); CPUTime is a
//     watchdog in the caller that reads the tree's CPU time every 20 ms and
//     kills the tree (v2 cpu.stat, v1 cpuacct). Run removes the cgroup
//     when the tree is gone; WrapCommand's caller does, with
//     [ReleaseCommand]. One the caller could not remove (it was killed) is
//     removed, with what is left in it, by the caller's reaper: one
//     background process per caller, started with its first tree's
//     cgroup, that waits for the caller to exit and then kills what is
//     left in each cgroup the caller made and removes it (see
//     internal/cgroup's reaper_linux.go). So a tree with a cgroup dies
//     with a killed caller under WrapCommand too. If the reaper could not
//     run (it was killed with the caller), the next WrapCommand or Run
//     that makes a tree's cgroup in the same PID namespace does that work.
//   - Resource limits (setrlimit(2)) bound one process each, and are
//     inherited by its children, which each get a budget of their own.
//     WrapCommand's and Run's child half sets FileSizeBytes
//     (RLIMIT_FSIZE), OpenFiles (RLIMIT_NOFILE) and RLIMIT_CORE 0 always,
//     and for each of Processes, MemoryBytes and CPUTime that no cgroup
//     enforces here the same per-process stand-in as ApplySelf (below),
//     reported as what it is. It inherits the caller's hard limits and
//     sets its own only after dropping every capability, so it never asks
//     for more than it can set: a limit above an inherited hard limit is
//     set as that hard limit (lower, so the limit holds; the plan says
//     so).
//
// [PlanFor] reports each requested limit once per entry point, with
// [Enforcement.Scope] set: [ScopeApplySelf] for ApplySelf, [ScopeCommand]
// for WrapCommand and Run. A limit enforced for a narrower set than the
// field promises (per process where the field means the tree) is reported
// as not enforced, with what is applied in its Detail; Strict then refuses
// it.
//
// ApplySelf on Linux sets soft and hard limits of the calling process (it
// only ever lowers a limit; a hard limit already lower stays):
//
//   - FileSizeBytes: RLIMIT_FSIZE. A write past it fails with EFBIG and
//     raises SIGXFSZ, which ends a program that does not handle it (Go
//     programs ignore it and see EFBIG).
//   - OpenFiles: RLIMIT_NOFILE. Opening a descriptor numbered OpenFiles or
//     higher fails with EMFILE.
//   - CPUTime: RLIMIT_CPU, rounded up to whole seconds: SIGXCPU at that
//     much CPU time of the process, SIGKILL one second later. Per process:
//     with AllowProcessSpawn each child has its own budget, so the tree's
//     total is not bounded (reported).
//   - MemoryBytes: RLIMIT_DATA, the process's private writable memory
//     (heap, anonymous mappings, data segments). RLIMIT_DATA rather than
//     RLIMIT_AS: RLIMIT_AS counts reserved address space, and runtimes
//     reserve far more than they use (V8's pointer cage, WebAssembly guard
//     regions, Java's class space, Go's race detector), so an AS limit
//     near the memory a program really needs stops them at start. Neither
//     counts memfd, shared memory or tmpfs pages, nor sums over processes:
//     the tree's memory is not bounded without a cgroup (reported).
//   - Processes: RLIMIT_NPROC. It counts every task (process or thread) of
//     the process's real user ID, inside the sandbox and out: the tree
//     can never exceed Processes, but it may be refused a fork or a thread
//     earlier when the user runs other processes, and a Go program whose
//     user already has Processes tasks cannot start the threads its
//     runtime needs. The kernel does not apply it to root (or to a process
//     with CAP_SYS_RESOURCE or CAP_SYS_ADMIN): reported as not enforced
//     there. Meant for an Agent running as a user of its own.
//   - With any limit set, RLIMIT_CORE is 0: no core dump is written (a
//     core pattern that pipes to a program would run that program outside
//     the sandbox).
//
// A process holding CAP_SYS_RESOURCE could raise its hard limits again
// (setrlimit and prlimit64 are not filtered); ApplySelf empties every
// capability set, so the process it leaves, root included, cannot. The
// limits are set after the capabilities are dropped; lowering a limit
// needs none.
//
// # JSON
//
// Field names as in the struct tags. cpu_time is a string in Go's duration
// syntax ("90s", "1m30s", "1h"); a JSON number is also accepted and read as
// nanoseconds (how encoding/json writes a bare time.Duration). Marshalling
// writes the string form. An unknown key inside "limits" is an error, even
// for a decoder that allows unknown fields elsewhere: a misspelt limit must
// not become no limit.
type Limits struct {
	// Processes is the number of tasks (processes and threads) the tree
	// may hold at once.
	Processes int64 `json:"processes,omitempty"`
	// MemoryBytes is the memory the tree may hold resident: anonymous
	// memory, page cache it dirtied, memfd and tmpfs pages. Swap is not
	// granted on top of it.
	MemoryBytes int64 `json:"memory_bytes,omitempty"`
	// CPUTime is the total CPU time (user and system) the tree may use.
	CPUTime time.Duration `json:"-"`
	// FileSizeBytes is the size of the largest file a process may write
	// or extend.
	FileSizeBytes int64 `json:"file_size_bytes,omitempty"`
	// OpenFiles is the number of descriptors a process may hold: it can
	// open descriptors numbered 0 to OpenFiles-1.
	OpenFiles int64 `json:"open_files,omitempty"`
}

// IsZero reports whether l limits nothing.
func (l Limits) IsZero() bool { return l == Limits{} }

// limitsJSON is Limits as it is written in JSON.
type limitsJSON struct {
	Processes     int64           `json:"processes,omitempty"`
	MemoryBytes   int64           `json:"memory_bytes,omitempty"`
	CPUTime       json.RawMessage `json:"cpu_time,omitempty"`
	FileSizeBytes int64           `json:"file_size_bytes,omitempty"`
	OpenFiles     int64           `json:"open_files,omitempty"`
}

// MarshalJSON writes cpu_time in Go's duration syntax.
func (l Limits) MarshalJSON() ([]byte, error) {
	j := limitsJSON{Processes: l.Processes, MemoryBytes: l.MemoryBytes, FileSizeBytes: l.FileSizeBytes, OpenFiles: l.OpenFiles}
	if l.CPUTime != 0 {
		j.CPUTime, _ = json.Marshal(l.CPUTime.String())
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads cpu_time as a duration string or as nanoseconds.
func (l *Limits) UnmarshalJSON(b []byte) error {
	var j limitsJSON
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return fmt.Errorf("limits: %w", err)
	}
	*l = Limits{Processes: j.Processes, MemoryBytes: j.MemoryBytes, FileSizeBytes: j.FileSizeBytes, OpenFiles: j.OpenFiles}
	if len(j.CPUTime) == 0 || string(j.CPUTime) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(j.CPUTime, &s); err == nil {
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("limits.cpu_time: %w", err)
		}
		l.CPUTime = d
		return nil
	}
	var ns int64
	if err := json.Unmarshal(j.CPUTime, &ns); err != nil {
		return errors.New(`limits.cpu_time: want a duration such as "90s", or nanoseconds`)
	}
	l.CPUTime = time.Duration(ns)
	return nil
}

// Feature names of the limits in [Plan.Features]. Each requested limit is
// listed once per entry point, with [Enforcement.Scope] set.
const (
	FeatureLimitProcesses = spec.FeatureLimitProcesses // Limits.Processes
	FeatureLimitMemory    = spec.FeatureLimitMemory    // Limits.MemoryBytes
	FeatureLimitCPUTime   = spec.FeatureLimitCPUTime   // Limits.CPUTime
	FeatureLimitFileSize  = spec.FeatureLimitFileSize  // Limits.FileSizeBytes
	FeatureLimitOpenFiles = spec.FeatureLimitOpenFiles // Limits.OpenFiles
)

// Values of [Enforcement.Scope]. An Enforcement without a Scope holds for
// every entry point.
const (
	ScopeApplySelf = spec.ScopeApplySelf // Sandbox.ApplySelf
	ScopeCommand   = spec.ScopeCommand   // Sandbox.WrapCommand and Run
)
