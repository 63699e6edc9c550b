//go:build linux

package sandbox

// Fault injection for the checks that do not depend on the Config: a
// process with no seccomp filter, a filter that denies nothing, a filter
// without no_new_privs, and capabilities kept, dropped, dropped on one
// thread only, or dropped except for the bounding set (which no_new_privs
// makes inert).

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
	"kernel.org/pub/linux/libs/security/libcap/psx"

	"github.com/openparallax/sandbox/internal/childtest"
	"github.com/openparallax/sandbox/internal/seccomp"
)

// probeError is the Error text of the named probe.
func probeError(r CanaryResult, name string) string {
	for _, p := range r.Probes {
		if p.Name == name {
			return p.Error
		}
	}
	return ""
}

// The case: spawn, UDP and unix sockets granted, Landlock applied,
// no seccomp filter at all. Before the seccomp-only probes every applicable
// probe was blocked (Landlock answers files, exec, TCP, scoping) and the
// result was verified.
func TestCanaryNoSeccompWithGrants(t *testing.T) {
	cfg, _ := canaryFixture(t)
	cfg.AllowProcessSpawn, cfg.AllowUDP, cfg.AllowUnixSockets = true, true, true
	rc, err := resolve(cfg)
	if err != nil {
		t.Fatal(err)
	}
	pol := buildLinuxPolicy(rc, kernel().abi, "/proc/"+strconv.Itoa(os.Getpid()), nil)
	childtest.Run(t, func(t *testing.T) {
		if err := applyLandlock(pol); err != nil {
			t.Fatal(err)
		}
		r := VerifyCanaryFor(cfg)
		for _, name := range []string{"process_spawn", "udp"} {
			wantProbe(t, r, name, ProbeSkipped)
		}
		for _, name := range []string{"file_read", "file_write", "network", "exec", "signal"} {
			wantProbe(t, r, name, ProbeBlocked)
		}
		wantProbe(t, r, "syscall_filter", ProbeFailed)
		wantProbe(t, r, "threads", ProbeFailed)
		if e := probeError(r, "syscall_filter"); !strings.Contains(e, "no such process") {
			t.Errorf("syscall_filter without a filter: %q, want ptrace's ESRCH", e)
		}
		if r.Verified {
			t.Errorf("a process without a seccomp filter verified: %s", r.Summary)
		}
	})
}

// A seccomp filter that allows everything: the threads check passes (a
// filter is in place, on every thread, with no_new_privs), the calls only
// the sandbox's filter denies are not denied.
func TestCanaryFilterThatDeniesNothing(t *testing.T) {
	cfg, pol := canaryFixture(t)
	childtest.Run(t, func(t *testing.T) {
		if err := applyLandlock(pol); err != nil {
			t.Fatal(err)
		}
		raw, err := bpf.Assemble([]bpf.Instruction{bpf.RetConstant{Val: unix.SECCOMP_RET_ALLOW}})
		if err != nil {
			t.Fatal(err)
		}
		if err := seccomp.Load(seccomp.Filter{Name: "allow-all", Program: raw}); err != nil {
			t.Fatal(err)
		}
		r := VerifyCanaryFor(cfg)
		wantProbe(t, r, "threads", ProbeBlocked)
		wantProbe(t, r, "syscall_filter", ProbeFailed)
		wantProbe(t, r, "process_spawn", ProbeFailed)
		if r.Verified {
			t.Errorf("an allow-all filter verified: %s", r.Summary)
		}
	})
}

