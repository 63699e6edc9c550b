//go:build linux

package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/openparallax/sandbox"
	"github.com/openparallax/sandbox/internal/cgroup"
)

// Limits under Run (and so WrapCommand's child half), enforced for real:
// the tree's cgroup where this host has one the test may manage (as root:
// cgroup v1 controllers on the CI host, cgroup v2 in the kernel matrix's
// guests), and the child half's rlimits where detection finds none.

func init() {
	childHelpers["limit-anon"] = func(args []string) int { // MiB
		n, _ := strconv.Atoi(args[0])
		fmt.Println("start")
		os.Stdout.Sync()
		var keep [][]byte
		for range n / 4 {
			b := make([]byte, 4<<20)
			for i := 0; i < len(b); i += 4096 {
				b[i] = 1
			}
			keep = append(keep, b)
		}
		fmt.Println("allocated", len(keep)*4, "MiB")
		return 0
	}
	childHelpers["limit-memfd"] = func(args []string) int { // MiB
		n, _ := strconv.Atoi(args[0])
		fmt.Println("start")
		os.Stdout.Sync()
		// MFD_NOEXEC_SEAL: what the filter asks for where exec is
		// allowed (kernels before 6.3 do not know it, and allow the rest).
		fd, err := unix.MemfdCreate("hog", unix.MFD_CLOEXEC|unix.MFD_NOEXEC_SEAL)
		if err == unix.EINVAL {
			fd, err = unix.MemfdCreate("hog", unix.MFD_CLOEXEC)
		}
		if err != nil {
			fmt.Println("memfd_create:", err)
			return 3
		}
		chunk := make([]byte, 1<<20)
		for i := range chunk {
			chunk[i] = 1
		}
		for range n {
			if _, err := unix.Write(fd, chunk); err != nil {
				fmt.Println("write:", err)
				return 3
			}
		}
		fmt.Println("memfd", n, "MiB")
		return 0
	}
	// A chain whose every member moves to a process group of its own
	// and then forks its successor and exits at once: the session scan's
	// documented hole (a group SIGSTOP reaches none of them, and each PID
	// lives for about one fork). Raw fork, no exec: a generation takes
	// well under a millisecond. Each member appends a byte to the counter
	// file. The leader starts it and waits to be killed.
	childHelpers["limit-pgrp-chain"] = func(args []string) int { // counter file
		fd, err := unix.Open(args[0], unix.O_WRONLY|unix.O_APPEND|unix.O_CREAT, 0o600)
		if err != nil {
			fmt.Println(err)
			return 3
		}
		for range 8 { // chains at once
			rawPgrpChain(uintptr(fd))
		}
		time.Sleep(time.Minute)
		return 0
	}
	// Opens /dev/null until it fails; prints the highest descriptor and
	// the errno.
	childHelpers["limit-open"] = func([]string) int {
		high := -1
		for {
			fd, err := unix.Open("/dev/null", unix.O_RDONLY, 0)
			if err != nil {
				fmt.Println(high, int(err.(unix.Errno)))
				return 0
			}
			high = fd
		}
	}
}

// requireCgroup returns the cgroup Run will use here, or skips saying why.
func requireCgroup(t *testing.T, raceFree bool) *cgroup.Manager {
	t.Helper()
	requireSandbox(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root: this host's cgroup hierarchies are writable only by root (the rlimit fallback is TestRunLimitsWithoutCgroup)")
	}
	m, err := cgroup.Detect(cgroup.Options{})
	if err != nil {
		t.Skipf("no cgroup to manage here: %v", err)
	}
	if raceFree && !m.KillsRaceFree() {
		t.Skipf("%s without a freezer: the tree kill is not race-free here", m.Version)
	}
	t.Logf("%s, controllers %v", m.Version, m.Controllers)
	return m
}

