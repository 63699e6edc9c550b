//go:build linux

package sandbox_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/openparallax/sandbox"
	"github.com/openparallax/sandbox/internal/childtest"
)

// Resource limits under ApplySelf, enforced for real: each test applies
// them in a re-executed child (childtest) or in a helper process that the
// test expects to be ended by the limit, as root and as nobody.

const envLimitsHelper = "SANDBOX_LIMITS_HELPER" // "mode[,nobody]"

// users are the identities the tests run as: root, and nobody when root.
func users(t *testing.T) []string {
	if os.Geteuid() != 0 {
		return []string{"self"}
	}
	return []string{"root", "nobody"}
}

// becomeNobody drops to uid and gid 65534 on every thread.
func becomeNobody(t *testing.T) {
	t.Helper()
	if err := syscall.Setgroups(nil); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Setgid(65534); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Setuid(65534); err != nil {
		t.Fatal(err)
	}
}

// nobodyDir makes a directory nobody may write in, under a path nobody may
// traverse.
func nobodyDir(t *testing.T) string {
	dir := t.TempDir()
	os.Chmod(filepath.Dir(dir), 0o755) // t.TempDir's parent is 0700
	os.Chmod(dir, 0o777)
	return dir
}

func TestLimitFileSize(t *testing.T) {
	requireSandbox(t) // the limits are applied with ApplySelf, which applies nothing without the mechanism
	for _, who := range users(t) {
		t.Run(who, func(t *testing.T) {
			dir := childtest.Share(t, func() string { return nobodyDir(t) })
			childtest.Run(t, func(t *testing.T) {
				if who == "nobody" {
					becomeNobody(t)
				}
				cfg := sandbox.Config{
					AllowedWritePaths: []string{dir},
					AllowProcessSpawn: true,
					Limits:            sandbox.Limits{FileSizeBytes: 4096},
				}
				head, err := exec.LookPath("head")
				if err == nil {
					cfg.AllowedExecPaths = []string{head}
				}
				plan, err := sandbox.PlanFor(cfg)
				if err != nil {
					t.Fatal(err)
				}
				// ApplySelf drops every capability, CAP_SYS_RESOURCE
				// included: the limit binds root too, as the plan says.
				if !enforcedIn(plan, sandbox.FeatureLimitFileSize, sandbox.ScopeApplySelf) {
					t.Errorf("plan says RLIMIT_FSIZE does not bind %s: %+v", who, plan.Features)
				}
				if err := sandbox.New().ApplySelf(cfg); err != nil {
					t.Fatal(err)
				}
				defer func() {
					raise := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: 8192, Max: 8192})
					if raise != syscall.EPERM {
						t.Errorf("%s raised its hard RLIMIT_FSIZE under the sandbox: %v", who, raise)
					}
				}()
				// A Go program ignores SIGXFSZ and sees EFBIG.
				f, err := os.Create(filepath.Join(dir, "go"))
				if err != nil {
					t.Fatal(err)
				}
				n, err := f.Write(make([]byte, 8192))
				f.Close()
				if n != 4096 || !errors.Is(err, syscall.EFBIG) {
					t.Errorf("write of 8192 bytes under a 4096-byte limit: %d, %v; want 4096, EFBIG", n, err)
				}
				// A program that does not handle SIGXFSZ is ended by it.
				if head == "" {
					t.Log("no head(1) here (the kernel matrix's guests): SIGXFSZ of a C program not tried")
					return
				}
				out, err := os.Create(filepath.Join(dir, "head"))
				if err != nil {
					t.Fatal(err)
				}
				cmd := exec.Command(head, "-c", "8192", "/dev/zero")
				cmd.Stdout = out
				err = cmd.Run()
				out.Close()
				if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGXFSZ {
					t.Errorf("head writing 8192 bytes: %v, want killed by SIGXFSZ", err)
				}
				if fi, err := os.Stat(filepath.Join(dir, "head")); err != nil || fi.Size() != 4096 {
					t.Errorf("head wrote %v bytes (%v), want 4096", fi.Size(), err)
				}
			})
		})
	}
}

func TestLimitOpenFiles(t *testing.T) {
	requireSandbox(t) // the limits are applied with ApplySelf, which applies nothing without the mechanism
	for _, who := range users(t) {
		t.Run(who, func(t *testing.T) {
			childtest.Run(t, func(t *testing.T) {
				if who == "nobody" {
					becomeNobody(t)
				}
				if err := sandbox.New().ApplySelf(sandbox.Config{Limits: sandbox.Limits{OpenFiles: 16}}); err != nil {
					t.Fatal(err)
				}
				var fds []int
				defer func() {
					for _, fd := range fds {
						unix.Close(fd)
					}
				}()
				for range 64 {
					fd, err := unix.Open("/dev/null", unix.O_RDONLY|unix.O_CLOEXEC, 0)
					if err != nil {
						if err != unix.EMFILE {
							t.Fatalf("open: %v, want EMFILE", err)
						}
						if len(fds) == 0 {
							t.Fatal("not one descriptor could be opened")
						}
						return
					}
					if fd >= 16 {
						t.Fatalf("descriptor %d opened under a limit of 16", fd)
					}
					fds = append(fds, fd)
				}
				t.Fatalf("64 descriptors opened under a limit of 16")
			})
		})
	}
}

