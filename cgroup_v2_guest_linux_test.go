//go:build linux

package sandbox_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openparallax/sandbox"
	"github.com/openparallax/sandbox/internal/cgroup"
	"github.com/openparallax/sandbox/internal/childtest"
)

// Run's limits on cgroup v2 where the caller is not in the root cgroup,
// which is how a caller runs on any systemd host: in a unit's cgroup, which
// holds the caller and so cannot enable a controller for children of its
// own ("no internal processes"). Detection walks up to the nearest cgroup
// the caller may use that enables pids and memory for its children, and
// Run's trees get their cgroups there. Only in the kernel matrix's qemu
// guests (CGROUP_TEST_GUEST=1): the test makes cgroups outside DirName,
// under the guest's root cgroup, and moves a process into them.

const (
	envV2Stage  = "SANDBOX_TEST_V2_STAGE"  // set in the re-executed caller: the test it runs
	envV2Parent = "SANDBOX_TEST_V2_PARENT" // the cgroup detection must choose
	envV2Killed = "SANDBOX_TEST_V2_KILLED" // the caller starts a tree and waits to be killed
)

// TestRunLimitsSystemdLayout: the caller in a leaf, as systemd places
// processes, with pids and memory enabled in the ancestors' subtree_control
// as systemd enables them for accounting.
//
//   - root: a system service, /sys.slice/svc; the trees' cgroups go in the
//     slice, /sys.slice/openparallax-sandbox.
//   - nobody: a delegated cgroup (Delegate=yes: the directory and its
//     cgroup.procs, cgroup.subtree_control and cgroup.threads chowned to the
//     user; pids and memory enabled in it by its delegate) in a root-owned
//     slice, the caller in its leaf /user.slice/deleg/supervisor; the trees'
//     cgroups go in /user.slice/deleg/openparallax-sandbox, and the slice
//     above, which nobody may not write, is not used.
//
// In each, Run with Processes and MemoryBytes: the plan says both are
// enforced by a cgroup in that directory, a fork loop's program reads its
// own cgroup there and stops at Processes (LimitExceeded says so), and a
// program allocating past MemoryBytes is killed (LimitExceeded says so);
// nothing is left of the trees' cgroups afterwards. Then a caller that
// started a WrapCommand tree with limits (a program and its child) is
// killed: its reaper, running as the caller's user, kills the tree and
// removes its cgroup.
func TestRunLimitsSystemdLayout(t *testing.T) {
	if stage := os.Getenv(envV2Stage); stage != "" {
		if strings.HasPrefix(stage, t.Name()+"/") {
			t.Run(strings.TrimPrefix(stage, t.Name()+"/"), func(t *testing.T) {
				if os.Getenv(envV2Killed) != "" {
					v2KilledCaller(t)
					return
				}
				v2Caller(t, os.Getenv(envV2Parent))
			})
		}
		return
	}
	if os.Getenv("CGROUP_TEST_GUEST") != "1" {
		t.Skip("only in the kernel matrix's qemu guests (CGROUP_TEST_GUEST=1): it makes cgroups under the root cgroup and moves a process into them")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to lay out the cgroups")
	}
	if self, _ := os.ReadFile("/proc/self/cgroup"); string(self) != "0::/\n" {
		t.Skipf("not in the root of a cgroup2 hierarchy: %q", self)
	}
	requireSandbox(t)
	need(t, "/bin/sh", "dash")
	guestControllers.Do(enableGuestControllers)
	const root = "/sys/fs/cgroup"

	t.Run("root-in-service", func(t *testing.T) {
		slice := filepath.Join(root, "sys.slice")
		leaf := filepath.Join(slice, "svc")
		mkCgroup(t, slice, "+pids +memory", -1)
		mkCgroup(t, leaf, "", -1)
		runV2Caller(t, leaf, slice, 0)
	})
	t.Run("nobody-delegated", func(t *testing.T) {
		slice := filepath.Join(root, "user.slice")
		deleg := filepath.Join(slice, "deleg")
		leaf := filepath.Join(deleg, "supervisor")
		mkCgroup(t, slice, "+pids +memory", -1)
		mkCgroup(t, deleg, "+pids +memory", 65534)
		mkCgroup(t, leaf, "", 65534)
		runV2Caller(t, leaf, deleg, 65534)
	})
}