// ownGroups lists the tree cgroups made by this process that exist, in
// every hierarchy under /sys/fs/cgroup.
func ownGroups(t *testing.T) []string {
	t.Helper()
	var out []string
	mine := "." + strconv.Itoa(os.Getpid()) + "."
	filepath.WalkDir("/sys/fs/cgroup", func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if strings.Count(p, "/") > 8 {
			return fs.SkipDir
		}
		if filepath.Base(filepath.Dir(p)) == cgroup.DirName && strings.Contains(d.Name(), mine) {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// noGroupLeft fails the test if a tree's cgroup of this process remains.
func noGroupLeft(t *testing.T) {
	t.Helper()
	if left := ownGroups(t); len(left) > 0 {
		t.Errorf("cgroups left behind: %v", left)
	}
}

func runLimited(t *testing.T, cfg sandbox.Config, name string, args []string, env ...string) (sandbox.RunResult, error) {
	t.Helper()
	start := time.Now()
	res, err := sandbox.Run(context.Background(), cfg, name, args,
		sandbox.RunOptions{Env: append([]string{"PATH=/usr/bin:/bin", quickExit}, env...), Timeout: time.Minute})
	t.Logf("%s %v: %v, state %q, exit %d, limit %q, in %v; stdout %.300q stderr %.300q",
		filepath.Base(name), args, err, res.State, res.ExitCode, res.LimitExceeded, time.Since(start), res.Stdout, res.Stderr)
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatal("not stopped by its limit within a minute")
	}
	return res, err
}

// 200 forks under Processes 32: the fork loop stops at the limit, the
// result says so, the machine's task count never grew by much more, and
// the cgroup is gone afterwards.
func TestRunLimitProcesses(t *testing.T) {
	requireCgroup(t, false)
	sh := need(t, "/bin/sh", "dash")
	const limit = 32
	mark := "SANDBOX_NPROC_TEST=" + strconv.Itoa(os.Getpid())
	cfg := sandbox.Config{AllowProcessSpawn: true, AllowedExecPaths: []string{sh}, Limits: sandbox.Limits{Processes: limit}}
	// Each child blocks reading a pipe no one writes (fd 3, a dup of the
	// loop's stdin, which Run makes a pipe): no program beyond the shell.
	script := `exec 3<&0; i=0; while [ $i -lt 200 ]; do (read x <&3) & i=$((i+1)); echo $i; done; echo done`
	before := countTasks()
	peak := make(chan int, 1)
	stop := make(chan struct{})
	go func() {
		m := 0
		for {
			select {
			case <-stop:
				peak <- m
				return
			case <-time.After(5 * time.Millisecond):
				m = max(m, countTasks())
			}
		}
	}()
	res, err := sandbox.Run(context.Background(), cfg, sh, []string{"-c", script},
		sandbox.RunOptions{Env: []string{"PATH=/usr/bin:/bin", mark}, Stdin: blockingReader{}, Timeout: time.Minute})
	close(stop)
	grew := <-peak - before
	out := strings.Fields(string(res.Stdout))
	t.Logf("%v, state %q, limit %q, %d forks, machine tasks +%d at most; stderr %.200q", err, res.State, res.LimitExceeded, len(out), grew, res.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode == 0 || strings.Contains(string(res.Stdout), "done") || len(out) >= limit {
		t.Errorf("200 forks under Processes %d: %d started, exit %d", limit, len(out), res.ExitCode)
	}
	if res.LimitExceeded != sandbox.FeatureLimitProcesses {
		t.Errorf("LimitExceeded = %q, want %q", res.LimitExceeded, sandbox.FeatureLimitProcesses)
	}
	if grew > limit+32 {
		t.Errorf("the machine gained %d tasks under Processes %d", grew, limit)
	}
	if left := marked(mark); len(left) > 0 {
		for _, pid := range left {
			killStray(pid)
		}
		t.Errorf("processes of the run outlived it: %v", left)
	}
	noGroupLeft(t)
}

// blockingReader never returns: Run copies it into the program's stdin
// pipe, which thus stays open and empty.
type blockingReader struct{}

func (blockingReader) Read([]byte) (int, error) { select {} }

func countTasks() int {
	n := 0
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		tasks, _ := os.ReadDir("/proc/" + e.Name() + "/task")
		n += len(tasks)
	}
	return n
}

// A program that allocates past MemoryBytes is killed by the
// out-of-memory killer and the result says so: anonymous memory and a
// memfd's pages alike (RLIMIT_DATA would miss the memfd).
func TestRunLimitMemory(t *testing.T) {
	requireCgroup(t, false)
	for _, mode := range []string{"limit-anon", "limit-memfd"} {
		t.Run(mode, func(t *testing.T) {
			cfg := sandbox.Config{Limits: sandbox.Limits{MemoryBytes: 128 << 20}}
			res, err := runLimited(t, cfg, self(t), []string{helperArg, mode, "512"})
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(res.Stdout), "start") || strings.Contains(string(res.Stdout), "MiB") || res.State != "signal: killed" {
				t.Errorf("512 MiB under MemoryBytes 128 MiB: state %q", res.State)
			}
			if res.LimitExceeded != sandbox.FeatureLimitMemory {
				t.Errorf("LimitExceeded = %q, want %q", res.LimitExceeded, sandbox.FeatureLimitMemory)
			}
			noGroupLeft(t)
		})
	}
	// Under the limit: it completes, and nothing is reported.
	res, err := runLimited(t, sandbox.Config{Limits: sandbox.Limits{MemoryBytes: 256 << 20}}, self(t), []string{helperArg, "limit-memfd", "32"})
	if err != nil || res.ExitCode != 0 || res.LimitExceeded != "" {
		t.Errorf("32 MiB memfd under 256 MiB: %v, exit %d, limit %q", err, res.ExitCode, res.LimitExceeded)
	}
	noGroupLeft(t)
}

// A CPU spinner with a spinning child stops when the tree's CPU time
// reaches CPUTime: the watchdog kills the tree.
func TestRunLimitCPUTime(t *testing.T) {
	requireCgroup(t, false)
	sh := need(t, "/bin/sh", "dash")
	const limit = 500 * time.Millisecond
	cfg := sandbox.Config{AllowProcessSpawn: true, AllowedExecPaths: []string{sh}, Limits: sandbox.Limits{CPUTime: limit}}
	start := time.Now()
	res, err := runLimited(t, cfg, sh, []string{"-c", "while :; do :; done & while :; do :; done"})
	if err != nil {
		t.Fatal(err)
	}
	if res.State != "signal: killed" || res.LimitExceeded != sandbox.FeatureLimitCPUTime {
		t.Errorf("two spinners under CPUTime %v: state %q, LimitExceeded %q", limit, res.State, res.LimitExceeded)
	}
	// Two spinners on two CPUs reach 500 ms of CPU in about 250 ms;
	// on one, or a loaded machine, later: only a bound against never.
	if d := time.Since(start); d > 20*time.Second {
		t.Errorf("stopped after %v", d)
	}
	noGroupLeft(t)
}

// fallocate(1) of 2 GiB under FileSizeBytes 1 MiB: SIGXFSZ, reported.
func TestRunLimitFileSize(t *testing.T) {
	requireSandbox(t)
	fa := need(t, "/usr/bin/fallocate", "util-linux")
	dir := t.TempDir()
	cfg := sandbox.Config{AllowedWritePaths: []string{dir}, Limits: sandbox.Limits{FileSizeBytes: 1 << 20}}
	target := filepath.Join(dir, "big")
	res, err := runLimited(t, cfg, fa, []string{"-l", "2G", target})
	if err != nil {
		t.Fatal(err)
	}
	if res.State != "signal: file size limit exceeded" || res.LimitExceeded != sandbox.FeatureLimitFileSize {
		t.Errorf("fallocate 2G under FileSizeBytes 1 MiB: state %q, LimitExceeded %q", res.State, res.LimitExceeded)
	}
	if fi, err := os.Stat(target); err == nil && fi.Size() > 1<<20 {
		t.Errorf("%s has %d bytes", target, fi.Size())
	}
	// A shell that writes one byte more than allowed: EFBIG for the write
	// (dash ignores nothing: SIGXFSZ ends it too).
	sh := need(t, "/bin/sh", "dash")
	cfg.AllowedExecPaths = []string{sh}
	res, _ = runLimited(t, cfg, sh, []string{"-c", "exec 9<&-; ulimit -f; : > " + target})
	if res.ExitCode != 0 || strings.TrimSpace(string(res.Stdout)) != "2048" {
		t.Errorf("the shell sees ulimit -f %q (512-byte blocks), exit %d", res.Stdout, res.ExitCode)
	}
}

// OpenFiles caps the descriptors of each process of the tree: the highest
// it can open is OpenFiles-1, then EMFILE.
func TestRunLimitOpenFiles(t *testing.T) {
	requireSandbox(t)
	res, err := runLimited(t, sandbox.Config{Limits: sandbox.Limits{OpenFiles: 16}}, self(t), []string{helperArg, "limit-open"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(string(res.Stdout)), "15 "+strconv.Itoa(int(unix.EMFILE)); got != want {
		t.Errorf("OpenFiles 16: highest descriptor and errno %q, want %q", got, want)
	}
}

// The session scan's hole, closed by the cgroup: a chain whose every
// member is born in a process group of its own and exits once its
// successor exists. Run ends it through the tree's cgroup (frozen, then
// killed): nothing of it runs after Run returns.
func TestRunKillsPgrpChain(t *testing.T) {
	requireCgroup(t, true)
	for i := range 3 {
		counter := filepath.Join(t.TempDir(), "count")
		mark := "SANDBOX_PGRP_CHAIN_TEST=" + strconv.Itoa(os.Getpid()) + "-" + strconv.Itoa(i)
		cfg := sandbox.Config{AllowProcessSpawn: true, AllowedWritePaths: []string{filepath.Dir(counter)}}
		start := time.Now()
		res, err := sandbox.Run(context.Background(), cfg, self(t), []string{helperArg, "limit-pgrp-chain", counter},
			sandbox.RunOptions{Env: []string{quickExit, mark}, Timeout: time.Second})
		// The kill: the session scan chases these chains for seconds
		// (7 s per run seen on the CI host, where it caught them in the
		// end); the cgroup stops them whole at once.
		kill := time.Since(start) - time.Second
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("run %d: the chain ended on its own? %v %+v", i, err, res)
		}
		fi1, _ := os.Stat(counter)
		if fi1 == nil || fi1.Size() < 3 {
			t.Fatalf("run %d: the chain did not run: %v", i, fi1)
		}
		time.Sleep(300 * time.Millisecond)
		fi2, _ := os.Stat(counter)
		if left := marked(mark); len(left) > 0 || fi2.Size() != fi1.Size() {
			for _, pid := range left {
				killStray(pid)
			}
			t.Fatalf("run %d: the chain went on after Run returned: %d -> %d generations, live %v", i, fi1.Size(), fi2.Size(), left)
		}
		t.Logf("run %d: %d generations, none after Run returned; the kill took %v", i, fi1.Size(), kill)
		if kill > 3*time.Second {
			t.Errorf("run %d: killing the tree took %v: not the cgroup's kill", i, kill)
		}
	}
	noGroupLeft(t)
}

// Without a cgroup the caller may manage (detection pointed at a
// mountinfo without one), the plan reports the tree-wide limits as not
// enforced, with why; Strict refuses; the child half's rlimits still
// apply: RLIMIT_CPU ends a spinner with SIGXCPU, reported as CPU time.
func TestRunLimitsWithoutCgroup(t *testing.T) {
	requireSandbox(t)
	sh := need(t, "/bin/sh", "dash")
	empty := filepath.Join(t.TempDir(), "mountinfo")
	os.WriteFile(empty, nil, 0o600)
	defer sandbox.SetCgroupOptions(empty, "")()

	cfg := sandbox.Config{AllowedExecPaths: []string{sh}, Limits: sandbox.Limits{MemoryBytes: 64 << 20, CPUTime: time.Second}}
	p, err := sandbox.PlanFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range p.Features {
		if f.Scope != sandbox.ScopeCommand {
			continue
		}
		switch f.Feature {
		case sandbox.FeatureLimitMemory:
			if f.Enforced || !strings.Contains(f.Detail, "RLIMIT_DATA") || !strings.Contains(f.Detail, "no cgroup") {
				t.Errorf("memory without a cgroup: %+v", f)
			}
		case sandbox.FeatureLimitCPUTime:
			if !f.Enforced || !strings.Contains(f.Detail, "RLIMIT_CPU") {
				t.Errorf("CPU time without a cgroup or spawn: %+v", f)
			}
		}
	}
	strict := cfg
	strict.Strict = true
	if _, err := sandbox.Run(context.Background(), strict, sh, []string{"-c", "true"}, sandbox.RunOptions{}); !errors.Is(err, sandbox.ErrNotEnforced) {
		t.Errorf("Strict Run with MemoryBytes and no cgroup: %v", err)
	}
	res, err := runLimited(t, cfg, sh, []string{"-c", "while :; do :; done"})
	if err != nil {
		t.Fatal(err)
	}
	if res.State != "signal: CPU time limit exceeded" || res.LimitExceeded != sandbox.FeatureLimitCPUTime {
		t.Errorf("spinner under RLIMIT_CPU 1 s: state %q, LimitExceeded %q", res.State, res.LimitExceeded)
	}
	noGroupLeft(t)
}

// rawPgrpChain forks the first member of the chain and returns in the
// caller. Each member (a copy of this process with one thread, which must
// not touch the Go runtime: nosplit, no allocation, raw system calls only)
// moves to a process group of its own, counts itself, forks its successor
// and exits.
//
//go:nosplit
//go:norace
func rawPgrpChain(fd uintptr) {
	one := [1]byte{'x'}
	leader := true
	for {
		r1, _, e := syscall.RawSyscall6(syscall.SYS_CLONE, uintptr(syscall.SIGCHLD), 0, 0, 0, 0, 0)
		if leader && (e != 0 || r1 != 0) {
			return
		}
		if e != 0 || r1 != 0 {
			syscall.RawSyscall(syscall.SYS_EXIT_GROUP, 0, 0, 0)
		}
		leader = false
		syscall.RawSyscall(syscall.SYS_SETPGID, 0, 0, 0)
		syscall.RawSyscall(syscall.SYS_WRITE, fd, uintptr(unsafe.Pointer(&one[0])), 1)
	}
}
