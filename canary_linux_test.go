//go:build linux

package sandbox

// Fault injection: build partial sandboxes in re-executed children and check
// that the canary notices every gap. A canary that reports "sandboxed" for a
// broken sandbox is the failure this file exists to catch.

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/landlock-lsm/go-landlock/landlock"
	"github.com/openparallax/sandbox/internal/childtest"
	"github.com/openparallax/sandbox/internal/seccomp"
)

func probeStatus(r CanaryResult, name string) string {
	for _, p := range r.Probes {
		if p.Name == name {
			return p.Status
		}
	}
	return "(missing)"
}

func wantProbe(t *testing.T, r CanaryResult, name, status string) {
	t.Helper()
	if got := probeStatus(r, name); got != status {
		t.Errorf("probe %s = %s, want %s\nresult: %s", name, got, status, r.Summary)
		for _, p := range r.Probes {
			t.Logf("  %-14s %-8s %s %s", p.Name, p.Status, p.Target, p.Error)
		}
	}
}

// canaryFixture is a workspace the (possibly unprivileged) child may write.
func canaryFixture(t *testing.T) (Config, linuxPolicy) {
	ws := childtest.Dir(t)
	if !childtest.InChild(t) {
		os.Chmod(ws, 0o777)
		os.Chmod(filepath.Dir(ws), 0o755) // t.TempDir's parent is 0700: let nobody through
	}
	cfg := Config{AllowedWritePaths: []string{ws}, AllowedTCPConnect: []string{"*:8080"}}
	rc, err := resolve(cfg)
	if err != nil {
		t.Fatal(err)
	}
	k := kernel()
	if k.abi < 6 || !k.seccomp {
		t.Skipf("fault injection expects Landlock ABI 6+ and seccomp; this kernel has ABI %d, seccomp %v", k.abi, k.seccomp)
	}
	return cfg, buildLinuxPolicy(rc, k.abi, "/proc/"+strconv.Itoa(os.Getpid()), nil)
}