// mkCgroup makes the cgroup dir, enables ctrls for its children (before any
// process is in it), and, with uid ≥ 0, delegates it to uid as systemd's
// Delegate=yes does. It is removed at the end of the test, which fails if
// something is left in it.
func mkCgroup(t *testing.T, dir, ctrls string, uid int) {
	t.Helper()
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// The caller's cgroup reaper (internal/cgroup), born in the
		// caller's cgroup, exits just after the caller: wait for it.
		err := os.Remove(dir)
		for deadline := time.Now().Add(5 * time.Second); errors.Is(err, syscall.EBUSY) && time.Now().Before(deadline); err = os.Remove(dir) {
			time.Sleep(10 * time.Millisecond)
		}
		if err != nil {
			ents, _ := os.ReadDir(dir)
			var subs []string
			for _, e := range ents {
				if e.IsDir() {
					subs = append(subs, e.Name())
				}
			}
			t.Errorf("removing %s: %v (cgroups left in it: %v)", dir, err, subs)
		}
	})
	if ctrls != "" {
		if err := os.WriteFile(filepath.Join(dir, "cgroup.subtree_control"), []byte(ctrls), 0); err != nil {
			t.Fatal(err)
		}
	}
	if uid >= 0 {
		for _, f := range []string{"", "cgroup.procs", "cgroup.subtree_control", "cgroup.threads"} {
			if err := os.Chown(filepath.Join(dir, f), uid, uid); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// runV2Caller re-executes this test binary as uid, born in the cgroup leaf
// (CLONE_INTO_CGROUP), to run the current subtest's caller half there
// (v2Caller), expecting detection to choose parent.
func runV2Caller(t *testing.T, leaf, parent string, uid int) {
	t.Helper()
	fd, err := os.Open(leaf)
	if err != nil {
		t.Fatal(err)
	}
	defer fd.Close()
	exe := childtest.SelfCopy(t)
	cmd := exec.Command(exe, "-test.run=^TestRunLimitsSystemdLayout$", "-test.v", "-test.count=1", "-test.timeout=240s")
	cmd.Env = []string{envV2Stage + "=" + t.Name(), envV2Parent + "=" + parent, "PATH=/usr/bin:/bin", "HOME=/", "TMPDIR=/tmp", quickExit}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{UseCgroupFD: true, CgroupFD: int(fd.Fd())}
	if uid != 0 {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}
	}
	out, err := cmd.CombinedOutput()
	t.Logf("the caller in %s as uid %d (%v):\n%s", leaf, uid, err, out)
	if err != nil || !strings.Contains(string(out), "--- PASS: "+t.Name()) {
		t.Fatalf("the caller in %s failed", leaf)
	}
	if _, err := os.Stat(filepath.Join(parent, cgroup.DirName)); !os.IsNotExist(err) {
		t.Errorf("%s left behind (%v)", filepath.Join(parent, cgroup.DirName), err)
	}

	// The killed caller.
	killed := exec.Command(exe, "-test.run=^TestRunLimitsSystemdLayout$", "-test.v", "-test.count=1", "-test.timeout=240s")
	killed.Env = append(slices.Clone(cmd.Env), envV2Killed+"=1")
	killed.Dir = "/"
	killed.SysProcAttr = cmd.SysProcAttr
	stdout, err := killed.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := killed.Start(); err != nil {
		t.Fatal(err)
	}
	var pids []int
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "tree "); ok {
			for _, f := range strings.Fields(rest) {
				if pid, err := strconv.Atoi(f); err == nil {
					pids = append(pids, pid)
				}
			}
			break
		}
	}
	if len(pids) != 2 {
		killed.Process.Kill()
		killed.Wait()
		t.Fatalf("the caller to kill did not start its tree: %v", pids)
	}
	killed.Process.Kill()
	killed.Wait()
	dir := filepath.Join(parent, cgroup.DirName)
	var alivePids []int
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		alivePids = slices.DeleteFunc(slices.Clone(pids), func(pid int) bool { return !alive(pid) })
		_, err := os.Stat(dir)
		if len(alivePids) == 0 && os.IsNotExist(err) || time.Now().After(deadline) {
			ents, _ := os.ReadDir(dir)
			if len(alivePids) > 0 || err == nil {
				t.Errorf("a killed caller (uid %d) left processes %v of its tree alive, and %s (%v)", uid, alivePids, dir, ents)
			}
			break
		}
	}
	for _, pid := range alivePids {
		killStray(pid)
	}
}

