//go:build linux

package cgroup

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The tests start real processes in real cgroups of this host's hierarchy
// (as root), each below DirName, and remove them. A process joins its
// group as the sandbox's child half will: the test binary, re-executed as
// a helper (TestMain), writes "0" to every cgroup.procs descriptor it was
// given, then does its work or execs the program under test.

const (
	envHelper = "CGROUP_TEST_HELPER" // the helper's mode
	envNFD    = "CGROUP_TEST_NFD"    // how many cgroup.procs descriptors, from 3
	envArg    = "CGROUP_TEST_ARG"
)

// envGuest is set by .ci/kernels.sh for the throw-away qemu guests of the
// kernel matrix, whose /init mounts cgroup2 at /sys/fs/cgroup and runs the
// test binary in the root cgroup with no controller enabled for children.
const envGuest = "CGROUP_TEST_GUEST"

func TestMain(m *testing.M) {
	if mode := os.Getenv(envHelper); mode != "" {
		helper(mode, os.Getenv(envArg))
		os.Exit(0)
	}
	if os.Getenv(envGuest) == "1" {
		enableGuestControllers()
	}
	os.Exit(m.Run())
}

// enableGuestControllers enables pids, memory and cpu for the children of
// the root cgroup, as a host's init system does at boot, so that the v2
// paths are tested. Only in the kernel matrix's guests (never on a host:
// this library itself never enables a controller in a cgroup it did not
// create), and only when this process is in the root of a cgroup2
// hierarchy with no v1 hierarchy mounted.
func enableGuestControllers() {
	self, _ := os.ReadFile("/proc/self/cgroup")
	if string(self) != "0::/\n" {
		fmt.Fprintf(os.Stderr, "%s set, but this process is not in the root of a cgroup2 hierarchy: %q\n", envGuest, self)
		return
	}
	for _, c := range []string{"+pids", "+memory", "+cpu"} {
		if err := os.WriteFile("/sys/fs/cgroup/cgroup.subtree_control", []byte(c), 0); err != nil {
			fmt.Fprintf(os.Stderr, "guest: enabling %s: %v\n", c, err)
		}
	}
}

