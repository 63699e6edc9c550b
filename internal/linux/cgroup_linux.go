//go:build linux

package linux

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/openparallax/sandbox/internal/cgroup"
	"github.com/openparallax/sandbox/internal/spec"
)

// The tree's cgroup under WrapCommand and Run (internal/cgroup has the
// machinery): where one can be managed here, every tree gets a fresh
// cgroup, made with its limits before the target starts, which the child
// half joins through the cgroup.procs descriptors of the payload before
// anything else; Run kills the tree through it and removes it, and
// WrapCommand's caller removes it with Command.Release.

// cgroupOptions point cgroup detection at other files; tests use them to
// show a hierarchy the caller cannot write (the rlimit fallback).
var cgroupOptions cgroup.Options

// detectCgroup finds the cgroup WrapCommand and Run may use, changing
// nothing (see cgroup.Detect).
func detectCgroup() (*cgroup.Manager, error) { return cgroup.Detect(cgroupOptions) }

// needsCgroup reports whether l has a limit only a cgroup enforces for the
// whole tree.
func needsCgroup(l spec.Limits) bool { return l.Processes > 0 || l.MemoryBytes > 0 || l.CPUTime > 0 }

// availOf is the plan's view of m (nil: none, err says why).
func availOf(m *cgroup.Manager, err error) spec.Cgroup {
	if m == nil {
		why := "none found"
		if err != nil {
			why = strings.TrimPrefix(err.Error(), cgroup.ErrUnavailable.Error()+": ")
		}
		return spec.Cgroup{Why: why}
	}
	a := spec.Cgroup{
		Version: m.Version.String(),
		Pids:    m.Has(cgroup.Pids),
		Memory:  m.Has(cgroup.Memory),
		CPU:     m.Version == cgroup.V2 || m.Has(cgroup.CPUAcct),
	}
	var where []string
	for _, d := range m.Parents() {
		where = append(where, filepath.Join(d, cgroup.DirName))
	}
	a.Where = strings.Join(where, ", ")
	if m.Version == cgroup.V2 {
		a.Swap = "memory.max, memory.swap.max 0 where swap is accounted, memory.oom.group 1 (the whole tree is killed)"
	} else {
		a.Swap = "memory.limit_in_bytes, and memory.memsw.limit_in_bytes the same where swap is accounted (else swappiness 0)"
	}
	var notes []string
	for c, n := range m.Notes {
		if !m.Has(c) {
			notes = append(notes, c+": "+n)
		}
	}
	slices.Sort(notes)
	a.Why = strings.Join(notes, "; ")
	return a
}

// commandCgroup detects the cgroup for a spawn with limits l: the zero
// spec.Cgroup and a nil Manager when l needs none (only the rlimits apply).
func commandCgroup(l spec.Limits) (spec.Cgroup, *cgroup.Manager) {
	if !needsCgroup(l) {
		return spec.Cgroup{}, nil
	}
	m, err := detectCgroup()
	return availOf(m, err), m
}

// cgroupLimits are the limits of l the cgroup a enforces.
func cgroupLimits(l spec.Limits, a spec.Cgroup) cgroup.Limits {
	var c cgroup.Limits
	if a.Pids {
		c.Pids = l.Processes
	}
	if a.Memory {
		c.MemoryBytes = l.MemoryBytes
	}
	if a.CPU {
		c.CPUTime = l.CPUTime
	}
	return c
}

// treeGroup is a tree's cgroup as WrapCommand and Run use it, and the
// limits of the tree (g is nil when the tree has no cgroup).
type treeGroup struct {
	g        *cgroup.Group
	raceFree bool // Kill stops the whole tree first (v2, or the v1 freezer)
	limits   spec.Limits
}

// newTreeGroup makes the tree's cgroup with the part of l that a enforces,
// in the hierarchies of m that part needs, plus the freezer for the kill.
func newTreeGroup(m *cgroup.Manager, l spec.Limits, a spec.Cgroup) (*treeGroup, error) {
	cl := cgroupLimits(l, a)
	mm := m.For(cl)
	if mm == nil {
		return nil, errors.New("no usable hierarchy")
	}
	g, err := mm.New(cl)
	if err != nil {
		return nil, err
	}
	return &treeGroup{g: g, raceFree: mm.KillsRaceFree(), limits: l}, nil
}

// exceeded names the limit of the tree's cgroup that ended the program,
// if any (see RunResult.LimitExceeded): the out-of-memory killer or the CPU
// watchdog, or a fork refused at the task limit in a program that then
// failed (failed: it did not exit 0).
func (t *treeGroup) exceeded(failed bool) string {
	if t == nil || t.g == nil {
		return ""
	}
	switch t.g.Exceeded() {
	case cgroup.LimitMemory:
		if failed {
			return spec.FeatureLimitMemory
		}
	case cgroup.LimitCPU:
		return spec.FeatureLimitCPUTime
	case cgroup.LimitPids:
		if failed {
			return spec.FeatureLimitProcesses
		}
	}
	return ""
}

// signalLimit names the limit a signal that ended a program stands for,
// when l set it: SIGXCPU for RLIMIT_CPU, SIGXFSZ for RLIMIT_FSIZE.
func signalLimit(ps *os.ProcessState, l spec.Limits) string {
	if ps == nil {
		return ""
	}
	ws, ok := ps.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return ""
	}
	switch {
	case ws.Signal() == syscall.SIGXCPU && l.CPUTime > 0:
		return spec.FeatureLimitCPUTime
	case ws.Signal() == syscall.SIGXFSZ && l.FileSizeBytes > 0:
		return spec.FeatureLimitFileSize
	}
	return ""
}

// close kills what is left in the tree's cgroup and removes it.
func (t *treeGroup) close() error {
	if t == nil || t.g == nil {
		return nil
	}
	return t.g.Close()
}
