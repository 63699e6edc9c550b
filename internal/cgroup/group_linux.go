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
	mu       sync.Mutex
	closed   bool
}

// New makes a fresh cgroup for one tree with limits l, after removing the
// stale cgroups of dead owners (see the package doc). It fails, leaving
// nothing behind, when a limit of l cannot be enforced here (see
// [Manager.CanEnforce]). With l.CPUTime set, a watchdog kills the tree
// once its CPU time reaches l.CPUTime. The caller must Close the group.
func (m *Manager) New(l Limits) (*Group, error) {
	if err := m.CanEnforce(l); err != nil {
		return nil, err
	}
	m.CleanStale()
	name, err := newName()
	if err != nil {
		return nil, err
	}
	g := &Group{version: m.Version, name: name, limits: l, stop: make(chan struct{})}
	for _, c := range m.hierarchies() {
		g.ctrls = append(g.ctrls, c)
		g.dirs = append(g.dirs, filepath.Join(m.dirs[c], DirName, name))
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

func newName() (string, error) {
	var st unix.Stat_t
	if err := unix.Stat("/proc/self/ns/pid", &st); err != nil {
		return "", fmt.Errorf("cgroup: %w", err)
	}
	start, ok := startTime(os.Getpid())
	if !ok {
		return "", errors.New("cgroup: cannot read this process's start time")
	}
	var r [8]byte
	rand.Read(r[:])
	return groupName(st.Ino, os.Getpid(), start, hex.EncodeToString(r[:])), nil
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
// They are not close-on-exec only if the caller passes them on (as
// exec.Cmd.ExtraFiles does). Close closes them.
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

// Kill kills every process in the group and returns once none is left, or
// after killWait with an error. On v2 it writes cgroup.kill (Linux 5.14+),
// which the kernel applies to every task atomically. On v1 with the
// freezer: freeze the group (no task runs, so none can fork or exit),
// SIGKILL every task listed, thaw so they die, and repeat until the group
// is empty. A process cannot leave the group on its own unless it may
// write some cgroup.procs (the sandbox grants no path under /sys/fs/cgroup).
// Without a freezer (v1 only), Kill signals what it lists until the group
// is empty, which a tree forking faster than the listing can outrun for a
// while; [Manager.KillsRaceFree] says which applies.
func (g *Group) Kill() error {
	dir, canFreeze := g.killDir()
	deadline := time.Now().Add(killWait)
	// An empty group stays empty: nothing in it can fork. (Freezing even
	// an empty v1 group takes milliseconds.)
	if pids, err := g.Pids(); err == nil && len(pids) == 0 {
		return nil
	}
	if g.version == V2 {
		if err := os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0); err == nil {
			return g.waitEmpty(dir, deadline)
		}
	}
	for {
		if canFreeze {
			g.freeze(dir, true)
		}
		pids, err := g.Pids()
		if err != nil {
			if canFreeze {
				g.freeze(dir, false)
			}
			return err
		}
		for _, pid := range pids {
			g.signal(pid)
		}
		if canFreeze {
			g.freeze(dir, false)
		}
		if len(pids) == 0 {
			return nil
		}
		if err := g.waitEmpty(dir, time.Now().Add(50*time.Millisecond)); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cgroup: %s: processes left after %v", g.name, killWait)
		}
	}
}

// freeze freezes (or thaws) the group and, when freezing, waits briefly for
// every task to be frozen. A task in uninterruptible sleep may keep the
// group FREEZING; it cannot run user code meanwhile, so the kill goes on.
func (g *Group) freeze(dir string, on bool) {
	file, val := "freezer.state", map[bool]string{true: "FROZEN", false: "THAWED"}[on]
	if g.version == V2 {
		file, val = "cgroup.freeze", map[bool]string{true: "1", false: "0"}[on]
	}
	if os.WriteFile(filepath.Join(dir, file), []byte(val), 0) != nil || !on {
		return
	}
	for deadline := time.Now().Add(100 * time.Millisecond); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if g.version == V2 {
			b, _ := os.ReadFile(filepath.Join(dir, "cgroup.events"))
			if n, ok := parseKeyed(b, "frozen"); ok && n == 1 {
				return
			}
			continue
		}
		if b, _ := os.ReadFile(filepath.Join(dir, file)); string(bytes.TrimSpace(b)) == "FROZEN" {
			return
		}
	}
}