func helper(mode, arg string) {
	die := func(err error) {
		fmt.Fprintln(os.Stderr, "helper:", err)
		os.Exit(3)
	}
	n, _ := strconv.Atoi(os.Getenv(envNFD))
	for fd := 3; fd < 3+n; fd++ {
		if _, err := unix.Write(fd, []byte("0")); err != nil {
			die(fmt.Errorf("joining through fd %d: %w", fd, err))
		}
		unix.Close(fd)
	}
	switch mode {
	case "exec": // arg: a shell script
		die(syscall.Exec("/bin/sh", []string{"sh", "-c", arg}, os.Environ()))
	case "anon":
		var keep [][]byte
		for range 64 {
			b := make([]byte, 4<<20)
			for i := 0; i < len(b); i += 4096 {
				b[i] = 1
			}
			keep = append(keep, b)
		}
		fmt.Println("allocated", len(keep)*4, "MiB")
	case "memfd":
		fd, err := unix.MemfdCreate("hog", unix.MFD_CLOEXEC)
		if err != nil {
			die(err)
		}
		writeMiB(fd, 256, die)
		fmt.Println("memfd 256 MiB")
	case "tmpfs": // arg: a directory to mount a tmpfs on, in this process's private mount namespace
		if err := unix.Mount("tmpfs", arg, "tmpfs", 0, "size=512m"); err != nil {
			die(err)
		}
		fd, err := unix.Open(filepath.Join(arg, "hog"), unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
		if err != nil {
			die(err)
		}
		writeMiB(fd, 256, die)
		fmt.Println("tmpfs 256 MiB")
	case "spin":
		for x := 0; ; x++ {
			_ = x * x
		}
	case "owner": // makes a group, starts a process in it, reports, waits to be killed (arg "noreaper": without the reaper)
		reaperOff = arg == "noreaper"
		m, err := Detect(Options{})
		if err != nil {
			die(err)
		}
		g, err := m.New(Limits{Pids: 8})
		if err != nil {
			die(err)
		}
		cmd := helperCmd("exec", "kill -STOP $$", g) // stays, stopped, until killed
		if err := cmd.Start(); err != nil {
			die(err)
		}
		fmt.Println(g.Name(), cmd.Process.Pid)
		time.Sleep(time.Hour)
	case "detect-nobody":
		if err := syscall.Setgroups(nil); err != nil {
			die(err)
		}
		if err := syscall.Setgid(65534); err != nil {
			die(err)
		}
		if err := syscall.Setuid(65534); err != nil {
			die(err)
		}
		printDetect(Options{})
	case "detect-readonly": // in a private mount namespace
		ms, err := os.ReadFile("/proc/self/mountinfo")
		if err != nil {
			die(err)
		}
		mounts, _ := parseMountinfo(bytes.NewReader(ms))
		for _, m := range mounts {
			// Bind each cgroup mount onto itself and make the bind
			// read-only: only this namespace sees it.
			if err := unix.Mount(m.point, m.point, "", unix.MS_BIND, ""); err != nil {
				die(err)
			}
			if err := unix.Mount("", m.point, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
				die(err)
			}
		}
		printDetect(Options{})
	case "delegated": // arg: a delegated cgroup; this process is in its leaf "supervisor"
		becomeNobodyOrDie(die)
		// Found from the leaf by walking up, and named as the Parent.
		for _, o := range []Options{{}, {Parent: arg}} {
			m, err := Detect(o)
			if err != nil {
				die(err)
			}
			if m.Version != V2 || !m.Has(Pids) || !m.Has(Memory) || len(m.Parents()) != 1 || m.Parents()[0] != arg {
				die(fmt.Errorf("detected with %+v: %s %v in %v: %v", o, m.Version, m.Controllers, m.Parents(), m.Notes))
			}
		}
		m, err := Detect(Options{})
		if err != nil {
			die(err)
		}
		g, err := m.New(Limits{Pids: 8, MemoryBytes: 64 << 20})
		if err != nil {
			die(err)
		}
		out, err := os.CreateTemp("", "delegated")
		if err != nil {
			die(err)
		}
		defer os.Remove(out.Name())
		cmd := exec.Command("/bin/sh", "-c", `i=0; while [ $i -lt 100 ]; do i=$((i+1)); sh -c 'kill -STOP $$' & echo started; done`)
		cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: g.DirFD()}
		cmd.Stdout, cmd.Stderr = out, out
		runErr := cmd.Run()
		b, _ := os.ReadFile(out.Name())
		started := strings.Count(string(b), "started")
		exceeded := g.Exceeded()
		if err := g.Close(); err != nil {
			die(err)
		}
		if _, err := os.Stat(filepath.Join(arg, DirName)); !errors.Is(err, os.ErrNotExist) {
			die(fmt.Errorf("%s left behind: %v", DirName, err))
		}
		fmt.Printf("uid %d: %d started (%v), exceeded %q\n", os.Getuid(), started, runErr, exceeded)
	default:
		die(errors.New("unknown mode " + mode))
	}
}

func becomeNobodyOrDie(die func(error)) {
	if err := syscall.Setgroups(nil); err != nil {
		die(err)
	}
	if err := syscall.Setgid(65534); err != nil {
		die(err)
	}
	if err := syscall.Setuid(65534); err != nil {
		die(err)
	}
}

// printDetect prints Detect's result: "usable VERSION CONTROLLERS" or
// "unavailable: ERROR".
func printDetect(o Options) {
	m, err := Detect(o)
	if err != nil {
		fmt.Println("unavailable:", err)
		return
	}
	fmt.Println("usable", m.Version, m.Controllers, m.Notes)
}

func writeMiB(fd, n int, die func(error)) {
	chunk := bytes.Repeat([]byte{1}, 1<<20)
	for range n {
		if _, err := unix.Write(fd, chunk); err != nil {
			die(err)
		}
	}
}

// helperCmd is the test binary as a helper in mode, joining g first.
func helperCmd(mode, arg string, g *Group) *exec.Cmd {
	cmd := exec.Command("/proc/self/exe")
	cmd.Env = append(os.Environ(), envHelper+"="+mode, envArg+"="+arg, envNFD+"="+strconv.Itoa(len(g.ProcsFiles())))
	cmd.ExtraFiles = g.ProcsFiles()
	return cmd
}

// manager detects this host's cgroups, or skips saying why.
func manager(t *testing.T) *Manager {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the cgroup hierarchies of this host are writable only by root (the fallback is TestDetectFallback)")
	}
	m, err := Detect(Options{})
	if err != nil {
		t.Skipf("no cgroup to manage here: %v", err)
	}
	t.Logf("%s, controllers %v, notes %v", m.Version, m.Controllers, m.Notes)
	return m
}

