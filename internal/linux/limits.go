package linux

import (
	"strconv"
	"time"

	"github.com/openparallax/sandbox/internal/spec"
)

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
func linuxLimitFeatures(rc *spec.Resolved, c selfCreds, cg spec.Cgroup) []spec.Enforcement {
	l := rc.Config.Limits
	var out []spec.Enforcement
	self := func(feature string, enforced bool, detail, hint string) {
		detail += c.selfHardNote(feature, rlimitAsked(l, feature))
		if enforced && c.capResource {
			enforced = false
			detail = "applied but not binding: " + detail + "; this process holds CAP_SYS_RESOURCE and can raise its hard limits again " +
				"(setrlimit and prlimit64 are not filtered)"
			hint = "run the Agent as a user without CAP_SYS_RESOURCE"
		}
		out = append(out, spec.Enforcement{Feature: feature, Scope: spec.ScopeApplySelf, Enforced: enforced, Detail: "ApplySelf: " + detail, Hint: hint})
	}
	noCgroup := "ApplySelf uses no cgroup: nothing would remove one after the process exits, and memory it already holds would stay charged elsewhere"
	for _, f := range spec.RequestedLimits(l) {
		switch f {
		case spec.FeatureLimitProcesses:
			if c.uid0 || c.capAdmin || c.capResource {
				self(f, false, "RLIMIT_NPROC "+strconv.FormatInt(l.Processes, 10)+" set, but the kernel does not apply it to root or to a process with CAP_SYS_RESOURCE or CAP_SYS_ADMIN",
					"run the Agent as a user of its own, or deny AllowProcessSpawn")
			} else {
				self(f, true, "RLIMIT_NPROC "+strconv.FormatInt(l.Processes, 10)+": counts every task of the real user ID, "+
					"so the tree stays within it but may be refused a fork earlier when the user runs other processes", "")
			}
		case spec.FeatureLimitMemory:
			self(f, false, "partly: RLIMIT_DATA "+strconv.FormatInt(l.MemoryBytes, 10)+" bounds each process's private writable memory; "+
				"memfd, shared memory and tmpfs pages, and the sum over processes, are not bounded; "+noCgroup, "")
		case spec.FeatureLimitCPUTime:
			secs := rlimitSeconds(l.CPUTime)
			d := "RLIMIT_CPU: SIGXCPU at " + strconv.FormatUint(secs, 10) + " s of CPU time, SIGKILL a second later"
			if rc.Config.AllowProcessSpawn {
				self(f, false, "partly: "+d+", per process: each child gets a budget of its own, so the tree's total is not bounded; "+noCgroup,
					"deny AllowProcessSpawn to make the process the whole tree")
			} else {
				self(f, true, d+" (spawn denied: the process is the whole tree)", "")
			}
		case spec.FeatureLimitFileSize:
			self(f, true, "RLIMIT_FSIZE "+strconv.FormatInt(l.FileSizeBytes, 10)+": writing past it fails with EFBIG and raises SIGXFSZ", "")
		case spec.FeatureLimitOpenFiles:
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
func commandLimitFeature(rc *spec.Resolved, c selfCreds, cg spec.Cgroup, f string) spec.Enforcement {
	l := rc.Config.Limits
	e := spec.Enforcement{Feature: f, Scope: spec.ScopeCommand}
	set := func(enforced bool, detail, hint string) spec.Enforcement {
		e.Enforced, e.Detail, e.Hint = enforced, "WrapCommand/Run: "+detail, hint
		return e
	}
	// An rlimit of the child half: what the caller's hard limit makes
	// of it (the limit holds either way: see commandRlimits).
	setRlimit := func(enforced bool, detail, hint string) spec.Enforcement {
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
	case spec.FeatureLimitProcesses:
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
	case spec.FeatureLimitMemory:
		if cg.Memory {
			return set(true, tree+"memory limit "+strconv.FormatInt(l.MemoryBytes, 10)+" over anonymous memory, page cache, memfd and tmpfs pages of the whole tree, "+
				cg.Swap+"; past it the out-of-memory killer ends the program", "")
		}
		return setRlimit(false, "partly: RLIMIT_DATA "+strconv.FormatInt(l.MemoryBytes, 10)+" bounds each process's private writable memory; "+
			"memfd, shared memory and tmpfs pages, and the sum over processes, are not bounded: "+noCg, cgHint)
	case spec.FeatureLimitCPUTime:
		if cg.CPU {
			return set(true, tree+"a watchdog in the caller reads the tree's CPU time every 20 ms and kills the whole tree at "+l.CPUTime.String()+
				" (it may overrun by about 20 ms per CPU)", "")
		}
		d := "RLIMIT_CPU: SIGXCPU at " + strconv.FormatUint(rlimitSeconds(l.CPUTime), 10) + " s of CPU time, SIGKILL a second later"
		if rc.Config.AllowProcessSpawn {
			return setRlimit(false, "partly: "+d+", per process: each child gets a budget of its own, so the tree's total is not bounded: "+noCg, cgHint)
		}
		return setRlimit(true, d+" (spawn denied: the process is the whole tree; "+noCg+")", "")
	case spec.FeatureLimitFileSize:
		return setRlimit(true, "RLIMIT_FSIZE "+strconv.FormatInt(l.FileSizeBytes, 10)+" in the child half, inherited by every process: writing past it fails with EFBIG and raises SIGXFSZ", "")
	case spec.FeatureLimitOpenFiles:
		return setRlimit(true, "RLIMIT_NOFILE "+strconv.FormatInt(l.OpenFiles, 10)+" in the child half, inherited by every process: opening a descriptor numbered that or higher fails with EMFILE", "")
	}
	return set(false, "unknown limit", "")
}

// rlimitAsked is the hard limit asked of the rlimit that stands for the
// limit feature f (see rlimitsFor), in that rlimit's unit.
func rlimitAsked(l spec.Limits, f string) uint64 {
	switch f {
	case spec.FeatureLimitProcesses:
		return uint64(l.Processes)
	case spec.FeatureLimitMemory:
		return uint64(l.MemoryBytes)
	case spec.FeatureLimitCPUTime:
		return rlimitSeconds(l.CPUTime) + 1
	case spec.FeatureLimitFileSize:
		return uint64(l.FileSizeBytes)
	case spec.FeatureLimitOpenFiles:
		return uint64(l.OpenFiles)
	}
	return 0
}

// rlimitSeconds rounds d up to whole seconds, at least one.
func rlimitSeconds(d time.Duration) uint64 {
	s := uint64((d + time.Second - 1) / time.Second)
	return max(s, 1)
}