// v2KilledCaller starts, through WrapCommand with limits, a shell whose
// child outlives it unless the tree is killed, prints "tree SHPID CHILDPID"
// and waits to be killed.
func v2KilledCaller(t *testing.T) {
	exe := self(t)
	cmd := exec.Command("/bin/sh", "-c", `"$0" `+helperArg+` sleep 60s & echo "tree $$ $!"; read x`, exe)
	cmd.Env = []string{quickExit}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	cmd.Stdin, cmd.Stdout = r, os.Stdout
	cfg := sandbox.Config{AllowProcessSpawn: true, AllowedExecPaths: []string{"/bin/sh", exe}, Limits: sandbox.Limits{Processes: 16}}
	if err := sandbox.New().WrapCommand(cmd, cfg); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Hour)
}

// v2Caller is the caller's half: it runs in a leaf cgroup and expects the
// trees' cgroups in parent.
func v2Caller(t *testing.T, parent string) {
	own, _ := os.ReadFile("/proc/self/cgroup")
	t.Logf("uid %d, cgroup %q", os.Geteuid(), strings.TrimSpace(string(own)))
	m, err := cgroup.Detect(cgroup.Options{})
	if err != nil {
		t.Fatalf("Detect: %v", err)
	}
	if m.Version != cgroup.V2 || !m.Has(cgroup.Pids) || !m.Has(cgroup.Memory) || len(m.Parents()) != 1 || m.Parents()[0] != parent {
		t.Fatalf("Detect: %s %v in %v (%v), want cgroup v2 with pids and memory in %s", m.Version, m.Controllers, m.Parents(), m.Notes, parent)
	}
	where := filepath.Join(parent, cgroup.DirName)
	sh := "/bin/sh"
	exe := self(t)
	cfg := sandbox.Config{AllowProcessSpawn: true, AllowedExecPaths: []string{sh, exe},
		Limits: sandbox.Limits{Processes: 16, MemoryBytes: 128 << 20}}
	p, err := sandbox.PlanFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range p.Features {
		if f.Scope == sandbox.ScopeCommand && (f.Feature == sandbox.FeatureLimitProcesses || f.Feature == sandbox.FeatureLimitMemory) &&
			(!f.Enforced || !strings.Contains(f.Detail, "cgroup v2 (a cgroup in "+where+")")) {
			t.Errorf("plan: %s enforced=%v: %s; want enforced by a cgroup in %s", f.Feature, f.Enforced, f.Detail, where)
		}
	}

	// The fork loop: its program names its own cgroup first.
	script := `read l </proc/self/cgroup; echo "cg $l"; exec 3<&0; i=0; while [ $i -lt 200 ]; do (read x <&3) & i=$((i+1)); echo $i; done; echo done`
	res, err := sandbox.Run(context.Background(), cfg, sh, []string{"-c", script},
		sandbox.RunOptions{Env: []string{"PATH=/usr/bin:/bin"}, Stdin: blockingReader{}, Timeout: time.Minute})
	t.Logf("fork loop: %v, state %q, exit %d, limit %q; stdout %.200q stderr %.200q", err, res.State, res.ExitCode, res.LimitExceeded, res.Stdout, res.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	rel := strings.TrimPrefix(where, "/sys/fs/cgroup")
	if first, _, _ := strings.Cut(string(res.Stdout), "\n"); !strings.HasPrefix(first, "cg 0::"+rel+"/") {
		t.Errorf("the program's cgroup: %q, want one in %s", first, rel)
	}
	if n := strings.Count(string(res.Stdout), "\n") - 1; res.ExitCode == 0 || strings.Contains(string(res.Stdout), "done") || n >= 16 {
		t.Errorf("200 forks under Processes 16: %d started, exit %d", n, res.ExitCode)
	}
	if res.LimitExceeded != sandbox.FeatureLimitProcesses {
		t.Errorf("fork loop: LimitExceeded %q, want %q", res.LimitExceeded, sandbox.FeatureLimitProcesses)
	}

	// 512 MiB under MemoryBytes 128 MiB: the out-of-memory killer.
	res, err = sandbox.Run(context.Background(), cfg, exe, []string{helperArg, "limit-anon", "512"},
		sandbox.RunOptions{Env: []string{quickExit}, Timeout: time.Minute})
	t.Logf("allocator: %v, state %q, limit %q; stdout %.200q", err, res.State, res.LimitExceeded, res.Stdout)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res.Stdout), "start") || strings.Contains(string(res.Stdout), "MiB") || res.State != "signal: killed" ||
		res.LimitExceeded != sandbox.FeatureLimitMemory {
		t.Errorf("512 MiB under MemoryBytes 128 MiB: state %q, LimitExceeded %q", res.State, res.LimitExceeded)
	}
	if ents, err := os.ReadDir(where); !os.IsNotExist(err) {
		t.Errorf("%s after the runs: %v %v", where, ents, err)
	}
}