func newGroup(t *testing.T, m *Manager, l Limits) *Group {
	t.Helper()
	if err := m.CanEnforce(l); err != nil {
		t.Skip(err)
	}
	g, err := m.New(l)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := g.Close(); err != nil {
			t.Error(err)
		}
		for _, d := range g.Dirs() {
			if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s left behind (%v)", d, err)
			}
		}
	})
	return g
}

// run starts cmd and waits for it, for at most a minute.
func run(t *testing.T, cmd *exec.Cmd) (*os.ProcessState, string) {
	t.Helper()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("still running after a minute: %s", out.String())
	}
	return cmd.ProcessState, out.String()
}

func TestDetectHost(t *testing.T) {
	m := manager(t)
	if m.Version == V1 {
		for _, c := range v1Controllers {
			if !m.Has(c) {
				t.Logf("v1 controller %s not usable: %s", c, m.Notes[c])
			}
		}
	}
	if !m.KillsRaceFree() {
		t.Logf("no freezer: Kill is not race-free here")
	}
}

// countMarked counts the live processes of the machine whose environment
// holds kv: every process a test's command started, in its cgroup or not.
// (The machine's whole task count would also count what other programs,
// and other packages' tests run in parallel by go test, start meanwhile.)
func countMarked(kv string) int {
	n := 0
	envs, _ := filepath.Glob("/proc/[0-9]*/environ")
	for _, e := range envs {
		b, err := os.ReadFile(e)
		if err == nil && bytes.Contains(append([]byte{0}, b...), []byte("\x00"+kv+"\x00")) {
			n++
		}
	}
	return n
}

// A fork loop stops at the task limit; the machine gains no more processes
// of the loop than the limit, inside the group or out of it.
func TestPidsLimit(t *testing.T) {
	m := manager(t)
	const limit = 16
	g := newGroup(t, m, Limits{Pids: limit})
	// Each started process stops itself and stays (the kernel matrix's
	// guests have no sleep(1)). Output to a file: they would hold a pipe
	// open.
	out := filepath.Join(t.TempDir(), "out")
	mark := "CGROUP_PIDS_TEST=" + strconv.Itoa(os.Getpid())
	cmd := helperCmd("exec", `i=0; while [ $i -lt 500 ]; do i=$((i+1)); sh -c 'kill -STOP $$' & echo started; done`, g)
	cmd.Env = append(cmd.Env, mark)
	f, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = f, f
	err = cmd.Run()
	f.Close()
	left := countMarked(mark)
	b, _ := os.ReadFile(out)
	started := strings.Count(string(b), "started")
	pids, _ := g.Pids()
	t.Logf("sh: %v; %d processes started, %d in the group, %d of the loop alive on the machine", err, started, len(pids), left)
	if started >= limit || !strings.Contains(string(b), "fork") {
		t.Errorf("fork loop under pids.max %d: %d started, output %q", limit, started, b)
	}
	if len(pids) > limit {
		t.Errorf("%d processes in a group limited to %d", len(pids), limit)
	}
	if left > limit {
		t.Errorf("%d processes of the loop alive on the machine under a limit of %d", left, limit)
	}
	if got := g.Exceeded(); got != LimitPids {
		t.Errorf("Exceeded() = %q, want %q", got, LimitPids)
	}
	if err := g.Kill(); err != nil {
		t.Fatal(err)
	}
	if pids, _ := g.Pids(); len(pids) != 0 {
		t.Errorf("after Kill: %v", pids)
	}
}

// A program that allocates past the memory limit is killed, whether the
// memory is anonymous, a memfd's or a tmpfs file's, and the group says so.
func TestMemoryLimit(t *testing.T) {
	m := manager(t)
	for _, mode := range []string{"anon", "memfd", "tmpfs"} {
		t.Run(mode, func(t *testing.T) {
			g := newGroup(t, m, Limits{MemoryBytes: 64 << 20})
			var arg string
			cmd := helperCmd(mode, "", g)
			if mode == "tmpfs" {
				// A tmpfs in a mount namespace of the helper's own: it
				// and its pages go when the helper does.
				arg = t.TempDir()
				cmd = helperCmd(mode, arg, g)
				cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
			}
			ps, out := run(t, cmd)
			ws, _ := ps.Sys().(syscall.WaitStatus)
			if !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
				t.Errorf("256 MiB under a 64 MiB limit: %v: %s", ps, out)
			}
			if got := g.Exceeded(); got != LimitMemory {
				t.Errorf("Exceeded() = %q, want %q", got, LimitMemory)
			}
		})
	}
}