// signal SIGKILLs pid if it is still in the group: the PID is pinned with a
// pidfd first, and its membership read after, so a PID reused by a process
// outside the group is never signalled.
func (g *Group) signal(pid int) {
	pidfd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return // gone
	}
	defer unix.Close(pidfd)
	if inGroup(pid, g.name) {
		unix.PidfdSendSignal(pidfd, unix.SIGKILL, nil, 0)
	}
}

// inGroup reports whether /proc/pid/cgroup names the group in some
// hierarchy.
func inGroup(pid int, name string) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cgroup")
	if err != nil {
		return false
	}
	suffix := []byte("/" + DirName + "/" + name)
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		if bytes.HasSuffix(line, suffix) {
			return true
		}
	}
	return false
}

// waitEmpty waits until the group lists no process.
func (g *Group) waitEmpty(dir string, deadline time.Time) error {
	for delay := 100 * time.Microsecond; ; delay = min(2*delay, 5*time.Millisecond) {
		b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
		if err != nil {
			return fmt.Errorf("cgroup: %w", err)
		}
		if len(bytes.TrimSpace(b)) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cgroup: %s: processes left", g.name)
		}
		time.Sleep(delay)
	}
}

// Close stops the watchdog, kills what is left of the tree, closes the
// descriptors and removes the group's directories, and DirName where that
// leaves it empty. It is safe to call more than once.
func (g *Group) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil
	}
	g.closed = true
	close(g.stop)
	g.watching.Wait()
	kerr := g.Kill()
	g.closeFiles()
	return errors.Join(kerr, g.remove())
}

func (g *Group) closeFiles() {
	for _, f := range g.procs {
		f.Close()
	}
	g.procs = nil
	if g.dirfd != nil {
		g.dirfd.Close()
		g.dirfd = nil
	}
}

// remove removes the group's directories (each must be empty of
// processes; a task that has just been killed may still be listed for a
// moment) and then DirName where empty.
func (g *Group) remove() error {
	var errs []error
	for _, dir := range g.dirs {
		errs = append(errs, rmdirWait(dir))
		// Fails while other groups are in it: they remove it later.
		unix.Rmdir(filepath.Dir(dir))
	}
	return errors.Join(errs...)
}

func rmdirWait(dir string) error {
	deadline := time.Now().Add(2 * time.Second)
	for {
		err := unix.Rmdir(dir)
		if err == nil || err == unix.ENOENT {
			return nil
		}
		if err != unix.EBUSY || time.Now().After(deadline) {
			return fmt.Errorf("cgroup: rmdir %s: %w", dir, err)
		}
		time.Sleep(time.Millisecond)
	}
}

// CleanStale kills the processes left in, and removes, every tree's cgroup
// whose creator is dead: a cgroup named (see the package doc) for this PID
// namespace whose PID is gone or now names a process started at another
// time. Cgroups of other PID namespaces, of live owners, and directories
// not named by this package are left alone. It returns how many it
// removed.
func (m *Manager) CleanStale() (int, error) {
	var st unix.Stat_t
	if err := unix.Stat("/proc/self/ns/pid", &st); err != nil {
		return 0, fmt.Errorf("cgroup: %w", err)
	}
	stale := map[string]bool{}
	for _, c := range m.hierarchies() {
		ents, err := os.ReadDir(filepath.Join(m.dirs[c], DirName))
		if err != nil {
			continue
		}
		for _, e := range ents {
			ns, pid, start, ok := parseGroupName(e.Name())
			if !ok || !e.IsDir() || ns != st.Ino {
				continue
			}
			if s, alive := startTime(pid); alive && s == start {
				continue
			}
			stale[e.Name()] = true
		}
	}
	removed := 0
	var errs []error
	for name := range stale {
		g := &Group{version: m.Version, name: name}
		for _, c := range m.hierarchies() {
			dir := filepath.Join(m.dirs[c], DirName, name)
			if _, err := os.Stat(dir); err == nil {
				g.ctrls = append(g.ctrls, c)
				g.dirs = append(g.dirs, dir)
			}
		}
		if len(g.dirs) == 0 {
			continue
		}
		err := errors.Join(g.Kill(), g.remove())
		if err == nil {
			removed++
		}
		errs = append(errs, err)
	}
	return removed, errors.Join(errs...)
}

// startTime returns the start time of process pid (field 22 of
// /proc/pid/stat, clock ticks after boot).
func startTime(pid int) (uint64, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 {
		return 0, false
	}
	s, err := strconv.ParseUint(string(f[19]), 10, 64)
	return s, err == nil
}