// nobodyTasks counts the tasks (threads included) of uid 65534, as
// RLIMIT_NPROC does.
func nobodyTasks() int { return tasksOf(65534) }

// tasksOf counts the tasks (threads included) whose real user ID is uid,
// as RLIMIT_NPROC does.
func tasksOf(uid int) int {
	n := 0
	procs, _ := filepath.Glob("/proc/[0-9]*/task/[0-9]*/status")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte("\nUid:\t"+strconv.Itoa(uid)+"\t")) {
			n++
		}
	}
	return n
}

// becomeUnusedUser makes this process (every thread) a user no task has
// now, with nobody's group, and returns its user ID: RLIMIT_NPROC then
// counts this process's tasks alone, where nobody's count moves with
// whatever else runs as nobody meanwhile (other packages' tests).
func becomeUnusedUser(t *testing.T) int {
	t.Helper()
	for uid := 61000; uid < 62000; uid++ {
		if tasksOf(uid) > 0 {
			continue
		}
		if err := syscall.Setgroups(nil); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Setgid(65534); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Setuid(uid); err != nil {
			t.Fatal(err)
		}
		return uid
	}
	t.Fatal("no user ID from 61000 to 61999 without a task")
	return 0
}

// As a user that is not root, a fork loop stops at Processes. RLIMIT_NPROC
// counts every task of the user, so the limit is set a margin above the
// tasks the user has now and the loop must stop within that margin; the
// user is one no other task has (becomeUnusedUser), so that nothing else
// changes that count meanwhile.
func TestLimitProcessesNobody(t *testing.T) {
	requireSandbox(t) // the limits are applied with ApplySelf, which applies nothing without the mechanism
	if os.Geteuid() != 0 {
		t.Skip("needs root to become nobody; root itself is exempt from RLIMIT_NPROC (the plan says so)")
	}
	childtest.Run(t, func(t *testing.T) {
		sh, err := exec.LookPath("sh")
		if err != nil {
			t.Skip("no sh")
		}
		uid := becomeUnusedUser(t)
		const margin = 12
		limit := int64(tasksOf(uid) + margin)
		cfg := sandbox.Config{AllowProcessSpawn: true, AllowedExecPaths: []string{sh}, Limits: sandbox.Limits{Processes: limit}}
		if p, _ := sandbox.PlanFor(cfg); !enforcedIn(p, sandbox.FeatureLimitProcesses, sandbox.ScopeApplySelf) {
			t.Errorf("the plan does not say RLIMIT_NPROC binds a user that is not root: %+v", p.Features)
		}
		// Files, not pipes: the started processes would hold a pipe open.
		outF, err := os.CreateTemp("", "nproc-out")
		if err != nil {
			t.Fatal(err)
		}
		defer os.Remove(outF.Name())
		if err := sandbox.New().ApplySelf(cfg); err != nil {
			t.Fatal(err)
		}
		// Each started process stops itself and stays until the group is
		// killed below (the kernel matrix's guests have no sleep(1)).
		cmd := exec.Command(sh, "-c", `i=0; while [ $i -lt 200 ]; do i=$((i+1)); `+sh+` -c 'kill -STOP $$' & echo started; done`)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Stdout, cmd.Stderr = outF, outF
		err = cmd.Start()
		if err == nil {
			err = cmd.Wait()
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // the processes it started
		}
		out := make([]byte, 64<<10)
		n, _ := outF.ReadAt(out, 0) // the sandbox forbids opening it again
		out = out[:n]
		started := strings.Count(string(out), "started")
		t.Logf("limit %d, sh started %d processes: %v", limit, started, err)
		if started >= margin || !strings.Contains(string(out), "fork") {
			t.Errorf("fork loop under RLIMIT_NPROC %d: %d started, output %q; want fewer than %d and a fork failure", limit, started, out, margin)
		}
	})
}

func enforcedIn(p sandbox.Plan, feature, scope string) bool {
	for _, f := range p.Features {
		if f.Feature == feature && f.Scope == scope {
			return f.Enforced
		}
	}
	return false
}