// The watchdog kills a spinner once the group's CPU time reaches the
// limit.
func TestCPUWatchdog(t *testing.T) {
	m := manager(t)
	const limit = 500 * time.Millisecond
	g := newGroup(t, m, Limits{CPUTime: limit})
	ps, out := run(t, helperCmd("spin", "", g))
	used, err := g.CPUUsage()
	if err != nil {
		t.Fatal(err)
	}
	ws, _ := ps.Sys().(syscall.WaitStatus)
	if !ws.Signaled() || ws.Signal() != syscall.SIGKILL || used < limit || used > limit+time.Second {
		t.Errorf("spinner under a %v CPU limit: %v after %v: %s", limit, ps, used, out)
	}
	if got := g.Exceeded(); got != LimitCPU {
		t.Errorf("Exceeded() = %q, want %q", got, LimitCPU)
	}
}

// A chain of processes, each forking its successor and exiting at once,
// keeps no PID for long: a kill by a scan of /proc chases it. Kill freezes
// the group first, so the chain is stopped whole.
func TestKillForkChain(t *testing.T) {
	m := manager(t)
	if !m.KillsRaceFree() {
		t.Skip("no freezer here: Kill is not race-free, as Manager.KillsRaceFree says")
	}
	g := newGroup(t, m, Limits{Pids: 64})
	dir := t.TempDir()
	script := filepath.Join(dir, "chain")
	counter := filepath.Join(dir, "count")
	// One successor per generation: the chain never holds more than a
	// couple of processes, and no PID of it lives longer than a shell's
	// start.
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho >> "+counter+"\n"+script+" &\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := helperCmd("exec", "exec "+script, g)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Wait()
	// Emulated guests of the kernel matrix run a generation in ~0.2 s.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if fi, err := os.Stat(counter); err == nil && fi.Size() > 50 || time.Now().After(deadline) {
			break
		}
	}
	pidsBefore, _ := g.Pids()
	start := time.Now()
	if err := g.Kill(); err != nil {
		t.Fatal(err)
	}
	fi0, _ := os.Stat(counter)
	t.Logf("after %d generations, killed the chain (%d processes listed just before) in %v", fi0.Size(), len(pidsBefore), time.Since(start))
	if fi0.Size() < 10 {
		t.Fatalf("the chain did not run: %d generations", fi0.Size())
	}
	if pids, _ := g.Pids(); len(pids) != 0 {
		t.Fatalf("after Kill: %v", pids)
	}
	fi1, _ := os.Stat(counter)
	time.Sleep(200 * time.Millisecond)
	fi2, _ := os.Stat(counter)
	if fi2.Size() != fi1.Size() {
		t.Errorf("the chain went on after Kill: %d -> %d generations", fi1.Size(), fi2.Size())
	}
}

// Kill during execve: a Go helper joins the group and execs /bin/sh, which
// stops itself; Kill comes at a point somewhere in that exec. On Linux 6.1
// one cgroup.kill lets the exec'ing process go on into sh now and then (5
// of 400 in the kernel matrix's guest), and a Kill that wrote it once
// waited out killWait with the stopped sh still in the group. Each Kill
// must return nil with the group empty, quickly.
func TestKillDuringExec(t *testing.T) {
	m := manager(t)
	const rounds = 200
	var slowest time.Duration
	for i := range rounds {
		g, err := m.New(Limits{Pids: 8})
		if err != nil {
			t.Fatal(err)
		}
		cmd := helperCmd("exec", "kill -STOP $$", g)
		if err := cmd.Start(); err != nil {
			g.Close()
			t.Fatal(err)
		}
		// In the hierarchy Kill lists (on v1 the helper joins one
		// hierarchy after another).
		listed := func() bool {
			pids, _ := g.Pids()
			return slices.Contains(pids, cmd.Process.Pid)
		}
		for deadline := time.Now().Add(5 * time.Second); !listed(); {
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				cmd.Wait()
				g.Close()
				t.Fatalf("round %d: the helper %d never joined %s", i, cmd.Process.Pid, g.Name())
			}
		}
		// 0 to 2 ms after the join: the helper's exec of /bin/sh takes
		// about that long in an emulated guest.
		time.Sleep(time.Duration(i%40) * 50 * time.Microsecond)
		start := time.Now()
		err = g.Kill()
		took := time.Since(start)
		slowest = max(slowest, took)
		pids, _ := g.Pids()
		if err != nil || len(pids) != 0 {
			cmd.Process.Kill()
		}
		cmd.Wait()
		g.Close()
		if err != nil || len(pids) != 0 {
			t.Fatalf("round %d (%d µs after the join): Kill: %v after %v, left %v", i, (i%40)*50, err, took, pids)
		}
	}
	t.Logf("%d kills during an exec, the slowest in %v", rounds, slowest)
}

