//go:build linux

package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/openparallax/sandbox"
	"github.com/openparallax/sandbox/internal/cgroup"
	"github.com/openparallax/sandbox/internal/childtest"
	"github.com/openparallax/sandbox/internal/trampoline"
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
			if err == unix.ENOSYS {
				// The filter refuses an executable memfd, and this
				// kernel (before 6.3) cannot make another kind.
				fmt.Println("no memfd here:", err)
				return 3
			}
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
	childHelpers["limit-tmpfs"] = func(args []string) int { // file, MiB
		n, _ := strconv.Atoi(args[1])
		fmt.Println("start")
		os.Stdout.Sync()
		fd, err := unix.Open(args[0], unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC, 0o600)
		if err != nil {
			fmt.Println("open:", err)
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
		fmt.Println("tmpfs", n, "MiB")
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

// requireCgroup returns the cgroup Run will use here, or skips saying why:
// it must have controller c ("" for none: the CPU watchdog on v2), and with
// raceFree a race-free kill.
func requireCgroup(t *testing.T, c string, raceFree bool) *cgroup.Manager {
	t.Helper()
	requireSandbox(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root: this host's cgroup hierarchies are writable only by root (the rlimit fallback is TestRunLimitsWithoutCgroup)")
	}
	guestControllers.Do(enableGuestControllers)
	m, err := cgroup.Detect(cgroup.Options{})
	if err != nil {
		t.Skipf("no cgroup to manage here: %v", err)
	}
	if c != "" && !m.Has(c) {
		t.Skipf("%s without the %s controller here: %v", m.Version, c, m.Notes)
	}
	if raceFree && !m.KillsRaceFree() {
		t.Skipf("%s without a freezer: the tree kill is not race-free here", m.Version)
	}
	t.Logf("%s, controllers %v", m.Version, m.Controllers)
	return m
}

var guestControllers sync.Once

// enableGuestControllers enables pids, memory and cpu for the children of
// the root cgroup in the kernel matrix's throw-away guests (CGROUP_TEST_GUEST=1,
// set by .ci/kernels.sh), as a host's init system does at boot, so that
// Run's cgroup v2 paths are tested there. Never on a host: only when this
// process is in the root of a cgroup2 hierarchy with no v1 hierarchy.
func enableGuestControllers() {
	if os.Getenv("CGROUP_TEST_GUEST") != "1" {
		return
	}
	if self, _ := os.ReadFile("/proc/self/cgroup"); string(self) != "0::/\n" {
		return
	}
	for _, c := range []string{"+pids", "+memory", "+cpu"} {
		if err := os.WriteFile("/sys/fs/cgroup/cgroup.subtree_control", []byte(c), 0); err != nil {
			fmt.Fprintf(os.Stderr, "guest: enabling %s: %v\n", c, err)
		}
	}
}

// ownGroups lists the tree cgroups made by this process that exist, in
// every hierarchy under /sys/fs/cgroup.
func ownGroups(t *testing.T) []string { return groupsOf(os.Getpid()) }

// groupsOf lists the tree cgroups made by process pid.
func groupsOf(pid int) []string {
	var out []string
	mine := "." + strconv.Itoa(pid) + "."
	filepath.WalkDir("/sys/fs/cgroup", func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if strings.Count(p, "/") > 8 {
			return fs.SkipDir
		}
		if filepath.Base(filepath.Dir(p)) == cgroup.DirName && strings.Contains(d.Name(), mine) {
			// A name made by this PID namespace's process pid.
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
	requireCgroup(t, cgroup.Pids, false)
	sh := need(t, "/bin/sh", "dash")
	const limit = 32
	mark := "SANDBOX_NPROC_TEST=" + strconv.Itoa(os.Getpid())
	cfg := sandbox.Config{AllowProcessSpawn: true, AllowedExecPaths: []string{sh}, Limits: sandbox.Limits{Processes: limit}}
	// Each child blocks reading the program's stdin (fd 3, a dup of it),
	// which the test holds open: no program beyond the shell. The loop
	// runs in a subshell, which dies at the first fork refused (dash
	// exits: "Cannot fork"); the outer shell then waits on stdin too, so
	// that the tree stays at the limit until the test has seen it, not
	// only for the moment before Run kills it.
	script := `exec 3<&0; (i=0; while [ $i -lt 200 ]; do (read x <&3) & i=$((i+1)); echo $i; done; echo done); read x <&3`
	stdin, hold := io.Pipe()
	atLimit, ended := make(chan struct{}), make(chan struct{})
	var onLimit, onEnd sync.Once
	stderr := watchWriter{"Cannot fork", func() { onLimit.Do(func() { close(atLimit) }) }}
	stdout := watchWriter{"done", func() { onEnd.Do(func() { close(ended) }) }}
	// The tree's size seen from outside: the live processes carrying its
	// marker, sampled while it runs (the machine's own task count moves
	// with whatever else runs here, and is only logged). Once the loop
	// died at the limit and half the limit was seen (or 5 s later), or
	// once it ended without reaching it, or after a minute, stdin is
	// closed and the tree ends.
	before := countTasks()
	peak := make(chan [2]int, 1)
	stop := make(chan struct{})
	go func() {
		var m [2]int
		var give <-chan time.Time
		limitC, endC := atLimit, ended // nil once received
		timeout := time.After(time.Minute)
		for {
			select {
			case <-stop:
				peak <- m
				return
			case <-limitC:
				limitC, give = nil, time.After(5*time.Second)
			case <-endC:
				endC = nil
				hold.Close()
			case <-give:
				hold.Close()
			case <-timeout:
				hold.Close()
			case <-time.After(5 * time.Millisecond):
				m[0] = max(m[0], len(marked(mark)))
				m[1] = max(m[1], countTasks())
				if limitC == nil && give != nil && m[0] >= limit/2 {
					hold.Close()
				}
			}
		}
	}()
	res, err := sandbox.Run(context.Background(), cfg, sh, []string{"-c", script},
		sandbox.RunOptions{Env: []string{"PATH=/usr/bin:/bin", mark}, Stdin: stdin, Stdout: stdout, Stderr: stderr, Timeout: 2 * time.Minute})
	close(stop)
	pk := <-peak
	tree, grew := pk[0], pk[1]-before
	out := strings.Fields(string(res.Stdout))
	t.Logf("%v, state %q, limit %q, %d forks, at most %d processes of the tree seen, machine tasks +%d at most; stderr %.200q",
		err, res.State, res.LimitExceeded, len(out), tree, grew, res.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode == 0 || strings.Contains(string(res.Stdout), "done") || len(out) >= limit {
		t.Errorf("200 forks under Processes %d: %d started, exit %d", limit, len(out), res.ExitCode)
	}
	if res.LimitExceeded != sandbox.FeatureLimitProcesses {
		t.Errorf("LimitExceeded = %q, want %q", res.LimitExceeded, sandbox.FeatureLimitProcesses)
	}
	if tree > limit || tree < limit/2 {
		t.Errorf("%d processes of the tree seen at once under Processes %d", tree, limit)
	}
	if left := marked(mark); len(left) > 0 {
		for _, pid := range left {
			killStray(pid)
		}
		t.Errorf("processes of the run outlived it: %v", left)
	}
	noGroupLeft(t)
}

// watchWriter calls seen each time a write holds text.
type watchWriter struct {
	text string
	seen func()
}

func (w watchWriter) Write(p []byte) (int, error) {
	if strings.Contains(string(p), w.text) {
		w.seen()
	}
	return len(p), nil
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
	requireCgroup(t, cgroup.Memory, false)
	for _, mode := range []string{"limit-anon", "limit-memfd"} {
		t.Run(mode, func(t *testing.T) {
			cfg := sandbox.Config{Limits: sandbox.Limits{MemoryBytes: 128 << 20}}
			res, err := runLimited(t, cfg, self(t), []string{helperArg, mode, "512"})
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(res.Stdout), "no memfd here") {
				t.Skip("no memfd under the sandbox on this kernel: memfd_create without MFD_NOEXEC_SEAL (before Linux 6.3) is refused where exec is allowed")
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
	// tmpfs pages: a file in /dev/shm (the host's tmpfs, granted by
	// AllowSharedMemory), removed afterwards.
	t.Run("limit-tmpfs", func(t *testing.T) {
		if fi, err := os.Stat("/dev/shm"); err != nil || !fi.IsDir() {
			t.Skip("no /dev/shm")
		}
		var st unix.Statfs_t
		if unix.Statfs("/dev/shm", &st) != nil || st.Type != unix.TMPFS_MAGIC || st.Bavail*uint64(st.Bsize) < 256<<20 {
			t.Skip("/dev/shm is not a tmpfs with 256 MiB free")
		}
		file := "/dev/shm/sandbox-limit-test-" + strconv.Itoa(os.Getpid())
		t.Cleanup(func() { os.Remove(file) })
		cfg := sandbox.Config{AllowSharedMemory: true, Limits: sandbox.Limits{MemoryBytes: 64 << 20}}
		res, err := runLimited(t, cfg, self(t), []string{helperArg, "limit-tmpfs", file, "200"})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(res.Stdout), "start") || strings.Contains(string(res.Stdout), "MiB") || res.State != "signal: killed" ||
			res.LimitExceeded != sandbox.FeatureLimitMemory {
			t.Errorf("200 MiB of tmpfs under MemoryBytes 64 MiB: state %q, LimitExceeded %q", res.State, res.LimitExceeded)
		}
		noGroupLeft(t)
	})
	// Under the limit: it completes, and nothing is reported.
	res, err := runLimited(t, sandbox.Config{Limits: sandbox.Limits{MemoryBytes: 256 << 20}}, self(t), []string{helperArg, "limit-anon", "32"})
	if err != nil || res.ExitCode != 0 || res.LimitExceeded != "" {
		t.Errorf("32 MiB memfd under 256 MiB: %v, exit %d, limit %q", err, res.ExitCode, res.LimitExceeded)
	}
	noGroupLeft(t)
}

// A CPU spinner with a spinning child stops when the tree's CPU time
// reaches CPUTime: the watchdog kills the tree.
func TestRunLimitCPUTime(t *testing.T) {
	if m := requireCgroup(t, "", false); m.Version == cgroup.V1 && !m.Has(cgroup.CPUAcct) {
		t.Skip("cgroup v1 without cpuacct: no CPU time of the tree")
	}
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
	checkOpenFiles16(t)
}

// checkOpenFiles16 runs the descriptor-opening helper under Run with
// OpenFiles 16: the highest descriptor must be 15, then EMFILE.
func checkOpenFiles16(t *testing.T) {
	t.Helper()
	res, err := runLimited(t, sandbox.Config{Limits: sandbox.Limits{OpenFiles: 16}}, self(t), []string{helperArg, "limit-open"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(string(res.Stdout)), "15 "+strconv.Itoa(int(unix.EMFILE)); got != want {
		t.Errorf("OpenFiles 16 as uid %d: highest descriptor and errno %q, want %q", os.Geteuid(), got, want)
	}
}

// The session scan's hole, closed by the cgroup: a chain whose every
// member is born in a process group of its own and exits once its
// successor exists. Run ends it through the tree's cgroup (frozen, then
// killed): nothing of it runs after Run returns.
func TestRunKillsPgrpChain(t *testing.T) {
	requireCgroup(t, "", true)
	pgrpChainRuns(t, "the cgroup's kill", 3*time.Second)
}

// pgrpChainRuns runs the pgrp-escaping fork chain under Run three times and
// checks that Run's kill (how names it) ends every chain within max of the
// timeout (the session scan takes seconds).
func pgrpChainRuns(t *testing.T, how string, max time.Duration) {
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
		if kill > max {
			t.Errorf("run %d: killing the tree took %v: not %s", i, kill, how)
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

const (
	envCgCaller   = "SANDBOX_TEST_CG_CALLER"   // the helper's marker
	envCgNoCgroup = "SANDBOX_TEST_CG_NOCGROUP" // the helper points detection at no cgroup, with a file in this directory
	envCgWrap     = "SANDBOX_TEST_CG_WRAP"     // the helper uses WrapCommand, not Run
)

// TestRunKilledCallerHelper, as a helper (envCgCaller set), runs a tree
// under Run with spawn and a limit: the program prints how many PIDs it
// has in /proc/self/status's NSpid (2 in a PID namespace of its own),
// starts a child that sleeps, prints "ready" and waits; its caller is then
// killed by TestRunKilledCaller.
func TestRunKilledCallerHelper(t *testing.T) {
	mark := os.Getenv(envCgCaller)
	if mark == "" {
		return
	}
	if dir := os.Getenv(envCgNoCgroup); dir != "" {
		// In the parent's directory: this process is killed, and its
		// own t.TempDir would be left behind.
		empty := filepath.Join(dir, "mountinfo")
		os.WriteFile(empty, nil, 0o600)
		sandbox.SetCgroupOptions(empty, "")
	}
	exe, _ := os.Executable()
	cfg := sandbox.Config{AllowProcessSpawn: true, AllowedExecPaths: []string{"/bin/sh", exe}, Limits: sandbox.Limits{Processes: 16}}
	script := `while read -r k v; do [ "$k" = NSpid: ] && set -- "$@" $v; done </proc/self/status; echo "nspids $(($# - 1))"; ` +
		`"$0" ` + helperArg + ` sleep 60s & echo ready; read x`
	if os.Getenv(envCgWrap) != "" {
		cmd := exec.Command("/bin/sh", "-c", script, exe)
		cmd.Env = []string{mark, quickExit}
		r, w, _ := os.Pipe() // w stays open: read x waits
		cmd.Stdin, cmd.Stdout = r, os.Stdout
		if err := sandbox.New().WrapCommand(cmd, cfg); err != nil {
			fmt.Println("WrapCommand:", err)
			os.Exit(3)
		}
		if err := cmd.Start(); err != nil {
			fmt.Println("Start:", err)
			os.Exit(3)
		}
		time.Sleep(time.Hour)
		w.Close()
	}
	sandbox.Run(context.Background(), cfg, "/bin/sh", []string{"-c", script, exe},
		sandbox.RunOptions{Env: []string{mark, quickExit}, Stdin: blockingReader{}, Stdout: os.Stdout})
	os.Exit(3)
}

// A caller SIGKILLed during Run, whose program has a child of its own:
// where namespaces are available, the program is PID 1 of a PID namespace
// of its own and no process of the tree survives the caller (Pdeathsig
// ends the program, the kernel the rest). With a cgroup, the caller's
// reaper (internal/cgroup) kills what is left in it and removes it, with
// no next Run. Where there is no cgroup and namespaces are unavailable (the
// fallback) the child lives on.
//
// Under WrapCommand (no PID namespace: the caller owns the process) the
// program's child outlives the caller unless the tree has a cgroup: then
// the reaper kills it and removes the cgroup.
func TestRunKilledCaller(t *testing.T) {
	t.Run("cgroup", func(t *testing.T) {
		requireCgroup(t, cgroup.Pids, false)
		killedCaller(t, false, false)
	})
	t.Run("no-cgroup", func(t *testing.T) {
		requireNamespaces(t)
		killedCaller(t, true, false)
	})
	t.Run("wrap-cgroup", func(t *testing.T) {
		requireCgroup(t, cgroup.Pids, false)
		killedCaller(t, false, true)
	})
}

func killedCaller(t *testing.T, noCgroup, wrap bool) {
	need(t, "/bin/sh", "dash")
	ns, why := mountLayerAvailable(t)
	if wrap {
		ns, why = false, "WrapCommand"
	}
	mark := "SANDBOX_CG_CALLER_TEST=" + strconv.Itoa(os.Getpid())
	caller := exec.Command(os.Args[0], "-test.run=^TestRunKilledCallerHelper$", "-test.count=1")
	caller.Env = append(os.Environ(), envCgCaller+"="+mark)
	if noCgroup {
		caller.Env = append(caller.Env, envCgNoCgroup+"="+t.TempDir())
	}
	if wrap {
		caller.Env = append(caller.Env, envCgWrap+"=1")
	}
	out, err := caller.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := caller.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan string, 1)
	go func() {
		b := make([]byte, 128)
		n, _ := io.ReadAtLeast(out, b, len("nspids 1\nready"))
		for n < len(b) && !strings.Contains(string(b[:n]), "ready") {
			m, err := out.Read(b[n:])
			if err != nil {
				break
			}
			n += m
		}
		ready <- string(b[:n])
	}()
	var said string
	select {
	case said = <-ready:
		if !strings.Contains(said, "ready") {
			caller.Process.Kill()
			caller.Wait()
			t.Fatalf("the caller's tree did not start: %q", said)
		}
	case <-time.After(30 * time.Second):
		caller.Process.Kill()
		caller.Wait()
		t.Fatal("the caller's tree did not start in 30 s")
	}
	inPIDNS := strings.Contains(said, "nspids 1")
	if inPIDNS != ns {
		t.Errorf("namespaces available %v (%s), but the program says %q", ns, why, said)
	}
	groups := groupsOf(caller.Process.Pid)
	// The program and its sleeping child (a process in the middle of
	// execve may not show its environment for a moment).
	for deadline := time.Now().Add(5 * time.Second); len(marked(mark)) < 2; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			caller.Process.Kill()
			caller.Wait()
			t.Fatalf("the tree is not there to outlive its caller: %v", marked(mark))
		}
	}
	caller.Process.Kill()
	caller.Wait()
	// Pdeathsig ends the program at once; the kernel then kills the rest
	// of its namespace. Give both time: a process may be exiting (its
	// environment is gone, it is not a zombie yet) for a moment. The
	// cgroup must hold nothing alive either (the program, reparented, may
	// be a zombie until whoever adopted it reaps it).
	liveIn := func() []string {
		var out []string
		for _, g := range groups {
			b, _ := os.ReadFile(filepath.Join(g, "cgroup.procs"))
			for _, f := range strings.Fields(string(b)) {
				if pid, _ := strconv.Atoi(f); alive(pid) {
					st, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
					out = append(out, g+": "+string(st))
				}
			}
		}
		return out
	}
	var left []int
	var live, groupsLeft []string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		left, live, groupsLeft = marked(mark), liveIn(), groupsOf(caller.Process.Pid)
		if len(left) == 0 && len(live) == 0 && len(groupsLeft) == 0 || time.Now().After(deadline) {
			break
		}
	}
	t.Logf("caller killed (PID namespace: %v): its cgroups %v, processes left %v, alive in its cgroups %v, cgroups left %v", inPIDNS, groups, left, live, groupsLeft)
	if !noCgroup && len(groups) == 0 {
		t.Fatal("no cgroup of the killed caller's tree")
	}
	switch {
	case !noCgroup:
		// The caller's reaper, with no next Run.
		if len(left) > 0 || len(live) > 0 || len(groupsLeft) > 0 {
			t.Errorf("the killed caller's tree and cgroup outlive it: processes %v, alive in its cgroups %v, cgroups %v", left, live, groupsLeft)
		}
	case inPIDNS:
		if len(left) > 0 || len(live) > 0 {
			t.Errorf("processes of the killed caller's tree survive it: %v; alive in its cgroups: %v", left, live)
		}
	default:
		t.Logf("no PID namespace here (%s) and no cgroup: the fallback, where the program's descendants outlive a killed caller", why)
		if len(left) == 0 {
			t.Errorf("without a PID namespace or a cgroup the child was expected to outlive the caller (Pdeathsig reaches only the program)")
		}
	}
	for _, pid := range left {
		killStray(pid)
	}
}

// WrapCommand with limits: the child half joins the tree's cgroup; the
// caller, whose tree it is, learns the limit and removes the cgroup with
// ReleaseCommand.
func TestWrapCommandLimitsRelease(t *testing.T) {
	requireCgroup(t, cgroup.Memory, false)
	cmd := exec.Command(self(t), helperArg, "limit-anon", "512")
	cmd.Env = []string{quickExit}
	if err := sandbox.New().WrapCommand(cmd, sandbox.Config{Limits: sandbox.Limits{MemoryBytes: 128 << 20}}); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	if len(ownGroups(t)) == 0 {
		t.Error("no cgroup while the tree's caller holds it")
	}
	hit, rerr := sandbox.ReleaseCommand(cmd)
	t.Logf("%v: %q; ReleaseCommand: %q, %v", err, out, hit, rerr)
	if rerr != nil || hit != sandbox.FeatureLimitMemory || !strings.Contains(string(out), "start") || cmd.ProcessState.String() != "signal: killed" {
		t.Errorf("512 MiB under 128 MiB through WrapCommand: %v, ReleaseCommand %q, %v", cmd.ProcessState, hit, rerr)
	}
	noGroupLeft(t)
	if hit, err := sandbox.ReleaseCommand(cmd); hit != "" || err != nil {
		t.Errorf("a second ReleaseCommand: %q, %v", hit, err)
	}
}

const envNobodyRun = "SANDBOX_TEST_NOBODY_RUN"

// TestRunLimitsNobodyHelper, as a helper (envNobodyRun set), becomes
// nobody and runs a spinner and fallocate(1) under Run with limits, and
// prints what the plan and the results say.
func TestRunLimitsNobodyHelper(t *testing.T) {
	if os.Getenv(envNobodyRun) == "" {
		return
	}
	becomeNobody(t)
	cfg := sandbox.Config{AllowedExecPaths: []string{"/bin/sh"}, Limits: sandbox.Limits{MemoryBytes: 64 << 20, CPUTime: time.Second}}
	p, err := sandbox.PlanFor(cfg)
	if err != nil {
		fmt.Println("plan:", err)
		os.Exit(3)
	}
	for _, f := range p.Features {
		if f.Scope == sandbox.ScopeCommand {
			fmt.Printf("plan %s %v\n", f.Feature, f.Enforced)
		}
	}
	if _, err := cgroup.Detect(cgroup.Options{}); err != nil {
		fmt.Println("no cgroup for nobody")
	}
	res, err := sandbox.Run(context.Background(), cfg, "/bin/sh", []string{"-c", "while :; do :; done"}, sandbox.RunOptions{Timeout: time.Minute})
	fmt.Printf("spin %v %q %q\n", err, res.State, res.LimitExceeded)
	os.Exit(0)
}

// As nobody there is no cgroup to manage on a host whose hierarchies are
// root's: the plan says memory is not enforced, and the child half's
// RLIMIT_CPU ends a spinner, reported.
func TestRunLimitsAsNobody(t *testing.T) {
	requireSandbox(t)
	need(t, "/bin/sh", "dash")
	if os.Geteuid() != 0 {
		t.Skip("needs root to become nobody")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRunLimitsNobodyHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), envNobodyRun+"=1")
	out, err := cmd.CombinedOutput()
	t.Logf("%v:\n%s", err, out)
	if !strings.Contains(string(out), "no cgroup for nobody") {
		t.Skip("nobody may manage a cgroup here: the fallback is not what runs")
	}
	for _, want := range []string{
		"plan " + sandbox.FeatureLimitMemory + " false",
		"plan " + sandbox.FeatureLimitCPUTime + " true",
		`spin <nil> "signal: CPU time limit exceeded" "` + sandbox.FeatureLimitCPUTime + `"`,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("as nobody: no %q", want)
		}
	}
}

// The Go trampoline, like the helper (internal/spawnhelper's
// TestHelperCgroupFDsFailClosed), fails closed on a cgroup.procs
// descriptor it cannot write: status 125, the target never runs.
func TestGoTrampolineCgroupFDsFailClosed(t *testing.T) {
	target, err := exec.LookPath("true")
	if err != nil {
		t.Skip("no true(1) to be the target")
	}
	ro, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	p := &trampoline.Payload{Path: target, Env: []string{"A=1"}, FirstFD: 4, ErrFD: -1, CgroupFDs: []int{4}}
	cmd := exec.Command("/proc/self/exe", "true")
	cmd.Args[0] = trampoline.Arg0
	cmd.Env = p.Environ()
	cmd.ExtraFiles = []*os.File{ro, ro}
	out, _ := cmd.CombinedOutput()
	if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); ws.ExitStatus() != 125 || !strings.Contains(string(out), "write cgroup.procs: bad file descriptor") {
		t.Errorf("%v %q, want exit 125 and the failed write", ws, out)
	}
}

// showLimits is a shell script that prints the lines of its own
// /proc/self/limits (the shell's: the redirection is the shell's open).
const showLimits = `while IFS= read -r l; do echo "$l"; done < /proc/self/limits`

// procLimit returns the soft and hard value of the limit named name (as
// /proc/self/limits names it: "Max open files") in out, a copy of that
// file; "" when absent.
func procLimit(out, name string) (soft, hard string) {
	for _, l := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(l, name+" "); ok {
			if f := strings.Fields(rest); len(f) >= 2 {
				return f[0], f[1]
			}
		}
	}
	return "", ""
}

// A limit above the caller's hard limit, which the child half inherits:
// the child half sets the hard limit instead (the limit holds, as the plan
// says), rather than asking prlimit64 for more and failing the spawn with
// EPERM, as it did for any caller without CAP_SYS_RESOURCE, nobody
// included. Neither child half can raise one (both set their limits after
// dropping every capability), root included. As root and nobody, through both child halves,
// in a child process that lowers its own hard limits first (so that the
// test does not depend on the host's), without a cgroup (the rlimit path
// for every limit).
func TestRunLimitAboveHardLimit(t *testing.T) {
	requireSandbox(t)
	need(t, "/bin/sh", "dash")
	for _, who := range users(t) {
		t.Run(who, func(t *testing.T) {
			empty := childtest.Share(t, func() string {
				p := filepath.Join(t.TempDir(), "mountinfo")
				os.WriteFile(p, nil, 0o644)
				os.Chmod(filepath.Dir(p), 0o755)
				return p
			})
			childtest.Run(t, func(t *testing.T) {
				defer sandbox.SetCgroupOptions(empty, "")()
				// The caller's hard limits, lowered in this child.
				lowered := []struct {
					res       int
					name      string
					hard, ask uint64
					set       func(*sandbox.Limits, uint64)
				}{
					{unix.RLIMIT_NOFILE, "Max open files", 4096, 30000, func(l *sandbox.Limits, v uint64) { l.OpenFiles = int64(v) }},
					{unix.RLIMIT_NPROC, "Max processes", 4096, 200000, func(l *sandbox.Limits, v uint64) { l.Processes = int64(v) }},
					{unix.RLIMIT_FSIZE, "Max file size", 1 << 30, 1 << 40, func(l *sandbox.Limits, v uint64) { l.FileSizeBytes = int64(v) }},
					{unix.RLIMIT_CPU, "Max cpu time", 3600, 36000, func(l *sandbox.Limits, v uint64) { l.CPUTime = time.Duration(v) * time.Second }},
				}
				cfg := sandbox.Config{AllowedExecPaths: []string{"/bin/sh"}}
				for _, r := range lowered {
					var cur syscall.Rlimit
					syscall.Getrlimit(r.res, &cur)
					if cur.Max < r.hard {
						t.Skipf("%s: the hard limit here, %d, is already below %d", r.name, cur.Max, r.hard)
					}
					// syscall, not unix: for RLIMIT_NOFILE the runtime then
					// passes this limit on to the children it starts.
					if err := syscall.Setrlimit(r.res, &syscall.Rlimit{Cur: r.hard, Max: r.hard}); err != nil {
						t.Fatal(err)
					}
					r.set(&cfg.Limits, r.ask)
				}
				if who == "nobody" {
					becomeNobody(t)
				}
				p, err := sandbox.PlanFor(cfg)
				if err != nil {
					t.Fatal(err)
				}
				for _, f := range p.Features {
					if f.Scope == sandbox.ScopeCommand && f.Feature == sandbox.FeatureLimitOpenFiles &&
						(!f.Enforced || !strings.Contains(f.Detail, "the caller's hard limit is lower, 4096")) {
						t.Errorf("the plan does not say what the lower hard limit makes of OpenFiles 30000: %+v", f)
					}
				}
				for _, half := range []string{"default", "go-trampoline"} {
					t.Run(half, func(t *testing.T) {
						if half == "go-trampoline" {
							defer sandbox.ForceGoTrampoline()()
						}
						res, err := sandbox.Run(context.Background(), cfg, "/bin/sh", []string{"-c", showLimits},
							sandbox.RunOptions{Env: []string{"PATH=/usr/bin:/bin"}, Timeout: time.Minute})
						if err != nil || res.ExitCode != 0 {
							t.Fatalf("limits above the hard limits as %s: %v, %q, stderr %q", who, err, res.State, res.Stderr)
						}
						out := string(res.Stdout)
						for _, r := range lowered {
							want := strconv.FormatUint(r.hard, 10)
							if _, hard := procLimit(out, r.name); hard != want {
								t.Errorf("%s: hard limit %q in the child, want %s (asked %d over a hard limit of %d)",
									r.name, hard, want, r.ask, r.hard)
							}
						}
						if t.Failed() {
							t.Logf("the child's limits:\n%s", out)
						}
					})
				}
			})
		})
	}
}

// The child half's rlimits through Run as nobody, where no cgroup can be
// managed (this host's hierarchies are root's): a fork loop stops at
// Processes (RLIMIT_NPROC), a writer is ended by SIGXFSZ at FileSizeBytes
// and the result says so, and OpenFiles caps the descriptors with EMFILE.
// The test runs again as nobody, from a copy of this binary nobody can
// execute (childtest.AsNobody).
func TestRunLimitsNobodyRlimits(t *testing.T) {
	requireSandbox(t)
	sh := need(t, "/bin/sh", "dash")
	if !childtest.AsNobody(t) {
		return
	}
	if _, err := cgroup.Detect(cgroup.Options{}); err == nil {
		t.Skip("nobody may manage a cgroup here: the child half's rlimits are not what enforces Processes")
	}

	// RLIMIT_NPROC counts the tasks of the user: this test process's
	// threads are nobody's too, and so would be anything else nobody runs
	// meanwhile. The limit is a margin above what nobody holds now; the
	// loop's processes and the shell can never exceed the limit, and the
	// 200 forks asked cannot all succeed.
	t.Run("processes", func(t *testing.T) {
		const margin = 12
		limit := nobodyTasks() + margin
		mark := "SANDBOX_NOBODY_NPROC_TEST=" + strconv.Itoa(os.Getpid())
		cfg := sandbox.Config{AllowProcessSpawn: true, AllowedExecPaths: []string{sh}, Limits: sandbox.Limits{Processes: int64(limit)}}
		if p, _ := sandbox.PlanFor(cfg); !enforcedIn(p, sandbox.FeatureLimitProcesses, sandbox.ScopeCommand) {
			t.Errorf("the plan does not say RLIMIT_NPROC binds nobody's tree: %+v", p.Features)
		}
		script := `exec 3<&0; i=0; while [ $i -lt 200 ]; do (read x <&3) & i=$((i+1)); echo $i; done; echo done`
		res, err := sandbox.Run(context.Background(), cfg, sh, []string{"-c", script},
			sandbox.RunOptions{Env: []string{"PATH=/usr/bin:/bin", mark}, Stdin: blockingReader{}, Timeout: time.Minute})
		started := len(strings.Fields(string(res.Stdout)))
		t.Logf("limit %d (nobody had %d tasks): %v, state %q, limit %q, %d forks; stderr %.200q",
			limit, limit-margin, err, res.State, res.LimitExceeded, started, res.Stderr)
		if err != nil {
			t.Fatal(err)
		}
		if res.ExitCode == 0 || strings.Contains(string(res.Stdout), "done") || started >= limit || !strings.Contains(string(res.Stderr), "fork") {
			t.Errorf("200 forks under Processes %d as nobody: %d started, exit %d, stderr %q; want a fork refused before the limit", limit, started, res.ExitCode, res.Stderr)
		}
		if left := marked(mark); len(left) > 0 {
			for _, pid := range left {
				killStray(pid)
			}
			t.Errorf("processes of the run outlived it: %v", left)
		}
	})

	for _, half := range []string{"default", "go-trampoline"} {
		t.Run("file-size/"+half, func(t *testing.T) {
			if half == "go-trampoline" {
				defer sandbox.ForceGoTrampoline()()
			}
			dd := need(t, "/bin/dd", "coreutils")
			dir := t.TempDir()
			target := filepath.Join(dir, "big")
			cfg := sandbox.Config{AllowedWritePaths: []string{dir}, Limits: sandbox.Limits{FileSizeBytes: 16 << 10}}
			res, err := runLimited(t, cfg, dd, []string{"if=/dev/zero", "of=" + target, "bs=4096", "count=64"})
			if err != nil {
				t.Fatal(err)
			}
			if res.State != "signal: file size limit exceeded" || res.LimitExceeded != sandbox.FeatureLimitFileSize {
				t.Errorf("dd of 256 KiB under FileSizeBytes 16 KiB as nobody: state %q, LimitExceeded %q", res.State, res.LimitExceeded)
			}
			if fi, err := os.Stat(target); err != nil || fi.Size() != 16<<10 {
				t.Errorf("%s: %v, %v; want 16384 bytes, the limit", target, fi, err)
			}
		})
		t.Run("open-files/"+half, func(t *testing.T) {
			if half == "go-trampoline" {
				defer sandbox.ForceGoTrampoline()()
			}
			checkOpenFiles16(t)
		})
	}
}

// With any limit, the program runs with RLIMIT_CORE 0, soft and hard (a
// core pattern that pipes to a program would run that program outside the
// sandbox), whether the child half sets other rlimits (OpenFiles) or the
// tree's cgroup holds every limit asked (Processes as root where a pids
// controller can be managed); without limits, nothing is imposed: the
// caller's core limit passes on. In a child process that first raises its
// own soft core limit, so that a 0 in the program is the sandbox's doing.
func TestRunLimitCoreZero(t *testing.T) {
	requireSandbox(t)
	need(t, "/bin/sh", "dash")
	for _, who := range users(t) {
		t.Run(who, func(t *testing.T) {
			childtest.Run(t, func(t *testing.T) {
				var core syscall.Rlimit
				syscall.Getrlimit(unix.RLIMIT_CORE, &core)
				if core.Max < 1<<20 {
					t.Skipf("the hard core limit here is %d: a program's core limit of 0 would prove nothing", core.Max)
				}
				if err := syscall.Setrlimit(unix.RLIMIT_CORE, &syscall.Rlimit{Cur: 1 << 20, Max: core.Max}); err != nil {
					t.Fatal(err)
				}
				if who == "nobody" {
					becomeNobody(t)
				}
				_, err := cgroup.Detect(cgroup.Options{})
				for _, c := range []struct {
					name       string
					limits     sandbox.Limits
					soft, hard string
				}{
					{"none", sandbox.Limits{}, "1048576", strconv.FormatUint(core.Max, 10)},
					{"open-files", sandbox.Limits{OpenFiles: 64}, "0", "0"},
					{"processes", sandbox.Limits{Processes: 4096}, "0", "0"},
				} {
					if c.name == "none" && core.Max == unix.RLIM_INFINITY {
						c.hard = "unlimited"
					}
					res, rerr := sandbox.Run(context.Background(), sandbox.Config{AllowedExecPaths: []string{"/bin/sh"}, Limits: c.limits},
						"/bin/sh", []string{"-c", showLimits}, sandbox.RunOptions{Env: []string{"PATH=/usr/bin:/bin"}, Timeout: time.Minute})
					if rerr != nil || res.ExitCode != 0 {
						t.Fatalf("%s: %v, %q, stderr %q", c.name, rerr, res.State, res.Stderr)
					}
					soft, hard := procLimit(string(res.Stdout), "Max core file size")
					if c.name == "processes" {
						t.Logf("processes: enforced by %s", pick(err == nil, "the tree's cgroup where it has pids (only RLIMIT_CORE is set)", "RLIMIT_NPROC (no cgroup: "+fmt.Sprint(err)+")"))
					}
					if soft != c.soft || hard != c.hard {
						t.Errorf("%s: the program's core limit is %s %s, want %s %s", c.name, soft, hard, c.soft, c.hard)
					}
				}
			})
		})
	}
}

// MemoryBytes leaves swap out: the tree's cgroup, read while the tree
// runs, holds the limit as memory.limit_in_bytes and
// memory.memsw.limit_in_bytes (v1: memory plus swap, the same value, so no
// swap on top) or memory.max and memory.swap.max 0 (v2), as the plan says.
func TestRunLimitMemorySwapOff(t *testing.T) {
	requireCgroup(t, cgroup.Memory, false)
	const limit = 64 << 20
	stdinR, stdinW := io.Pipe()
	ready := make(chan struct{})
	var once sync.Once
	out := writerFunc(func(b []byte) (int, error) {
		if strings.Contains(string(b), "ready") {
			once.Do(func() { close(ready) })
		}
		return len(b), nil
	})
	done := make(chan error, 1)
	go func() {
		_, err := sandbox.Run(context.Background(), sandbox.Config{Limits: sandbox.Limits{MemoryBytes: limit}}, "/bin/sh", []string{"-c", "echo ready; read x"},
			sandbox.RunOptions{Env: []string{"PATH=/usr/bin:/bin"}, Stdin: stdinR, Stdout: out, Timeout: time.Minute})
		done <- err
	}()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("the tree ended before it was read: %v", err)
	}
	var read []string
	var missing string
	for _, g := range ownGroups(t) {
		for _, f := range []struct{ file, want string }{
			{"memory.limit_in_bytes", strconv.Itoa(limit)},       // v1
			{"memory.memsw.limit_in_bytes", strconv.Itoa(limit)}, // v1, where swap is accounted
			{"memory.max", strconv.Itoa(limit)},                  // v2
			{"memory.swap.max", "0"},                             // v2, where swap is accounted
		} {
			b, err := os.ReadFile(filepath.Join(g, f.file))
			switch {
			case errors.Is(err, fs.ErrNotExist):
				if f.file == "memory.memsw.limit_in_bytes" && fileExists(filepath.Join(g, "memory.limit_in_bytes")) {
					// What is done instead: swappiness 0.
					missing = f.file
					if b, _ := os.ReadFile(filepath.Join(g, "memory.swappiness")); strings.TrimSpace(string(b)) != "0" {
						t.Errorf("%s: no memsw, and memory.swappiness %q, want 0", g, b)
					}
				}
				if f.file == "memory.swap.max" && fileExists(filepath.Join(g, "memory.max")) {
					missing = f.file
				}
			case err != nil:
				t.Errorf("%s: %v", f.file, err)
			default:
				read = append(read, f.file)
				if got := strings.TrimSpace(string(b)); got != f.want {
					t.Errorf("%s/%s = %s, want %s", g, f.file, got, f.want)
				}
			}
		}
	}
	stdinW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	t.Logf("read %v", read)
	if len(read) == 0 {
		t.Fatal("no memory limit found in the tree's cgroups while it ran")
	}
	noGroupLeft(t)
	if missing != "" {
		t.Skipf("the memory limit is set, but %s is absent here (swap not accounted: the kernel was built without it or booted with swapaccount=0): swap is not kept out of MemoryBytes by a limit (v1: swappiness 0, checked)", missing)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

// A limit reached, then the deadline: Run's error wraps
// context.DeadlineExceeded (the deadline ended the program) and
// LimitExceeded still names the limit the tree's cgroup counted (why the
// program had not finished): a subshell forks until pids.max refuses a
// fork, and the shell then waits on its standard input until the timeout.
// The same program without reaching the limit reports the timeout alone.
func TestRunLimitThenTimeout(t *testing.T) {
	requireCgroup(t, cgroup.Pids, false)
	sh := need(t, "/bin/sh", "dash")
	cfg := sandbox.Config{AllowProcessSpawn: true, AllowedExecPaths: []string{sh}, Limits: sandbox.Limits{Processes: 16}}
	for _, c := range []struct {
		name, script, limit string
	}{
		{"limit-reached", `exec 3<&0; (while :; do (read x <&3) & done); echo loop ended; read x`, sandbox.FeatureLimitProcesses},
		{"limit-not-reached", `exec 3<&0; (read x <&3) & echo one fork; read x`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := sandbox.Run(context.Background(), cfg, sh, []string{"-c", c.script},
				sandbox.RunOptions{Env: []string{"PATH=/usr/bin:/bin"}, Stdin: blockingReader{}, Timeout: 2 * time.Second})
			t.Logf("%v, state %q, limit %q; stdout %q stderr %.200q", err, res.State, res.LimitExceeded, res.Stdout, res.Stderr)
			if !errors.Is(err, context.DeadlineExceeded) || res.State != "signal: killed" {
				t.Errorf("not ended by the deadline: %v, %q", err, res.State)
			}
			if want := pick(c.limit != "", "loop ended", "one fork"); !strings.Contains(string(res.Stdout), want) {
				t.Errorf("the program did not get as far as %q before the deadline", want)
			}
			if res.LimitExceeded != c.limit {
				t.Errorf("LimitExceeded = %q, want %q", res.LimitExceeded, c.limit)
			}
			noGroupLeft(t)
		})
	}
}
