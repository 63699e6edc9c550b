//go:build linux

package cgroup

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// killWait bounds how long Kill keeps stopping and killing a tree.
const killWait = 5 * time.Second

// watchInterval is how often the CPU-time watchdog reads the tree's usage:
// the tree may overrun CPUTime by about this much per CPU.
const watchInterval = 20 * time.Millisecond

// Group is one tree's cgroup (on v1, one directory per hierarchy).
type Group struct {
	version Version
	name    string
	ctrls   []string // hierarchies, aligned with dirs ("" on v2)
	dirs    []string // the cgroup's directory in each
	limits  Limits

	procs []*os.File // cgroup.procs of each hierarchy, open for writing
	dirfd *os.File   // v2: the directory, for CLONE_INTO_CGROUP

	cpuHit   atomic.Bool
	stop     chan struct{}
	watching sync.WaitGroup
	killing  sync.Mutex // one Kill at a time: the watchdog's and the caller's
	mu       sync.Mutex // Close
	closed   bool
}

// New makes a fresh cgroup for one tree with limits l, after removing the
// stale cgroups of dead owners (see the package doc), and starts this
// process's reaper if it has none yet (reaper_linux.go). It fails, leaving
// nothing behind, when a limit of l cannot be enforced here (see
// [Manager.CanEnforce]). With l.CPUTime set, a watchdog kills the tree
// once its CPU time reaches l.CPUTime. The caller must Close the group.
func (m *Manager) New(l Limits) (*Group, error) {
	if err := m.CanEnforce(l); err != nil {
		return nil, err
	}
	o, err := self()
	if err != nil {
		return nil, err
	}
	m.cleanStale(o.pidns)
	// Before the group exists: a caller killed at any time after this
	// leaves nothing behind (see reaper_linux.go).
	m.startReaper(o)
	g := &Group{version: m.Version, name: newName(o), limits: l, stop: make(chan struct{})}
	for _, c := range m.hierarchies() {
		g.ctrls = append(g.ctrls, c)
		g.dirs = append(g.dirs, filepath.Join(m.dirs[c], DirName, g.name))
	}
	fail := func(err error) (*Group, error) {
		g.closeFiles()
		g.remove()
		return nil, err
	}
	for i, dir := range g.dirs {
		if err := makeGroupDir(dir, m.Version == V2, m.Controllers); err != nil {
			g.dirs = g.dirs[:i] // the rest were never made
			return fail(err)
		}
	}
	if err := g.setLimits(); err != nil {
		return fail(err)
	}
	for _, dir := range g.dirs {
		f, err := os.OpenFile(filepath.Join(dir, "cgroup.procs"), os.O_WRONLY, 0)
		if err != nil {
			return fail(fmt.Errorf("cgroup: %w", err))
		}
		g.procs = append(g.procs, f)
	}
	if m.Version == V2 {
		d, err := os.OpenFile(g.dirs[0], os.O_RDONLY|unix.O_DIRECTORY, 0)
		if err != nil {
			return fail(fmt.Errorf("cgroup: %w", err))
		}
		g.dirfd = d
	}
	if l.CPUTime > 0 {
		g.watching.Go(g.watchCPU)
	}
	return g, nil
}

// hierarchies lists the hierarchies a group is made in.
func (m *Manager) hierarchies() []string {
	if m.Version == V2 {
		return []string{""}
	}
	return m.Controllers
}

// allHierarchies lists every hierarchy found usable, also those a Manager
// from For does not make groups in: where stale groups are looked for.
func (m *Manager) allHierarchies() []string {
	if m.Version == V2 {
		return []string{""}
	}
	var out []string
	for _, c := range v1Controllers {
		if _, ok := m.dirs[c]; ok {
			out = append(out, c)
		}
	}
	return out
}

func newName(o owner) string {
	var r [8]byte
	rand.Read(r[:])
	return groupName(o.pidns, o.pid, o.start, hex.EncodeToString(r[:]))
}