func loadSeccomp(t *testing.T, p seccomp.Policy) {
	t.Helper()
	f, err := seccomp.Build(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := seccomp.Load(f); err != nil {
		t.Fatal(err)
	}
}

func TestCanaryFullSandbox(t *testing.T) {
	cfg, _ := canaryFixture(t)
	childtest.Run(t, func(t *testing.T) {
		if err := New().ApplySelf(cfg); err != nil {
			t.Fatal(err)
		}
		r := VerifyCanaryFor(cfg)
		if !r.Verified || r.Status != CanarySandboxed || r.Failed() != 0 {
			t.Errorf("full sandbox: %s", r.Summary)
		}
		for _, name := range []string{"file_read", "file_write", "network", "process_spawn", "exec", "udp", "unix_abstract", "signal", "syscall_filter", "threads"} {
			wantProbe(t, r, name, ProbeBlocked)
		}
		wantProbe(t, r, "control_write", ProbeAllowed)
		// Until ApplySelf drops capabilities (root), this fails as root.
		wantProbe(t, r, "capabilities", map[bool]string{true: ProbeBlocked, false: ProbeSkipped}[os.Geteuid() == 0])
	})
}

func TestCanaryNothingApplied(t *testing.T) {
	cfg, _ := canaryFixture(t)
	childtest.Run(t, func(t *testing.T) {
		r := VerifyCanaryFor(cfg)
		if r.Verified || r.Status != CanaryUnsandboxed || r.Blocked() != 0 {
			t.Errorf("nothing applied: %s", r.Summary)
		}
	})
}

func TestCanaryLandlockOnly(t *testing.T) {
	cfg, pol := canaryFixture(t)
	childtest.Run(t, func(t *testing.T) {
		if err := applyLandlock(pol); err != nil {
			t.Fatal(err)
		}
		r := VerifyCanaryFor(cfg)
		wantProbe(t, r, "file_read", ProbeBlocked)
		wantProbe(t, r, "process_spawn", ProbeFailed)
		wantProbe(t, r, "udp", ProbeFailed)
		if r.Verified || r.Status != CanaryPartial {
			t.Errorf("Landlock only: %s", r.Summary)
		}
	})
}

func TestCanarySeccompOnly(t *testing.T) {
	cfg, pol := canaryFixture(t)
	childtest.Run(t, func(t *testing.T) {
		loadSeccomp(t, pol.Seccomp)
		r := VerifyCanaryFor(cfg)
		wantProbe(t, r, "file_read", ProbeFailed)
		wantProbe(t, r, "file_write", ProbeFailed)
		wantProbe(t, r, "process_spawn", ProbeBlocked)
		if r.Verified || r.Status != CanaryPartial {
			t.Errorf("seccomp only: %s", r.Summary)
		}
	})
}

func TestCanaryLandlockWithoutNetworkRules(t *testing.T) {
	cfg, pol := canaryFixture(t)
	childtest.Run(t, func(t *testing.T) {
		pol.HandledNet, pol.Connect, pol.Bind = 0, nil, nil
		if err := applyLandlock(pol); err != nil {
			t.Fatal(err)
		}
		loadSeccomp(t, pol.Seccomp) // grants TCP sockets: cfg grants a port
		r := VerifyCanaryFor(cfg)
		wantProbe(t, r, "network", ProbeFailed)
		wantProbe(t, r, "file_read", ProbeBlocked)
		if r.Verified {
			t.Errorf("Landlock without network rules verified: %s", r.Summary)
		}
	})
}

// seccomp loaded on one thread only, while another thread exists: the
// canary must notice from the other thread.
func TestCanarySeccompWithoutTSYNC(t *testing.T) {
	cfg, pol := canaryFixture(t)
	childtest.Run(t, func(t *testing.T) {
		ready, hold := make(chan bool), make(chan bool)
		go func() {
			runtime.LockOSThread()
			ready <- true
			<-hold
		}()
		<-ready
		defer close(hold)
		if err := applyLandlock(pol); err != nil {
			t.Fatal(err)
		}
		f, err := seccomp.Build(pol.Seccomp)
		if err != nil {
			t.Fatal(err)
		}
		runtime.LockOSThread()
		if err := seccomp.LoadCallingThreadOnly(f); err != nil {
			t.Fatal(err)
		}
		r := VerifyCanaryFor(cfg)
		wantProbe(t, r, "process_spawn", ProbeFailed)
		if r.Verified {
			t.Errorf("seccomp without TSYNC verified: %s", r.Summary)
		}
	})
}

// A sandbox that blocks what it must allow is broken: a failing positive
// control fails the result.
func TestCanaryPositiveControlFails(t *testing.T) {
	cfg, pol := canaryFixture(t)
	childtest.Run(t, func(t *testing.T) {
		pol.Paths = pol.Paths[:0:0] // forget every grant, the workspace included
		if err := applyLinux(pol); err != nil {
			t.Fatal(err)
		}
		r := VerifyCanaryFor(cfg)
		wantProbe(t, r, "control_write", ProbeFailed)
		if r.Verified {
			t.Errorf("a sandbox denying the workspace verified: %s", r.Summary)
		}
	})
}

// As an unprivileged user, file_read must be blocked by the sandbox, not
// counted blocked because ordinary permissions forbid the target; without
// the sandbox the same probes fail.
func TestCanaryUnprivileged(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to drop to nobody; already unprivileged runs are covered by the other canary tests")
	}
	for _, sandboxed := range []bool{false, true} {
		t.Run("sandboxed="+strconv.FormatBool(sandboxed), func(t *testing.T) {
			cfg, _ := canaryFixture(t)
			childtest.Run(t, func(t *testing.T) {
				if err := syscall.Setgroups(nil); err != nil {
					t.Fatal(err)
				}
				if err := syscall.Setgid(65534); err != nil {
					t.Fatal(err)
				}
				if err := syscall.Setuid(65534); err != nil {
					t.Fatal(err)
				}
				// The chosen target must be one DAC lets nobody read.
				shadow := filepath.Join(cfg.AllowedWritePaths[0], "..", "rootonly")
				rc, _ := resolve(Config{})
				if p, ok := target(rc, 4, shadow, "/etc/shadow", "/etc/passwd"); !ok || p != "/etc/passwd" {
					t.Errorf("target picked %q (%v), want /etc/passwd: DAC-forbidden files must be passed over", p, ok)
				}
				if sandboxed {
					if err := New().ApplySelf(cfg); err != nil {
						t.Fatal(err)
					}
				}
				r := VerifyCanaryFor(cfg)
				want := map[bool]string{true: ProbeBlocked, false: ProbeFailed}[sandboxed]
				wantProbe(t, r, "file_read", want)
				wantProbe(t, r, "file_write", want)
				wantProbe(t, r, "exec", want)
				if r.Verified != sandboxed {
					t.Errorf("verified=%v as nobody: %s", r.Verified, r.Summary)
				}
			})
		})
	}
}