// The sandbox's filter, loaded on every thread by a root process without
// no_new_privs (CAP_SYS_ADMIN permits it): every call-based probe passes,
// the threads check does not.
func TestCanaryFilterWithoutNoNewPrivs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("loading a seccomp filter without no_new_privs needs CAP_SYS_ADMIN (run as root)")
	}
	cfg, pol := canaryFixture(t)
	childtest.Run(t, func(t *testing.T) {
		f, err := seccomp.Build(pol.Seccomp)
		if err != nil {
			t.Fatal(err)
		}
		prog := make([]unix.SockFilter, len(f.Program))
		for i, ins := range f.Program {
			prog[i] = unix.SockFilter{Code: ins.Op, Jt: ins.Jt, Jf: ins.Jf, K: ins.K}
		}
		fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
		runtime.LockOSThread()
		_, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog)))
		runtime.UnlockOSThread()
		if e != 0 {
			t.Fatalf("seccomp without no_new_privs: %v", e)
		}
		r := VerifyCanaryFor(cfg)
		wantProbe(t, r, "syscall_filter", ProbeBlocked)
		wantProbe(t, r, "threads", ProbeFailed)
		if e := probeError(r, "threads"); !strings.Contains(e, "no_new_privs") {
			t.Errorf("threads: %q, want it to name no_new_privs", e)
		}
		if r.Verified {
			t.Errorf("a filter without no_new_privs verified: %s", r.Summary)
		}
	})
}

// capLastCap is the highest capability this kernel knows.
func capLastCap(t *testing.T) int {
	b, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// dropBounding empties the bounding set of every thread.
func dropBounding(t *testing.T) {
	for c := 0; c <= capLastCap(t); c++ {
		if _, _, e := psx.Syscall3(unix.SYS_PRCTL, unix.PR_CAPBSET_DROP, uintptr(c), 0); e != 0 {
			t.Fatalf("PR_CAPBSET_DROP %d: %v", c, e)
		}
	}
}

// clearCaps empties the effective, permitted and inheritable sets (and so
// the ambient set) of every thread, or of the calling thread only.
func clearCaps(t *testing.T, allThreads bool) {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	var e syscall.Errno
	if allThreads {
		_, _, e = psx.Syscall3(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0)
	} else {
		_, _, e = unix.RawSyscall(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0)
	}
	runtime.KeepAlive(&hdr)
	runtime.KeepAlive(&data)
	if e != 0 {
		t.Fatalf("capset: %v", e)
	}
}

// The capability check, with the rest of the sandbox in place (Landlock and
// the seccomp filter, applied by the test helpers, which drop nothing).
// nobody holds nothing and had nothing to drop: skipped, still verified.
func TestCanaryCapabilities(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: a process that holds capabilities, and that can drop them or become nobody")
	}
	cases := []struct {
		name     string
		setup    func(t *testing.T)
		want     string
		errorHas string
	}{
		{"kept", func(*testing.T) {}, ProbeFailed, "CapEff"},
		{"dropped", func(t *testing.T) { dropBounding(t); clearCaps(t, true) }, ProbeBlocked, "bounding set empty"},
		{"dropped on one thread only", func(t *testing.T) {
			dropBounding(t)
			// A thread that exists before the drop and stays: the others
			// keep what they had.
			ready := make(chan bool)
			go func() { runtime.LockOSThread(); ready <- true; select {} }()
			<-ready
			runtime.LockOSThread()
			clearCaps(t, false)
		}, ProbeFailed, "holds capabilities"},
		// What ApplySelf leaves: under no_new_privs (set by loadSeccomp)
		// the bounding set grants nothing, and is reported.
		{"bounding set kept by root", func(t *testing.T) { clearCaps(t, true) }, ProbeBlocked, "grants nothing under no_new_privs"},
		{"nobody", func(t *testing.T) {
			for _, err := range []error{syscall.Setgroups(nil), syscall.Setgid(65534), syscall.Setuid(65534)} {
				if err != nil {
					t.Fatal(err)
				}
			}
		}, ProbeSkipped, "not root and holding no capability"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg, pol := canaryFixture(t)
			childtest.Run(t, func(t *testing.T) {
				c.setup(t)
				if err := applyLandlock(pol); err != nil {
					t.Fatal(err)
				}
				loadSeccomp(t, pol.Seccomp)
				r := VerifyCanaryFor(cfg)
				wantProbe(t, r, "capabilities", c.want)
				wantProbe(t, r, "threads", ProbeBlocked)
				wantProbe(t, r, "syscall_filter", ProbeBlocked)
				if e := probeError(r, "capabilities"); !strings.Contains(e, c.errorHas) {
					t.Errorf("capabilities: %q, want it to mention %q", e, c.errorHas)
				}
				if r.Verified != (c.want != ProbeFailed) {
					t.Errorf("verified=%v: %s", r.Verified, r.Summary)
				}
			})
		})
	}
}