// A caller SIGKILLed with a group and a (stopped) process in it, and whose
// reaper could not start (TestReaperOfKilledOwner is the case where it
// did), leaves both behind; the next New in this PID namespace kills the process and
// removes the group. (Run puts its tree in a PID namespace where it can,
// so that the tree dies with its caller and only the empty group is left:
// the sandbox package's TestRunKilledCaller. This is the cleanup of both,
// and all of it where namespaces are unavailable or under WrapCommand.)
func TestStaleGroupOfKilledCaller(t *testing.T) {
	m := manager(t)
	owner, name, stoppedPid, pidfd, dirs := startOwner(t, m, "noreaper")
	owner.Process.Signal(syscall.SIGKILL)
	owner.Wait()

	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	// Another test process (go test runs packages in parallel, and the
	// sandbox package's Run makes groups too) may make the next start
	// first: then it cleaned the group, which is what this shows, and the
	// orphan must be dead all the same.
	cleanedElsewhere := func() bool {
		for _, d := range dirs {
			if _, err := os.Stat(d); err == nil {
				return false
			}
		}
		if n, _ := unix.Poll(fds, 2000); n != 1 {
			t.Fatalf("the group is gone but the orphaned process %d lives", stoppedPid)
		}
		t.Log("another process's start cleaned the killed owner's group first")
		return true
	}
	for _, d := range dirs {
		if _, err := os.Stat(d); err != nil {
			if cleanedElsewhere() {
				return
			}
			t.Fatalf("the killed owner's group is not there to clean: %v", err)
		}
	}
	for deadline := time.Now().Add(5 * time.Second); !inGroup(stoppedPid, name); time.Sleep(time.Millisecond) {
		if cleanedElsewhere() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d did not join %s", stoppedPid, name)
		}
	}
	// The next start: New cleans before it makes its own group.
	g, err := m.New(Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Close(); err != nil {
		t.Error(err)
	}
	for _, d := range dirs {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s still there after the next New (%v)", d, err)
		}
	}
	if n, _ := unix.Poll(fds, 2000); n != 1 {
		t.Errorf("the orphaned process %d survived the next New", stoppedPid)
	}
}

// Where no cgroup may be managed, Detect says so, with the reason, and
// changes nothing: as nobody (the hierarchies belong to root), where the
// cgroup file systems are mounted read-only (a container's usual view),
// and where a "cgroup" mount is not a cgroup file system at all.
func TestDetectFallback(t *testing.T) {
	t.Run("nobody", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("needs root to become nobody")
		}
		cmd := exec.Command("/proc/self/exe")
		cmd.Env = append(os.Environ(), envHelper+"=detect-nobody")
		ps, out := run(t, cmd)
		if !ps.Success() || !strings.HasPrefix(out, "unavailable: ") || !strings.Contains(out, "permission denied") {
			t.Errorf("Detect as nobody: %v: %s", ps, out)
		}
	})
	t.Run("read-only", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("needs root to make a mount namespace")
		}
		cmd := exec.Command("/proc/self/exe")
		cmd.Env = append(os.Environ(), envHelper+"=detect-readonly")
		cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
		ps, out := run(t, cmd)
		if !ps.Success() || !strings.HasPrefix(out, "unavailable: ") || !strings.Contains(out, "read-only file system") {
			t.Errorf("Detect with read-only cgroup mounts: %v: %s", ps, out)
		}
	})
	t.Run("not-cgroupfs", func(t *testing.T) {
		dir := t.TempDir()
		mi := filepath.Join(dir, "mountinfo")
		sc := filepath.Join(dir, "cgroup")
		os.WriteFile(mi, []byte("40 31 0:50 / "+dir+" rw - cgroup cgroup rw,pids\n41 31 0:51 / "+dir+" rw - cgroup2 cgroup2 rw\n"), 0o644)
		os.WriteFile(sc, []byte("8:pids:/\n0::/\n"), 0o644)
		_, err := Detect(Options{Mountinfo: mi, SelfCgroup: sc})
		if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "is not a cgroup file system") {
			t.Errorf("Detect on a plain directory: %v", err)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 2 {
			t.Errorf("Detect wrote into %s: %v", dir, ents)
		}
	})
}