// A writer killed with SIGKILL in the middle of writing leaves the old
// result or the new one, never part of one.
func TestStatusFileSurvivesSIGKILL(t *testing.T) {
	ws := childtest.Dir(t)
	if childtest.InChild(t) {
		big := make([]ProbeResult, 6000) // ~700 KB: several write(2)s, under the 1 MiB read cap
		for i := range big {
			big[i] = ProbeResult{Name: "p" + strconv.Itoa(i), Status: ProbeBlocked, Error: strings.Repeat("e", 64)}
		}
		r := NewCanaryResult(ModeLandlock, big)
		os.Stdout.WriteString("WRITING\n")
		for {
			if err := WriteCanaryResult(ws, r); err != nil {
				os.Stdout.WriteString("ERR " + err.Error() + "\n")
				os.Exit(1)
			}
		}
	}
	first := NewCanaryResult(ModeLandlock, []ProbeResult{{Name: "old", Status: ProbeBlocked}})
	if err := WriteCanaryResult(ws, first); err != nil {
		t.Fatal(err)
	}
	for i := range 15 {
		cmd := exec.Command(os.Args[0], "-test.run="+childtest.Pattern(t.Name()))
		cmd.Env = append(os.Environ(), "SANDBOX_CHILDTEST="+t.Name(), "SANDBOX_CHILDTEST_V1="+ws)
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 8)
		out.Read(buf)
		time.Sleep(time.Duration(1+i*3) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		r := ReadCanaryResult(ws)
		if r.Status != CanarySandboxed {
			t.Fatalf("after SIGKILL #%d the reader saw %s: %s", i, r.Status, r.Summary)
		}
	}
}

