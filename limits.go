package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
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

// ReleaseCommand ends the resource limits of a command that
// [Sandbox.WrapCommand] prepared, once the caller is done with its process
// tree, and says which limit ended the program, if one is known to have (a
// Feature constant of the limits, as [RunResult.LimitExceeded]; "" when
// none). Call it after cmd.Wait, or after a failed cmd.Start, whenever
// WrapCommand succeeded with Config.Limits set; for any other command it
// does nothing.
//
// On Linux, where WrapCommand made the tree a cgroup of its own (see
// [Limits]), the tree's lifetime is the caller's: the cgroup holds the
// limits, and the CPU-time watchdog runs in the caller, for as long as the
// caller keeps it. ReleaseCommand stops the watchdog, kills every process
// still in the cgroup (descendants that outlived cmd's process: the tree is
// ended whole, without a race, as [Run] ends it), and removes the cgroup.
// A cgroup whose caller never released it, because the caller exited or
// was killed first, is removed with what is left in it by the caller's
// reaper once the caller is gone (see [Limits]): the tree does not outlive
// its caller. Elsewhere
// there is nothing to release: it returns "" and nil.
func ReleaseCommand(cmd *exec.Cmd) (limitExceeded string, err error) {
	if cmd == nil {
		return "", nil
	}
	return releaseCommand(cmd)
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

// validate refuses negative limits.
func (l Limits) validate() error { return spec.Limits(l).Validate() }

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

// requestedLimits lists the features of the limits l sets, in a fixed order
// (spec.RequestedLimits).
func requestedLimits(l spec.Limits) []string { return spec.RequestedLimits(l) }

// unenforcedLimits reports every requested limit as not enforced for every
// entry point, for platforms that enforce none (spec.UnenforcedLimits).
func unenforcedLimits(rc *resolvedConfig, why string) []Enforcement {
	return spec.UnenforcedLimits(rc, why)
}

// cgroupAvail is what WrapCommand and Run can use of a cgroup here, as
// data for the plan (limits_linux.go detects it). The zero value is "no
// cgroup".
type cgroupAvail = spec.Cgroup

// selfCreds is what decides whether the rlimits ApplySelf sets bind the
// calling process.
type selfCreds struct {
	uid0        bool // real user ID 0: RLIMIT_NPROC is not applied to it
	capResource bool // CAP_SYS_RESOURCE permitted: hard limits can be raised again
	capAdmin    bool // CAP_SYS_ADMIN permitted: RLIMIT_NPROC is not applied

	// hard holds, per limit feature, the caller's hard limit of the
	// rlimit that stands for it (in that rlimit's unit), which ApplySelf
	// never raises and the child half of WrapCommand and Run inherits and
	// cannot raise either; a feature absent: not known.
	hard map[string]uint64
}

// selfHardNote is what the plan adds to ApplySelf's rlimit of feature f,
// asked as v: "" unless the process's hard limit is lower, which stays
// (ApplySelf only lowers).
func (c selfCreds) selfHardNote(f string, v uint64) string {
	h, ok := c.hard[f]
	if !ok || v <= h {
		return ""
	}
	return "; this process's hard limit is lower, " + strconv.FormatUint(h, 10) + ", and stays: the limit holds"
}

// commandHardNote is what the plan adds to the child half's rlimit of
// feature f, asked as v: "" unless the caller's hard limit, which the
// child half inherits, is lower; then what the child half sets instead
// (see commandRlimits).
func (c selfCreds) commandHardNote(f string, v uint64) string {
	h, ok := c.hard[f]
	if !ok || v <= h {
		return ""
	}
	hs := strconv.FormatUint(h, 10)
	return "; the caller's hard limit is lower, " + hs + ", and the child half cannot raise it (it sets its limits after dropping every capability): " +
		"it sets " + hs + ", so the limit holds"
}

// linuxLimitFeatures reports the requested limits on Linux: for ApplySelf
// the rlimits it sets, for WrapCommand and Run the tree's cgroup where cg
// has the controller and the child half's rlimits otherwise (see
// commandRlimits). It is pure: the caller's credentials and the cgroup
// found are arguments.
func linuxLimitFeatures(rc *resolvedConfig, c selfCreds, cg cgroupAvail) []Enforcement {
	l := rc.Config.Limits
	var out []Enforcement
	self := func(feature string, enforced bool, detail, hint string) {
		detail += c.selfHardNote(feature, rlimitAsked(l, feature))
		if enforced && c.capResource {
			enforced = false
			detail = "applied but not binding: " + detail + "; this process holds CAP_SYS_RESOURCE and can raise its hard limits again " +
				"(setrlimit and prlimit64 are not filtered)"
			hint = "run the Agent as a user without CAP_SYS_RESOURCE"
		}
		out = append(out, Enforcement{Feature: feature, Scope: ScopeApplySelf, Enforced: enforced, Detail: "ApplySelf: " + detail, Hint: hint})
	}
	noCgroup := "ApplySelf uses no cgroup: nothing would remove one after the process exits, and memory it already holds would stay charged elsewhere"
	for _, f := range requestedLimits(l) {
		switch f {
		case FeatureLimitProcesses:
			if c.uid0 || c.capAdmin || c.capResource {
				self(f, false, "RLIMIT_NPROC "+strconv.FormatInt(l.Processes, 10)+" set, but the kernel does not apply it to root or to a process with CAP_SYS_RESOURCE or CAP_SYS_ADMIN",
					"run the Agent as a user of its own, or deny AllowProcessSpawn")
			} else {
				self(f, true, "RLIMIT_NPROC "+strconv.FormatInt(l.Processes, 10)+": counts every task of the real user ID, "+
					"so the tree stays within it but may be refused a fork earlier when the user runs other processes", "")
			}
		case FeatureLimitMemory:
			self(f, false, "partly: RLIMIT_DATA "+strconv.FormatInt(l.MemoryBytes, 10)+" bounds each process's private writable memory; "+
				"memfd, shared memory and tmpfs pages, and the sum over processes, are not bounded; "+noCgroup, "")
		case FeatureLimitCPUTime:
			secs := rlimitSeconds(l.CPUTime)
			d := "RLIMIT_CPU: SIGXCPU at " + strconv.FormatUint(secs, 10) + " s of CPU time, SIGKILL a second later"
			if rc.Config.AllowProcessSpawn {
				self(f, false, "partly: "+d+", per process: each child gets a budget of its own, so the tree's total is not bounded; "+noCgroup,
					"deny AllowProcessSpawn to make the process the whole tree")
			} else {
				self(f, true, d+" (spawn denied: the process is the whole tree)", "")
			}
		case FeatureLimitFileSize:
			self(f, true, "RLIMIT_FSIZE "+strconv.FormatInt(l.FileSizeBytes, 10)+": writing past it fails with EFBIG and raises SIGXFSZ", "")
		case FeatureLimitOpenFiles:
			self(f, true, "RLIMIT_NOFILE "+strconv.FormatInt(l.OpenFiles, 10)+": opening a descriptor numbered that or higher fails with EMFILE", "")
		}
		out = append(out, commandLimitFeature(rc, c, cg, f))
	}
	return out
}

// commandLimitFeature says how WrapCommand and Run enforce the limit
// feature f: by the tree's cgroup when cg has what it needs, else by the
// rlimits the child half sets (commandRlimits), which bind the same way as
// ApplySelf's, except that the child half has dropped every capability.
func commandLimitFeature(rc *resolvedConfig, c selfCreds, cg cgroupAvail, f string) Enforcement {
	l := rc.Config.Limits
	e := Enforcement{Feature: f, Scope: ScopeCommand}
	set := func(enforced bool, detail, hint string) Enforcement {
		e.Enforced, e.Detail, e.Hint = enforced, "WrapCommand/Run: "+detail, hint
		return e
	}
	// An rlimit of the child half: what the caller's hard limit makes
	// of it (the limit holds either way: see commandRlimits).
	setRlimit := func(enforced bool, detail, hint string) Enforcement {
		return set(enforced, detail+c.commandHardNote(f, rlimitAsked(l, f)), hint)
	}
	noCg := "no cgroup the caller may manage"
	if cg.Version != "" {
		noCg = cg.Version + " without the controller"
	}
	if cg.Why != "" {
		noCg += " (" + cg.Why + ")"
	}
	cgHint := "run as root on a host with cgroup controllers, or in a leaf of a delegated cgroup v2 subtree that enables pids and memory for its children (systemd Delegate=yes)"
	tree := "the tree's own " + cg.Version + " (a cgroup in " + cg.Where + "), made before the target starts and removed when the tree is gone: "
	switch f {
	case FeatureLimitProcesses:
		if cg.Pids {
			return set(true, tree+"pids.max "+strconv.FormatInt(l.Processes, 10)+": every task of the tree, threads included; a fork past it fails with EAGAIN", "")
		}
		if c.uid0 {
			return setRlimit(false, "RLIMIT_NPROC "+strconv.FormatInt(l.Processes, 10)+" set, but the kernel does not apply it to root; "+noCg, cgHint)
		}
		return setRlimit(true, "RLIMIT_NPROC "+strconv.FormatInt(l.Processes, 10)+" ("+noCg+"): counts every task of the real user ID, "+
			"so the tree stays within it but may be refused a fork earlier when the user runs other processes "+
			"(where the child half starts in a user namespace of its own, as it does for a caller that is not root when the namespaces are used, "+
			"Linux 5.14 and later count only that namespace's tasks: the tree's)", "")
	case FeatureLimitMemory:
		if cg.Memory {
			return set(true, tree+"memory limit "+strconv.FormatInt(l.MemoryBytes, 10)+" over anonymous memory, page cache, memfd and tmpfs pages of the whole tree, "+
				cg.Swap+"; past it the out-of-memory killer ends the program", "")
		}
		return setRlimit(false, "partly: RLIMIT_DATA "+strconv.FormatInt(l.MemoryBytes, 10)+" bounds each process's private writable memory; "+
			"memfd, shared memory and tmpfs pages, and the sum over processes, are not bounded: "+noCg, cgHint)
	case FeatureLimitCPUTime:
		if cg.CPU {
			return set(true, tree+"a watchdog in the caller reads the tree's CPU time every 20 ms and kills the whole tree at "+l.CPUTime.String()+
				" (it may overrun by about 20 ms per CPU)", "")
		}
		d := "RLIMIT_CPU: SIGXCPU at " + strconv.FormatUint(rlimitSeconds(l.CPUTime), 10) + " s of CPU time, SIGKILL a second later"
		if rc.Config.AllowProcessSpawn {
			return setRlimit(false, "partly: "+d+", per process: each child gets a budget of its own, so the tree's total is not bounded: "+noCg, cgHint)
		}
		return setRlimit(true, d+" (spawn denied: the process is the whole tree; "+noCg+")", "")
	case FeatureLimitFileSize:
		return setRlimit(true, "RLIMIT_FSIZE "+strconv.FormatInt(l.FileSizeBytes, 10)+" in the child half, inherited by every process: writing past it fails with EFBIG and raises SIGXFSZ", "")
	case FeatureLimitOpenFiles:
		return setRlimit(true, "RLIMIT_NOFILE "+strconv.FormatInt(l.OpenFiles, 10)+" in the child half, inherited by every process: opening a descriptor numbered that or higher fails with EMFILE", "")
	}
	return set(false, "unknown limit", "")
}

// rlimitAsked is the hard limit asked of the rlimit that stands for the
// limit feature f (see rlimitsFor), in that rlimit's unit.
func rlimitAsked(l spec.Limits, f string) uint64 {
	switch f {
	case FeatureLimitProcesses:
		return uint64(l.Processes)
	case FeatureLimitMemory:
		return uint64(l.MemoryBytes)
	case FeatureLimitCPUTime:
		return rlimitSeconds(l.CPUTime) + 1
	case FeatureLimitFileSize:
		return uint64(l.FileSizeBytes)
	case FeatureLimitOpenFiles:
		return uint64(l.OpenFiles)
	}
	return 0
}

// rlimitSeconds rounds d up to whole seconds, at least one.
func rlimitSeconds(d time.Duration) uint64 {
	s := uint64((d + time.Second - 1) / time.Second)
	return max(s, 1)
}