// On v2 the child is born in the group (clone3 CLONE_INTO_CGROUP through
// os/exec's UseCgroupFD): it runs no instruction outside it.
func TestCloneIntoCgroup(t *testing.T) {
	m := manager(t)
	if m.Version != V2 {
		t.Skipf("%s has no CLONE_INTO_CGROUP; the child half writes to Group.ProcsFiles instead", m.Version)
	}
	g := newGroup(t, m, Limits{})
	cmd := exec.Command("/bin/sh", "-c", "read l < /proc/self/cgroup; echo $l")
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: g.DirFD()}
	ps, out := run(t, cmd)
	if !ps.Success() || !strings.HasSuffix(strings.TrimSpace(out), "/"+DirName+"/"+g.Name()) {
		t.Errorf("child's cgroup: %v: %q, want .../%s/%s", ps, out, DirName, g.Name())
	}
}

func TestCommonAncestor(t *testing.T) {
	for _, c := range [][3]string{
		{"/sys/fs/cgroup/a/b", "/sys/fs/cgroup/a/c", "/sys/fs/cgroup/a"},
		{"/sys/fs/cgroup/a", "/sys/fs/cgroup/a/c", "/sys/fs/cgroup/a"},
		{"/sys/fs/cgroup/a/b", "/sys/fs/cgroup/a", "/sys/fs/cgroup/a"},
		{"/sys/fs/cgroup/ab", "/sys/fs/cgroup/a", "/sys/fs/cgroup"},
		{"/sys/fs/cgroup", "/sys/fs/cgroup", "/sys/fs/cgroup"},
	} {
		if got := commonAncestor(c[0], c[1]); got != c[2] {
			t.Errorf("commonAncestor(%s, %s) = %s, want %s", c[0], c[1], got, c[2])
		}
	}
}

// A delegated subtree, used as nobody: the way systemd delegates a cgroup
// (Delegate=yes): the cgroup, its cgroup.procs, cgroup.subtree_control and
// cgroup.threads belong to the user, the controllers are enabled for its
// children, and the caller runs in a leaf of it. Detect finds it from the
// leaf by itself (and as Options.Parent). Only in the kernel
// matrix's guests: it makes a cgroup outside DirName, under the root, which
// a test on a host must not.
func TestDelegatedSubtree(t *testing.T) {
	if os.Getenv(envGuest) != "1" {
		t.Skip("only in the kernel matrix's qemu guests (" + envGuest + "=1): it makes a delegated cgroup under the root")
	}
	m := manager(t)
	if m.Version != V2 || !m.Has(Pids) || !m.Has(Memory) {
		t.Skipf("no cgroup v2 with pids and memory here: %s %v", m.Version, m.Controllers)
	}
	deleg := filepath.Join(m.dirs[""], "delegated-test")
	leaf := filepath.Join(deleg, "supervisor")
	if err := os.Mkdir(deleg, 0o755); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(deleg)
	if err := os.WriteFile(filepath.Join(deleg, "cgroup.subtree_control"), []byte("+pids +memory"), 0); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(leaf, 0o755); err != nil {
		t.Fatal(err)
	}
	defer func() {
		// The helper's reaper lives in the leaf until it has seen the
		// helper exit and cleaned up after it: until then the leaf is
		// busy (EBUSY), and a second run (-count) finds it there.
		for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			err := os.Remove(leaf)
			if err == nil {
				return
			}
			if time.Now().After(deadline) {
				t.Errorf("the delegated leaf is still busy: %v", err)
				return
			}
		}
	}()
	for _, p := range []string{deleg, leaf} {
		for _, f := range []string{"", "cgroup.procs", "cgroup.subtree_control", "cgroup.threads"} {
			if err := os.Chown(filepath.Join(p, f), 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}
	}
	leafFD, err := os.Open(leaf)
	if err != nil {
		t.Fatal(err)
	}
	defer leafFD.Close()
	cmd := exec.Command("/proc/self/exe")
	cmd.Env = append(os.Environ(), envHelper+"=delegated", envArg+"="+deleg)
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: int(leafFD.Fd())}
	ps, out := run(t, cmd)
	t.Log(strings.TrimSpace(out))
	var started int
	var exceeded string
	if _, err := fmt.Sscanf(out, "uid 65534: %d started", &started); err != nil || !ps.Success() {
		t.Fatalf("helper: %v: %s", ps, out)
	}
	exceeded = out[strings.LastIndex(out, "exceeded ")+len("exceeded "):]
	if started >= 8 || strings.TrimSpace(exceeded) != `"pids"` {
		t.Errorf("fork loop in a delegated subtree with pids.max 8: %d started, exceeded %s", started, exceeded)
	}
}