func FuzzDecodeCanaryResult(f *testing.F) {
	f.Add([]byte(`{"verified":true,"status":"sandboxed","probes":[{"name":"a","status":"blocked"}]}`))
	f.Add([]byte(`{"verified":false,"status":"partial","probes":[{"name":"a","status":"blocked"},{"name":"b","status":"failed"}]}`))
	f.Add([]byte(`{"probes":null}`))
	f.Add([]byte(`{"timestamp":"not a time"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := decodeCanaryResult(data)
		if err != nil {
			return
		}
		if r.Verified != (r.Status == CanarySandboxed) || r.Status != rollup(r.Probes) {
			t.Fatalf("accepted an inconsistent result: %+v", r)
		}
	})
}

func BenchmarkVerifyCanary(b *testing.B) {
	// Unsandboxed: every probe goes all the way (the fork probe forks and
	// reaps), so this is the slow case; sandboxed runs are faster.
	cfg := Config{AllowedWritePaths: []string{b.TempDir()}}
	for b.Loop() {
		VerifyCanaryFor(cfg)
	}
}

// Probes leave no files, sockets or processes behind, sandboxed or not (an
// unsandboxed run is the one where every probe's operation succeeds).
func TestCanaryLeavesNothingBehind(t *testing.T) {
	for _, sandboxed := range []bool{false, true} {
		t.Run("sandboxed="+strconv.FormatBool(sandboxed), func(t *testing.T) {
			cfg, _ := canaryFixture(t)
			childtest.Run(t, func(t *testing.T) {
				fds := func() int { e, _ := os.ReadDir("/proc/self/fd"); return len(e) }
				before := fds()
				if sandboxed {
					if err := New().ApplySelf(cfg); err != nil {
						t.Fatal(err)
					}
				}
				r := VerifyCanaryFor(cfg)
				if after := fds(); after != before {
					t.Errorf("open fds %d before, %d after the canary", before, after)
				}
				for _, dir := range append([]string{"/tmp", "/var/tmp", "/dev/shm"}, cfg.AllowedWritePaths...) {
					left, _ := filepath.Glob(filepath.Join(dir, ".sandbox-canary-"+strconv.Itoa(os.Getpid())+"-*"))
					if len(left) > 0 {
						t.Errorf("files left behind: %v", left)
					}
				}
				var ws syscall.WaitStatus
				if pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil); err != syscall.ECHILD {
					t.Errorf("a child process is left behind (wait4: pid %d, %v)", pid, err)
				}
				if !sandboxed && r.Failed() == 0 {
					t.Errorf("unsandboxed run did not exercise the probes: %s", r.Summary)
				}
			})
		})
	}
}

// applyLandlock applies only the Landlock part of pol, to every thread,
// through go-landlock's own Restrict (which sets no_new_privs itself): the
// fault injection's "Landlock without seccomp".
func applyLandlock(pol linuxPolicy) error {
	llCfg, err := landlock.NewConfig(pol.HandledFS, pol.HandledNet, pol.Scoped)
	if err != nil {
		return fmt.Errorf("sandbox: landlock config: %w", err)
	}
	rules := make([]landlock.Rule, 0, len(pol.Paths)+len(pol.Connect)+len(pol.Bind))
	for _, r := range pol.Paths {
		rules = append(rules, landlock.PathAccess(r.Access, r.Path))
	}
	if pol.HandledNet != 0 {
		for _, port := range pol.Connect {
			rules = append(rules, landlock.ConnectTCP(port))
		}
		for _, port := range pol.Bind {
			rules = append(rules, landlock.BindTCP(port))
		}
	}
	if err := llCfg.Restrict(rules...); err != nil {
		return fmt.Errorf("sandbox: landlock: %w", err)
	}
	return nil
}

// VerifyCanary() after ApplySelf(cfg) verifies against cfg: with port 1
// granted, the canary for an empty Config would probe port 1 and report
// the network probe failed; the one for cfg picks another port, and checks
// cfg's write path with its positive control.
func TestVerifyCanaryKnowsAppliedConfig(t *testing.T) {
	cfg, _ := canaryFixture(t)
	cfg.AllowedTCPConnect = []string{"*:1"}
	childtest.Run(t, func(t *testing.T) {
		if r := VerifyCanary(); probeStatus(r, "control_write") != "(missing)" {
			t.Fatalf("before ApplySelf VerifyCanary used a Config: %s", r.Summary)
		}
		if err := New().ApplySelf(cfg); err != nil {
			t.Fatal(err)
		}
		cfg.AllowedWritePaths[0] = "/changed-by-the-caller-later"
		empty := VerifyCanaryFor(Config{})
		wantProbe(t, empty, "network", ProbeFailed) // the problem: port 1 is granted
		r := VerifyCanary()
		wantProbe(t, r, "network", ProbeBlocked)
		wantProbe(t, r, "control_write", ProbeAllowed)
		for _, p := range r.Probes {
			if p.Name == "network" && p.Target == "127.0.0.1:1" {
				t.Errorf("VerifyCanary probed the granted port: %+v", p)
			}
		}
	})
}