// TestLimitsHelperProcess is the helper the tests below start and expect
// to be ended by a limit; it does nothing in a normal run.
func TestLimitsHelperProcess(t *testing.T) {
	spec := os.Getenv(envLimitsHelper)
	if spec == "" {
		return
	}
	mode, who, _ := strings.Cut(spec, ",")
	if who == "nobody" {
		becomeNobody(t)
	}
	fail := func(v ...any) {
		os.Stderr.WriteString("helper: " + strings.TrimSpace(strings.Repeat("%v ", len(v))) + "\n")
		for _, x := range v {
			os.Stderr.WriteString(" " + toString(x))
		}
		os.Exit(3)
	}
	var cfg sandbox.Config
	switch mode {
	case "spin", "spin-sh":
		cfg.Limits.CPUTime = time.Second
		cfg.AllowedExecPaths = []string{"/bin/sh"}
	case "hog", "memfd":
		// Well above what the test binary's runtime maps for itself.
		cfg.Limits.MemoryBytes = 128 << 20
	}
	if err := sandbox.New().ApplySelf(cfg); err != nil {
		fail(err)
	}
	switch mode {
	case "spin":
		for x := 0; ; x++ {
			_ = x * x
		}
	case "spin-sh":
		err := syscall.Exec("/bin/sh", []string{"sh", "-c", "while :; do :; done"}, nil)
		fail(err)
	case "hog":
		var keep [][]byte
		for range 16 {
			b := make([]byte, 16<<20)
			for i := 0; i < len(b); i += 4096 {
				b[i] = 1
			}
			keep = append(keep, b)
		}
		os.Stdout.WriteString("allocated " + strconv.Itoa(len(keep)*16) + " MiB\n")
	case "memfd":
		fd, err := unix.MemfdCreate("hog", unix.MFD_CLOEXEC)
		if err != nil {
			fail(err)
		}
		chunk := bytes.Repeat([]byte{1}, 1<<20)
		for range 256 {
			if _, err := unix.Write(fd, chunk); err != nil {
				fail(err)
			}
		}
		os.Stdout.WriteString("memfd 256 MiB\n")
	}
	os.Exit(0)
}

func toString(x any) string {
	if e, ok := x.(error); ok {
		return e.Error()
	}
	return "?"
}

// limitsHelper runs the helper in mode as who and returns its state and
// output.
func limitsHelper(t *testing.T, mode, who string) (*os.ProcessState, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestLimitsHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), envLimitsHelper+"="+mode+","+who)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("helper %s still running after 60 s: %s", mode, out.String())
	}
	return cmd.ProcessState, out.String()
}

func signalOf(ps *os.ProcessState) syscall.Signal {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return ws.Signal()
	}
	return 0
}

func TestLimitCPUTime(t *testing.T) {
	requireSandbox(t) // the limits are applied with ApplySelf, which applies nothing without the mechanism
	if _, err := os.Stat("/bin/sh"); err != nil {
		t.Skip("no /bin/sh")
	}
	for _, who := range users(t) {
		t.Run(who, func(t *testing.T) {
			// Go ignores SIGXCPU: the hard limit a second later kills it.
			ps, out := limitsHelper(t, "spin", who)
			cpu := ps.UserTime() + ps.SystemTime()
			// The upper bound is loose: the kernel checks process CPU
			// timers on ticks, which an emulated guest of the kernel
			// matrix delivers late (up to 5.4 s seen there). A kill by
			// limitsHelper's own timeout fails the test instead.
			if signalOf(ps) != syscall.SIGKILL || cpu < 1500*time.Millisecond || cpu > 20*time.Second {
				t.Errorf("Go spinner under a 1 s limit: %v after %v of CPU time; want SIGKILL after 2 s: %s", ps, cpu, out)
			}
			// A shell does not: SIGXCPU ends it at the soft limit. (The
			// kernel checks the limit against CPU time sampled on ticks;
			// rusage is scaled from the exact run time: on a loaded
			// machine they differ by up to a few hundred milliseconds.)
			ps, out = limitsHelper(t, "spin-sh", who)
			cpu = ps.UserTime() + ps.SystemTime()
			if signalOf(ps) != syscall.SIGXCPU || cpu < 500*time.Millisecond || cpu > 20*time.Second {
				t.Errorf("shell spinner under a 1 s limit: %v after %v of CPU time; want SIGXCPU after 1 s: %s", ps, cpu, out)
			}
		})
	}
}

// MemoryBytes under ApplySelf is RLIMIT_DATA: it stops a heap that grows
// past it, and, as the plan says, not memory held through a memfd.
func TestLimitMemory(t *testing.T) {
	requireSandbox(t) // the limits are applied with ApplySelf, which applies nothing without the mechanism
	for _, who := range users(t) {
		t.Run(who, func(t *testing.T) {
			ps, out := limitsHelper(t, "hog", who)
			// How the Go runtime dies when mmap fails varies ("out of
			// memory", "cannot allocate memory", a fault in the collector):
			// what matters is that the allocation never completed, and
			// that the helper got as far as trying it.
			if ps.Success() || strings.Contains(out, "allocated") || strings.Contains(out, "helper:") {
				t.Errorf("256 MiB heap under a 128 MiB limit: %v: %.400s", ps, out)
			}
			if raceEnabled {
				t.Log("memfd half not run: under the race detector, its runtime's own allocations count against RLIMIT_DATA and end any helper")
				return
			}
			ps, out = limitsHelper(t, "memfd", who)
			if !ps.Success() || !strings.Contains(out, "memfd 256 MiB") {
				t.Errorf("memfd under RLIMIT_DATA: %v: %.400s", ps, out)
			} else {
				t.Log("as reported: 256 MiB through a memfd is not bounded by RLIMIT_DATA 128 MiB")
			}
		})
	}
}
