//go:build linux

package cgroup

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// The end of a tree: the kill, the removal, and the removal of what a
// killed caller left behind.

// Kill kills every process in the group and returns once none is left, or
// after killWait with an error. On v2 it writes cgroup.kill (Linux 5.14+),
// which signals every task, forks in progress included, and writes it
// again every 50 ms while a task is left (one write can miss a process in
// the middle of execve: see below). On v1 with the
// freezer: freeze the group (no task runs, so none can fork or exit),
// SIGKILL every task listed, thaw so they die, and repeat until the group
// is empty. A process cannot leave the group on its own unless it may
// write some cgroup.procs (the sandbox grants no path under /sys/fs/cgroup).
// Without a freezer (v1 only), Kill signals what it lists until the group
// is empty, which a tree forking faster than the listing can outrun for a
// while; [Manager.KillsRaceFree] says which applies.
func (g *Group) Kill() error {
	g.killing.Lock()
	defer g.killing.Unlock()
	dir, canFreeze := g.killDir()
	deadline := time.Now().Add(killWait)
	// An empty group stays empty: nothing in it can fork. (Freezing even
	// an empty v1 group takes milliseconds.)
	if pids, err := g.Pids(); err == nil && len(pids) == 0 {
		return nil
	}
	if g.version == V2 {
		// cgroup.kill again while anything is left. One write is not
		// always enough: on Linux 6.1 a process in the middle of execve
		// can survive it (the new program runs on, with no SIGKILL
		// pending), 5 of 400 kills of a Go helper exec'ing /bin/sh in the
		// kernel matrix's 6.1 guest, none of 400 under 6.12;
		// TestKillDuringExec. A likely cause: cgroup.kill skips a task
		// that already has a fatal signal pending, as the thread execve
		// is ending does. A second write finds the new program and kills
		// it; a write to a dying group's tasks changes nothing.
		kill := filepath.Join(dir, "cgroup.kill")
		if err := os.WriteFile(kill, []byte("1"), 0); err == nil {
			for {
				soon := time.Now().Add(50 * time.Millisecond)
				if soon.After(deadline) {
					soon = deadline
				}
				err := g.waitEmpty(dir, soon)
				if err == nil || time.Now().After(deadline) {
					return err
				}
				if err := os.WriteFile(kill, []byte("1"), 0); err != nil {
					return fmt.Errorf("cgroup: %w", err)
				}
			}
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

// cleanStale kills the processes left in, and removes, every tree's cgroup
// whose creator is dead: a cgroup named (see the package doc) for the PID
// namespace pidns (this process's) whose PID is gone or now names a
// process started at another time. Cgroups of other PID namespaces, of
// live owners, and directories not named by this package are left alone.
// It returns how many it removed.
func (m *Manager) cleanStale(pidns uint64) (int, error) {
	return m.clean(func(ns uint64, pid int, start uint64) bool {
		if ns != pidns {
			return false
		}
		s, alive := startTime(pid)
		return !alive || s != start
	})
}

// clean kills the processes left in, and removes, every tree's cgroup in
// m's hierarchies whose name's owner (PID namespace, PID, start time)
// dead reports dead. It returns how many it removed.
func (m *Manager) clean(dead func(pidns uint64, pid int, start uint64) bool) (int, error) {
	stale := map[string]bool{}
	all := m.allHierarchies()
	for _, c := range all {
		ents, err := os.ReadDir(filepath.Join(m.dirs[c], DirName))
		if err != nil {
			continue
		}
		for _, e := range ents {
			ns, pid, start, ok := parseGroupName(e.Name())
			if ok && e.IsDir() && dead(ns, pid, start) {
				stale[e.Name()] = true
			}
		}
	}
	removed := 0
	var errs []error
	for name := range stale {
		g := &Group{version: m.Version, name: name}
		for _, c := range all {
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
	_, start, ok := procStat(pid)
	return start, ok
}

// procStat returns the state (field 3 of /proc/pid/stat: R, S, Z, ...) and
// the start time (field 22) of process pid.
func procStat(pid int) (state string, start uint64, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return "", 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return "", 0, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 {
		return "", 0, false
	}
	s, err := strconv.ParseUint(string(f[19]), 10, 64)
	return string(f[0]), s, err == nil
}
