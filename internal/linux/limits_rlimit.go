package linux

// The resource limits as data: which rlimits a Limits becomes, for
// ApplySelf (rlimitsFor; limits_linux.go sets them) and for the child half
// of WrapCommand and Run (commandRlimits, in its payload).

import (
	"github.com/openparallax/sandbox/internal/spec"
	"github.com/openparallax/sandbox/internal/trampoline"
)

// rlimit is one resource limit ApplySelf sets.
type rlimit struct {
	resource   int
	name       string
	soft, hard uint64
}

// rlimitsFor returns the resource limits for l, in the order they
// are set. It is empty for a zero l.
func rlimitsFor(l spec.Limits) []rlimit {
	if l.IsZero() {
		return nil
	}
	var out []rlimit
	add := func(res int, name string, v int64) {
		if v > 0 {
			out = append(out, rlimit{resource: res, name: name, soft: uint64(v), hard: uint64(v)})
		}
	}
	add(rlimitFSIZE, "RLIMIT_FSIZE", l.FileSizeBytes)
	add(rlimitNOFILE, "RLIMIT_NOFILE", l.OpenFiles)
	add(rlimitDATA, "RLIMIT_DATA", l.MemoryBytes)
	add(rlimitNPROC, "RLIMIT_NPROC", l.Processes)
	if l.CPUTime > 0 {
		s := rlimitSeconds(l.CPUTime)
		// SIGXCPU at the limit ends a program that does not handle it,
		// with a signal that names the cause; SIGKILL a second later ends
		// one that does.
		out = append(out, rlimit{resource: rlimitCPU, name: "RLIMIT_CPU", soft: s, hard: s + 1})
	}
	out = append(out, rlimit{resource: rlimitCORE, name: "RLIMIT_CORE", soft: 0, hard: 0})
	return out
}

// clampRlimit is r as it can be set under the hard limit ceiling: soft and
// hard never above it, soft never above hard.
func clampRlimit(r rlimit, ceiling uint64) (soft, hard uint64) {
	hard = min(r.hard, ceiling)
	return min(r.soft, hard), hard
}

// commandRlimits are the resource limits the child half sets on itself:
// RLIMIT_FSIZE and RLIMIT_NOFILE (per process, which is what those fields
// mean), RLIMIT_CORE 0, and for the tree-wide limits the cgroup a does not
// enforce, ApplySelf's per-process stand-ins (RLIMIT_NPROC, RLIMIT_DATA,
// RLIMIT_CPU), which the plan reports for what they are. ceiling holds,
// per resource, the most the child half can set as a hard limit
// (rlimitCeilings): a limit above it is set as it, which still holds the
// limit, rather than failing the spawn.
func commandRlimits(l spec.Limits, a spec.Cgroup, ceiling map[int]uint64) []trampoline.Rlimit {
	limited := !l.IsZero()
	if a.Pids {
		l.Processes = 0
	}
	if a.Memory {
		l.MemoryBytes = 0
	}
	if a.CPU {
		l.CPUTime = 0
	}
	var out []trampoline.Rlimit
	for _, r := range rlimitsFor(l) {
		soft, hard := r.soft, r.hard
		if c, ok := ceiling[r.resource]; ok {
			soft, hard = clampRlimit(r, c)
		}
		out = append(out, trampoline.Rlimit{Resource: uint32(r.resource), Cur: soft, Max: hard})
	}
	if len(out) == 0 && limited {
		// Only cgroup limits (l is now zero): still no core dump.
		out = append(out, trampoline.Rlimit{Resource: rlimitCORE})
	}
	return out
}

// rlimitOfFeature is the resource limit that stands for each limit
// feature where an rlimit enforces it.
var rlimitOfFeature = map[string]int{
	spec.FeatureLimitProcesses: rlimitNPROC,
	spec.FeatureLimitMemory:    rlimitDATA,
	spec.FeatureLimitCPUTime:   rlimitCPU,
	spec.FeatureLimitFileSize:  rlimitFSIZE,
	spec.FeatureLimitOpenFiles: rlimitNOFILE,
}

// credsOf are the credentials of a caller that is uid 0 or not, with the
// hard limits ceilings (per resource, as rlimitCeilings reads them) by
// limit feature; a resource without a ceiling leaves its feature's hard
// limit unknown.
func credsOf(uid0 bool, ceilings map[int]uint64) selfCreds {
	c := selfCreds{uid0: uid0, hard: map[string]uint64{}}
	for f, res := range rlimitOfFeature {
		if h, ok := ceilings[res]; ok {
			c.hard[f] = h
		}
	}
	return c
}