// A caller SIGKILLed with a group and a (stopped) process in it: its reaper
// kills the process and removes the group, with no New anywhere, while the
// caller is still an unreaped zombie; then the reaper exits.
func TestReaperOfKilledOwner(t *testing.T) {
	m := manager(t)
	owner, name, stoppedPid, pidfd, dirs := startOwner(t, m, "")
	// The owner's New returns once the reaper's execve has passed its point
	// of no return (the exec pipe closed), but the new argv is laid out
	// after that (create_elf_tables): until then its cmdline is empty.
	// Under qemu's TCG that window is wide enough to be seen.
	var reaper int
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		if reaper = reaperOf(owner.Process.Pid); reaper != 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the owner %d has no reaper", owner.Process.Pid)
		}
	}
	if !alive(running(t, reaper)) {
		t.Fatalf("reaper %d is not running", reaper)
	}
	for deadline := time.Now().Add(5 * time.Second); !inGroup(stoppedPid, name); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("process %d did not join %s", stoppedPid, name)
		}
	}
	owner.Process.Signal(syscall.SIGKILL)
	// Not reaped yet: the owner stays a zombie while the reaper works.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var left []string
		for _, d := range dirs {
			if _, err := os.Stat(d); err == nil {
				left = append(left, d)
			}
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the killed owner's group is still there: %v", left)
		}
	}
	if n, _ := unix.Poll([]unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}, 2000); n != 1 {
		t.Errorf("the group is gone but its process %d lives", stoppedPid)
	}
	st, _ := os.ReadFile("/proc/" + strconv.Itoa(owner.Process.Pid) + "/stat")
	t.Logf("owner while its group was removed: %s", st)
	for deadline := time.Now().Add(5 * time.Second); reaperOf(owner.Process.Pid) != 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("reaper %d still runs after its work", reaper)
		}
	}
	owner.Wait()
}

// startOwner starts the "owner" helper (arg "noreaper": without its
// reaper), which makes a group in m and a stopped process in it, and
// returns the helper, the group's name, the process (and a pidfd of it)
// and the group's directories. The helper is killed at the end if it
// still runs.
func startOwner(t *testing.T, m *Manager, arg string) (owner *exec.Cmd, name string, pid, pidfd int, dirs []string) {
	t.Helper()
	owner = exec.Command("/proc/self/exe")
	owner.Env = append(os.Environ(), envHelper+"=owner", envArg+"="+arg)
	stdout, err := owner.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	owner.Stderr = os.Stderr
	if err := owner.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if owner.ProcessState == nil {
			owner.Process.Kill()
			owner.Wait()
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("owner: %v", err)
	}
	fmt.Sscan(line, &name, &pid)
	if pidfd, err = unix.PidfdOpen(pid, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Close(pidfd) })
	for _, c := range m.hierarchies() {
		dirs = append(dirs, filepath.Join(m.dirs[c], DirName, name))
	}
	return owner, name, pid, pidfd, dirs
}

// running is the identity of the running process pid.
func running(t *testing.T, pid int) owner {
	s, ok := startTime(pid)
	if !ok {
		t.Fatalf("process %d is gone", pid)
	}
	return owner{pid: pid, start: s}
}

// reaperOf finds the reaper of the process pid (0: none), by its command
// line.
func reaperOf(pid int) int {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		args := strings.Split(string(b), "\x00")
		if len(args) > 1 && args[0] == ReaperArg0 && strings.Contains(args[1], "."+strconv.Itoa(pid)+".") {
			return p
		}
	}
	return 0
}