// makeGroupDir makes dir and, when missing, its parent DirName. Another
// process may remove an empty DirName between the two mkdirs (its last
// group gone): then both are made again. On v2 the parent's
// cgroup.subtree_control enables the controllers for the groups below it
// (the parent is this library's own and holds no process).
func makeGroupDir(dir string, v2 bool, ctrls []string) error {
	parent := filepath.Dir(dir)
	for range 5 {
		if err := os.Mkdir(parent, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("cgroup: %w", err)
		}
		if v2 {
			for _, c := range ctrls {
				if err := os.WriteFile(filepath.Join(parent, "cgroup.subtree_control"), []byte("+"+c), 0); err != nil {
					return fmt.Errorf("cgroup: enabling %s in %s: %w", c, parent, err)
				}
			}
		}
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("cgroup: %w", err)
		}
	}
	return fmt.Errorf("cgroup: %s keeps disappearing", parent)
}

// setLimits writes the limits into the new cgroup.
func (g *Group) setLimits() error {
	l := g.limits
	w := func(dir, file, v string) error {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(v), 0); err != nil {
			return fmt.Errorf("cgroup: setting %s to %s: %w", file, v, err)
		}
		return nil
	}
	exists := func(dir, file string) bool {
		_, err := os.Stat(filepath.Join(dir, file))
		return err == nil
	}
	if g.version == V2 {
		dir := g.dirs[0]
		if l.Pids > 0 {
			if err := w(dir, "pids.max", strconv.FormatInt(l.Pids, 10)); err != nil {
				return err
			}
		}
		if l.MemoryBytes > 0 {
			if err := w(dir, "memory.max", strconv.FormatInt(l.MemoryBytes, 10)); err != nil {
				return err
			}
			// Without swap accounting there is no memory.swap.max, and no
			// swap can be charged to the group either way.
			if exists(dir, "memory.swap.max") {
				if err := w(dir, "memory.swap.max", "0"); err != nil {
					return err
				}
			}
			// The out-of-memory killer ends the whole tree, not one
			// process of it that the rest may outlive or restart.
			if exists(dir, "memory.oom.group") {
				if err := w(dir, "memory.oom.group", "1"); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for i, c := range g.ctrls {
		dir := g.dirs[i]
		switch {
		case c == Pids && l.Pids > 0:
			if err := w(dir, "pids.max", strconv.FormatInt(l.Pids, 10)); err != nil {
				return err
			}
		case c == Memory && l.MemoryBytes > 0:
			v := strconv.FormatInt(l.MemoryBytes, 10)
			// memsw (memory + swap) may not be below the memory limit:
			// memory first.
			if err := w(dir, "memory.limit_in_bytes", v); err != nil {
				return err
			}
			if exists(dir, "memory.memsw.limit_in_bytes") {
				if err := w(dir, "memory.memsw.limit_in_bytes", v); err != nil {
					return err
				}
			} else if err := w(dir, "memory.swappiness", "0"); err != nil {
				return err
			}
		}
	}
	return nil
}

// Name is the cgroup's name (the same in every hierarchy).
func (g *Group) Name() string { return g.name }

// Version is the hierarchy version of the group.
func (g *Group) Version() Version { return g.version }

// Dirs are the group's directories, one per hierarchy.
func (g *Group) Dirs() []string { return append([]string(nil), g.dirs...) }

// ProcsFiles are open for writing on the cgroup.procs file of each of the
// group's hierarchies: a process that writes "0" to each joins the group.
// They are close-on-exec unless the caller passes them on (as
// exec.Cmd.ExtraFiles does). The child half that writes them must close
// them before it executes the program: a process holding one can move
// other processes into the group (any process of its user; as root, any
// process), to be limited and killed with the tree. Close closes them.
func (g *Group) ProcsFiles() []*os.File { return append([]*os.File(nil), g.procs...) }

// DirFD is a descriptor of the group's directory for CLONE_INTO_CGROUP
// (exec.Cmd's SysProcAttr.UseCgroupFD and CgroupFD) on v2, or -1 on v1,
// which has no such thing.
func (g *Group) DirFD() int {
	if g.dirfd == nil {
		return -1
	}
	return int(g.dirfd.Fd())
}

// Add moves the process pid into the group, in every hierarchy.
func (g *Group) Add(pid int) error {
	for _, f := range g.procs {
		if _, err := f.WriteString(strconv.Itoa(pid)); err != nil {
			return fmt.Errorf("cgroup: moving %d into %s: %w", pid, g.name, err)
		}
	}
	return nil
}

// killDir is the directory whose cgroup.procs lists the tree for Kill: the
// freezer's on v1 when there is one.
func (g *Group) killDir() (dir string, freezer bool) {
	for i, c := range g.ctrls {
		if c == Freezer {
			return g.dirs[i], true
		}
	}
	return g.dirs[0], g.version == V2
}

// Pids lists the processes in the group.
func (g *Group) Pids() ([]int, error) {
	dir, _ := g.killDir()
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil, fmt.Errorf("cgroup: %w", err)
	}
	return parsePids(b)
}

// CPUUsage is the CPU time the tree has used (cpuacct.usage on v1,
// cpu.stat usage_usec on v2).
func (g *Group) CPUUsage() (time.Duration, error) {
	for i, c := range g.ctrls {
		switch {
		case g.version == V2:
			b, err := os.ReadFile(filepath.Join(g.dirs[i], "cpu.stat"))
			if err != nil {
				return 0, fmt.Errorf("cgroup: %w", err)
			}
			us, ok := parseKeyed(b, "usage_usec")
			if !ok {
				return 0, errors.New("cgroup: cpu.stat has no usage_usec")
			}
			return time.Duration(us) * time.Microsecond, nil
		case c == CPUAcct:
			b, err := os.ReadFile(filepath.Join(g.dirs[i], "cpuacct.usage"))
			if err != nil {
				return 0, fmt.Errorf("cgroup: %w", err)
			}
			ns, err := strconv.ParseInt(string(bytes.TrimSpace(b)), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("cgroup: cpuacct.usage: %w", err)
			}
			return time.Duration(ns), nil
		}
	}
	return 0, errors.New("cgroup: no CPU accounting in this group")
}

// watchCPU kills the tree once its CPU time reaches the limit.
func (g *Group) watchCPU() {
	t := time.NewTicker(watchInterval)
	defer t.Stop()
	for {
		select {
		case <-g.stop:
			return
		case <-t.C:
		}
		if used, err := g.CPUUsage(); err == nil && used >= g.limits.CPUTime {
			g.cpuHit.Store(true)
			g.Kill()
			return
		}
	}
}

// Exceeded names the limit that was hit, if any: LimitMemory when the
// out-of-memory killer killed a process of the tree, LimitCPU when the
// watchdog killed it, LimitPids when a fork or clone was refused at the
// task limit (the program may have handled that and gone on), "" when none.
// Where several were hit, the first in that order.
func (g *Group) Exceeded() string {
	if g.limits.MemoryBytes > 0 {
		for i, c := range g.ctrls {
			file, key := "memory.events", "oom_kill"
			if g.version == V1 {
				if c != Memory {
					continue
				}
				file = "memory.oom_control"
			}
			if b, err := os.ReadFile(filepath.Join(g.dirs[i], file)); err == nil {
				if n, _ := parseKeyed(b, key); n > 0 {
					return LimitMemory
				}
			}
		}
	}
	if g.cpuHit.Load() {
		return LimitCPU
	}
	if g.limits.Pids > 0 {
		for i, c := range g.ctrls {
			if g.version == V1 && c != Pids {
				continue
			}
			if b, err := os.ReadFile(filepath.Join(g.dirs[i], "pids.events")); err == nil {
				if n, _ := parseKeyed(b, "max"); n > 0 {
					return LimitPids
				}
			}
		}
	}
	return ""
}
