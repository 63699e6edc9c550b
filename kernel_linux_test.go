//go:build linux

package sandbox_test

// The kernel matrix. These tests run unchanged on the build host and, through
// .ci/kernels.sh, under other kernels: Debian's 6.1 (Landlock ABI 2), its
// 6.12 (ABI 6) and 6.1 booted without Landlock in lsm=. Every expectation
// follows the kernel the test runs on: the Landlock ABI is read from the
// kernel itself (landlock_create_ruleset) and from sandbox.Probe and
// sandbox.PlanFor, never assumed. A property that needs a higher ABI, a
// program or a file this machine lacks is skipped with the reason printed;
// where a feature is reported as not enforced, the test checks that the
// report is true, so a degraded kernel proves the degrade rules rather than
// merely tolerating them.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
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

	"github.com/openparallax/sandbox"
	"github.com/openparallax/sandbox/internal/childtest"
	"github.com/openparallax/sandbox/internal/rawsys"
)

// landlockSyscallABI asks the kernel for its Landlock ABI without going
// through the library: the independent reading the library is checked
// against.
func landlockSyscallABI() (int, syscall.Errno) {
	v, _, e := syscall.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if e != 0 {
		return 0, e
	}
	return int(v), 0
}

func kernelRelease() string {
	var u unix.Utsname
	if err := unix.Uname(&u); err != nil {
		return "unknown"
	}
	return unix.ByteSliceToString(u.Release[:])
}

func planFeature(p sandbox.Plan, name string) (sandbox.Enforcement, bool) {
	for _, f := range p.Features {
		if f.Feature == name {
			return f, true
		}
	}
	return sandbox.Enforcement{}, false
}

// The degrade rules: the Landlock ABI from which each feature of a Config
// that asks for it is enforced (Documentation/userspace-api/landlock.rst).
// 1 means wherever the sandbox is available at all (Landlock filesystem
// rules or seccomp). Keyed by the Config shape, since what a feature needs
// depends on what is granted: with no TCP granted, seccomp refuses IP
// sockets on every ABI; with TCP granted, only Landlock ABI 4 restricts
// ports.
var (
	// grantsAll: a workspace, TCP connect and bind, AF_UNIX sockets.
	needGrantsAll = map[string]int{
		sandbox.FeatureFilesystem:  1,
		sandbox.FeatureTruncate:    3,
		sandbox.FeatureIoctlDev:    5,
		sandbox.FeatureExec:        1,
		sandbox.FeatureTCPConnect:  4,
		sandbox.FeatureTCPBind:     4,
		sandbox.FeatureUDP:         1,
		sandbox.FeatureUnixSockets: 9,
		sandbox.FeatureScopeUnix:   6,
		sandbox.FeatureScopeSignal: 6,
		sandbox.FeatureSpawn:       1,
		sandbox.FeatureSyscalls:    1,
	}
	// grantsNothing: the zero Config.
	needGrantsNothing = map[string]int{
		sandbox.FeatureFilesystem:  1,
		sandbox.FeatureTruncate:    3,
		sandbox.FeatureIoctlDev:    5,
		sandbox.FeatureExec:        1,
		sandbox.FeatureTCPConnect:  1, // seccomp: no IP sockets at all
		sandbox.FeatureTCPBind:     1,
		sandbox.FeatureUDP:         1,
		sandbox.FeatureUnixSockets: 1, // seccomp: no AF_UNIX sockets
		sandbox.FeatureScopeUnix:   1,
		sandbox.FeatureScopeSignal: 6,
		sandbox.FeatureSpawn:       1,
		sandbox.FeatureSyscalls:    1,
	}
)

// TestKernelProbe checks Probe against the kernel's own answer.
func TestKernelProbe(t *testing.T) {
	st := sandbox.Probe()
	raw, errno := landlockSyscallABI()
	t.Logf("kernel %s: landlock_create_ruleset(VERSION) = %d, errno %d (%v); Probe: %+v", kernelRelease(), raw, int(errno), errno, st)
	if st.Mode != sandbox.ModeLandlock {
		t.Errorf("Mode = %q, want %q", st.Mode, sandbox.ModeLandlock)
	}
	if got := sandbox.New().Available(); got != st.Active {
		t.Errorf("Available() = %v, Probe().Active = %v", got, st.Active)
	}
	if errno != 0 {
		if st.Active || st.Version != 0 || st.Filesystem || st.Network {
			t.Errorf("the kernel has no Landlock (%v), Probe says %+v", errno, st)
		}
		switch errno {
		case syscall.EOPNOTSUPP: // built in, not in lsm=
			if !strings.Contains(st.Reason, "lsm=") {
				t.Errorf("Landlock is built in but off; Reason must point at lsm=: %q", st.Reason)
			}
		case syscall.ENOSYS:
			if !strings.Contains(st.Reason, "CONFIG_SECURITY_LANDLOCK") {
				t.Errorf("Landlock is not built in; Reason must say so: %q", st.Reason)
			}
		default:
			if st.Reason == "" {
				t.Error("inactive without a reason")
			}
		}
		return
	}
	switch {
	case st.Version == raw:
	case raw >= 6 && st.Version == 5:
		t.Logf("kernel ABI %d lacks the scoped-signal erratum fix: the library uses ABI 5, as go-landlock does", raw)
	default:
		t.Errorf("Probe().Version = %d, the kernel says ABI %d", st.Version, raw)
	}
	if !st.Active {
		// Only a kernel without seccomp filters could do this.
		if !strings.Contains(st.Reason, "seccomp") {
			t.Errorf("Landlock ABI %d present but inactive, reason %q", raw, st.Reason)
		}
		return
	}
	if !st.Filesystem {
		t.Error("active without filesystem rules")
	}
	if want := st.Version >= 4; st.Network != want {
		t.Errorf("Network = %v on ABI %d, want %v: TCP ports are restricted from ABI 4", st.Network, st.Version, want)
	}
	if st.Version < 4 && !(strings.Contains(st.Reason, sandbox.FeatureTCPConnect) && strings.Contains(st.Reason, "Landlock ABI 4")) {
		t.Errorf("ABI %d: Reason must say TCP is not restricted and that it needs ABI 4: %q", st.Version, st.Reason)
	}
	if st.Version < 6 && !(strings.Contains(st.Reason, sandbox.FeatureScopeSignal) && strings.Contains(st.Reason, "Landlock ABI 6")) {
		t.Errorf("ABI %d: Reason must say signals are not scoped and that it needs ABI 6: %q", st.Version, st.Reason)
	}
	if st.Version >= 6 && strings.Contains(st.Reason, sandbox.FeatureScopeSignal) {
		t.Errorf("ABI %d: Reason reports signal scoping as missing: %q", st.Version, st.Reason)
	}
}

// TestKernelPlanFollowsABI checks PlanFor's per-feature report on this
// kernel against the degrade rules.
func TestKernelPlanFollowsABI(t *testing.T) {
	ws := t.TempDir()
	st := sandbox.Probe()
	for _, c := range []struct {
		name string
		cfg  sandbox.Config
		need map[string]int
	}{
		{"grants everything", sandbox.Config{
			AllowedWritePaths: []string{ws},
			AllowedTCPConnect: []string{"*:443"},
			AllowedTCPBind:    []uint16{8080},
			AllowUnixSockets:  true,
		}, needGrantsAll},
		{"grants nothing", sandbox.Config{}, needGrantsNothing},
	} {
		t.Run(c.name, func(t *testing.T) {
			plan, err := sandbox.PlanFor(c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			if plan.Version != st.Version || plan.Available != st.Active {
				t.Errorf("plan says ABI %d available %v, Probe says ABI %d active %v", plan.Version, plan.Available, st.Version, st.Active)
			}
			if !plan.Available {
				if plan.Reason == "" {
					t.Error("unavailable plan without a reason")
				}
				for _, f := range plan.Features {
					if f.Enforced || !strings.Contains(f.Detail, "unavailable") {
						t.Errorf("no sandbox here, but %s = %+v", f.Feature, f)
					}
				}
				t.Logf("unavailable on this kernel, every feature reported not enforced: %s", plan.Reason)
				return
			}
			for name, need := range c.need {
				f, ok := planFeature(plan, name)
				if !ok {
					t.Errorf("plan has no %s feature", name)
					continue
				}
				want := plan.Version >= need
				switch {
				case f.Enforced != want:
					t.Errorf("ABI %d: %s enforced = %v, want %v (from ABI %d): %+v", plan.Version, name, f.Enforced, want, need, f)
				case !want && !strings.Contains(f.Detail, fmt.Sprintf("Landlock ABI %d", need)):
					t.Errorf("ABI %d: %s not enforced, but the detail does not name ABI %d: %q", plan.Version, name, need, f.Detail)
				case !want && f.Hint == "":
					t.Errorf("ABI %d: %s not enforced, without a hint", plan.Version, name)
				}
			}
			for _, f := range plan.NotEnforced() {
				if _, known := c.need[f.Feature]; !known {
					t.Logf("also not enforced (not covered by this test): %s: %s", f.Feature, f.Detail)
				}
			}
			for _, f := range plan.Features {
				t.Logf("ABI %d %-20s enforced=%-5v %s", plan.Version, f.Feature, f.Enforced, f.Detail)
			}
		})
	}
}

// procSeccomp is the seccomp and no_new_privs state of the process.
type procSeccomp struct{ seccomp, filters, noNewPrivs string }

func readProcSeccomp(t *testing.T) procSeccomp {
	t.Helper()
	f, err := os.Open("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var s procSeccomp
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ":")
		switch k {
		case "Seccomp":
			s.seccomp = strings.TrimSpace(v)
		case "Seccomp_filters":
			s.filters = strings.TrimSpace(v)
		case "NoNewPrivs":
			s.noNewPrivs = strings.TrimSpace(v)
		}
	}
	return s
}

// nothingApplied checks, after a refused ApplySelf, that no layer of the
// sandbox was put in place: no new seccomp filter or no_new_privs, and
// what either layer would deny still works.
func nothingApplied(t *testing.T, what string, before procSeccomp, f fsFixture) {
	t.Helper()
	if after := readProcSeccomp(t); after != before {
		t.Errorf("%s: seccomp state changed from %+v to %+v", what, before, after)
	}
	_, err := os.ReadFile(f.secret)
	wantOK(t, what+": read outside the grants", err)
	if readable("/etc/passwd") {
		_, err = os.ReadFile("/etc/passwd")
		wantOK(t, what+": read /etc/passwd", err)
	}
	p := filepath.Join(f.outside, "after-refusal")
	wantOK(t, what+": create outside the grants", os.WriteFile(p, nil, 0o600))
	os.Remove(p)
	if e := rawsys.Fork(); e != 0 {
		t.Errorf("%s: fork: %v (must still work)", what, e)
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	wantOK(t, what+": UDP socket", err)
	if err == nil {
		unix.Close(fd)
	}
	if fileExists("/bin/true") {
		wantOK(t, what+": run /bin/true", exec.Command("/bin/true").Run())
	}
}

// readable: ordinary permissions let this process read path, before any
// sandbox; a check that relies on path is made only then.
func readable(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	f.Close()
	return true
}

func fileExists(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// TestKernelStrict: under Strict, ApplySelf refuses a Config with any part
// this kernel cannot enforce, names every such part, and applies nothing;
// where everything is enforced it applies.
func TestKernelStrict(t *testing.T) {
	f := newFSFixture(t)
	childtest.Run(t, func(t *testing.T) {
		cfg := f.cfg()
		cfg.AllowedTCPConnect = []string{"*:443"}
		cfg.AllowUnixSockets = true
		cfg.Strict = true
		plan, err := sandbox.PlanFor(cfg)
		if err != nil {
			t.Fatal(err)
		}
		// ApplySelf judges its own entries and the unscoped ones (a
		// WrapCommand/Run entry, e.g. file_metadata where the mount layer
		// is unavailable, is not its concern).
		missing := slices.DeleteFunc(plan.NotEnforced(), func(e sandbox.Enforcement) bool { return e.Scope == sandbox.ScopeCommand })
		before := readProcSeccomp(t)
		err = sandbox.New().ApplySelf(cfg)
		t.Logf("ABI %d, strict ApplySelf: %v", plan.Version, err)
		switch {
		case !plan.Available:
			if !errors.Is(err, sandbox.ErrUnavailable) {
				t.Fatalf("strict ApplySelf without the mechanism = %v, want ErrUnavailable", err)
			}
			nothingApplied(t, "refused strict ApplySelf", before, f)
			t.Skipf("strict mode needs the mechanism, absent here (%s); checked that ApplySelf refuses with ErrUnavailable and applies nothing", plan.Reason)
		case len(missing) > 0:
			if !errors.Is(err, sandbox.ErrNotEnforced) || errors.Is(err, sandbox.ErrUnavailable) || errors.Is(err, sandbox.ErrPartiallyApplied) {
				t.Fatalf("strict ApplySelf on ABI %d = %v, want ErrNotEnforced", plan.Version, err)
			}
			for _, m := range missing {
				if !strings.Contains(err.Error(), m.Feature) {
					t.Errorf("the strict error does not name %s (%s): %v", m.Feature, m.Detail, err)
				}
			}
			nothingApplied(t, "refused strict ApplySelf", before, f)
		default:
			if err != nil {
				t.Fatalf("every feature is enforced on ABI %d, yet strict ApplySelf = %v", plan.Version, err)
			}
			_, err = os.ReadFile(f.secret)
			wantErrno(t, "read outside after strict apply", err, syscall.EACCES)
		}
	})
}

// TestKernelBestEffortIsTruthful applies, without Strict, a Config that asks
// for everything, then checks each feature against what the kernel really
// does: an enforced feature denies with the exact errno, a feature reported
// as not enforced is really not enforced. TCP goes through Go's default
// paths: listeners (and here dialers too) that try Multipath TCP first,
// which Landlock does not restrict; seccomp must turn MPTCP away so that
// the plain TCP fallback, where the port rules apply, is what runs.
func TestKernelBestEffortIsTruthful(t *testing.T) {
	f := newFSFixture(t)
	childtest.Run(t, func(t *testing.T) {
		// Before the sandbox: listeners to connect to, ports to bind, an
		// abstract and a pathname unix socket. Go decides once, on first
		// use, whether MPTCP exists; do that before the sandbox, as a real
		// agent would.
		granted := listenDefault(t, "127.0.0.1:0")
		other := listenDefault(t, "127.0.0.1:0")
		t.Logf("before the sandbox, Go's default listener here is %s", protoName(listenerProto(t, granted)))
		gp := granted.Addr().(*net.TCPAddr).Port
		bindOK, bindOther := freePort(t), freePort(t)
		abstract := fmt.Sprintf("@sandbox-kernel-test-%d", os.Getpid())
		ua, err := net.Listen("unix", abstract)
		if err != nil {
			t.Fatal(err)
		}
		defer ua.Close()
		go acceptAll(ua)
		sockPath := filepath.Join(f.outside, "sock")
		up, err := net.Listen("unix", sockPath)
		if err != nil {
			t.Fatal(err)
		}
		defer up.Close()
		go acceptAll(up)

		cfg := f.cfg()
		cfg.AllowedTCPConnect = []string{"*:" + strconv.Itoa(gp)}
		cfg.AllowedTCPBind = []uint16{uint16(bindOK)}
		cfg.AllowUnixSockets = true
		plan, err := sandbox.PlanFor(cfg)
		if err != nil {
			t.Fatal(err)
		}
		apply(t, cfg)
		logged := map[string]bool{}
		enforced := func(name string) bool {
			fe, ok := planFeature(plan, name)
			if !ok {
				t.Fatalf("plan has no %s", name)
			}
			if !fe.Enforced && !logged[name] {
				logged[name] = true
				t.Logf("ABI %d: %s reported not enforced (%s); checking that it is not", plan.Version, name, fe.Detail)
			}
			return fe.Enforced
		}
		// check: when the feature is enforced, err must be one of deny;
		// otherwise the operation must have gone through.
		check := func(name, what string, err error, deny ...syscall.Errno) {
			t.Helper()
			if enforced(name) {
				wantErrno(t, what, err, deny...)
			} else if err != nil {
				t.Errorf("%s: %v; %s is reported not enforced, so the report is wrong", what, err, name)
			}
		}

		_, err = os.ReadFile(f.secret)
		check(sandbox.FeatureFilesystem, "read outside the grants", err, syscall.EACCES)
		check(sandbox.FeatureTruncate, "truncate outside the grants", os.Truncate(f.secret, 1), syscall.EACCES)
		check(sandbox.FeatureSpawn, "fork", errnoErr(rawsys.Fork()), syscall.EPERM)
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
		if err == nil {
			unix.Close(fd)
		}
		check(sandbox.FeatureUDP, "UDP socket", err, syscall.EPERM)

		// TCP connect, default dialer and MPTCP dialer.
		for _, mp := range []bool{false, true} {
			d := net.Dialer{Timeout: 2 * time.Second}
			d.SetMultipathTCP(mp)
			name := fmt.Sprintf(" (dialer multipath %v)", mp)
			c, err := d.Dial("tcp", granted.Addr().String())
			wantOK(t, "connect to the granted port"+name, err)
			if c != nil {
				if using, _ := c.(*net.TCPConn).MultipathTCP(); using {
					t.Errorf("connection%s uses MPTCP, which Landlock does not restrict", name)
				}
				c.Close()
			}
			c, err = d.Dial("tcp", other.Addr().String())
			if c != nil {
				c.Close()
			}
			check(sandbox.FeatureTCPConnect, "connect to a listening port not granted"+name, err, syscall.EACCES)
		}

		// TCP bind through Go's default listener (MPTCP first since Go 1.24).
		var lc net.ListenConfig
		if !lc.MultipathTCP() {
			t.Log("this Go's listeners do not default to MPTCP")
		}
		ln, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:"+strconv.Itoa(bindOK))
		wantOK(t, "listen on the granted port (default listener)", err)
		if ln != nil {
			if p := listenerProto(t, ln); p != unix.IPPROTO_TCP {
				t.Errorf("the default listener in the sandbox is %s: want plain TCP, where the port rules apply", protoName(p))
			}
			ln.Close()
		}
		ln, err = lc.Listen(context.Background(), "tcp", "127.0.0.1:"+strconv.Itoa(bindOther))
		if ln != nil {
			ln.Close()
		}
		check(sandbox.FeatureTCPBind, "listen on a port not granted (default listener)", err, syscall.EACCES)

		// Unix sockets: abstract (scoping, ABI 6) and pathname (ABI 9).
		c, err := net.Dial("unix", abstract)
		if c != nil {
			c.Close()
		}
		check(sandbox.FeatureScopeUnix, "connect to an abstract socket outside the sandbox", err, syscall.EPERM)
		c, err = net.Dial("unix", sockPath)
		if c != nil {
			c.Close()
		}
		check(sandbox.FeatureUnixSockets, "connect to a pathname socket outside the write paths", err, syscall.EACCES)

		// Signals to the parent, outside the sandbox (ABI 6).
		check(sandbox.FeatureScopeSignal, "kill(parent, 0)", syscall.Kill(os.Getppid(), 0), syscall.EPERM)
	})
}

func errnoErr(e syscall.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

// listenDefault listens through Go's default path (net.Listen).
func listenDefault(t *testing.T, addr string) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go acceptAll(ln)
	return ln
}

// listenerProto is SO_PROTOCOL of a TCP listener: IPPROTO_TCP or
// IPPROTO_MPTCP.
func listenerProto(t *testing.T, ln net.Listener) int {
	t.Helper()
	rc, err := ln.(*net.TCPListener).SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	proto := -1
	var gerr error
	if err := rc.Control(func(fd uintptr) {
		proto, gerr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_PROTOCOL)
	}); err != nil {
		t.Fatal(err)
	}
	if gerr != nil {
		t.Fatalf("getsockopt(SO_PROTOCOL): %v", gerr)
	}
	return proto
}

func protoName(p int) string {
	switch p {
	case unix.IPPROTO_TCP:
		return "plain TCP (IPPROTO_TCP)"
	case unix.IPPROTO_MPTCP:
		return "Multipath TCP (IPPROTO_MPTCP)"
	}
	return "protocol " + strconv.Itoa(p)
}

// TestKernelDefaultNetPathNoGrants: with no TCP granted, Go's default
// listener and dialer (MPTCP first, then TCP) are refused by seccomp on
// every kernel, whatever its Landlock ABI.
func TestKernelDefaultNetPathNoGrants(t *testing.T) {
	childtest.Run(t, func(t *testing.T) {
		warm := listenDefault(t, "127.0.0.1:0") // Go probes MPTCP support once, here
		t.Logf("before the sandbox, Go's default listener here is %s", protoName(listenerProto(t, warm)))
		plan, err := sandbox.PlanFor(sandbox.Config{})
		if err != nil {
			t.Fatal(err)
		}
		apply(t, sandbox.Config{})
		for _, name := range []string{sandbox.FeatureTCPConnect, sandbox.FeatureTCPBind} {
			if f, _ := planFeature(plan, name); !f.Enforced || !strings.Contains(f.Detail, "seccomp") {
				t.Errorf("ABI %d, no TCP granted: %s = %+v, want enforced by seccomp", plan.Version, name, f)
			}
		}
		for _, mp := range []bool{false, true} {
			name := fmt.Sprintf(" (multipath %v)", mp)
			var lc net.ListenConfig
			lc.SetMultipathTCP(mp)
			ln, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
			if ln != nil {
				ln.Close()
			}
			wantErrno(t, "listen"+name, err, syscall.EPERM)
			d := net.Dialer{Timeout: time.Second}
			d.SetMultipathTCP(mp)
			c, err := d.Dial("tcp", warm.Addr().String())
			if c != nil {
				c.Close()
			}
			wantErrno(t, "dial a listening port"+name, err, syscall.EPERM)
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if ln != nil {
			ln.Close()
		}
		wantErrno(t, "net.Listen", err, syscall.EPERM)
		c, err := net.Dial("tcp", warm.Addr().String())
		if c != nil {
			c.Close()
		}
		wantErrno(t, "net.Dial", err, syscall.EPERM)
	})
}

// probeByName indexes a canary result.
func probeByName(r sandbox.CanaryResult) map[string]sandbox.ProbeResult {
	m := map[string]sandbox.ProbeResult{}
	for _, p := range r.Probes {
		m[p.Name] = p
	}
	return m
}

func logCanary(t *testing.T, r sandbox.CanaryResult) {
	t.Helper()
	t.Logf("canary: %s (verified %v): %s", r.Status, r.Verified, r.Summary)
	for _, p := range r.Probes {
		t.Logf("  %-14s %-8s %s %s", p.Name, p.Status, p.Target, p.Error)
	}
}

// wantProbe checks that probe name has the given status, and that a skipped
// probe says why.
func wantProbe(t *testing.T, probes map[string]sandbox.ProbeResult, name, status string) {
	t.Helper()
	p, ok := probes[name]
	if !ok {
		t.Errorf("canary has no %s probe", name)
		return
	}
	if p.Status != status {
		t.Errorf("probe %s = %s (%s), want %s", name, p.Status, p.Error, status)
	}
	if p.Status == sandbox.ProbeSkipped && p.Error == "" {
		t.Errorf("probe %s skipped without a reason", name)
	}
}

// blockedOrEnvSkip: probes whose target this machine may lack (a readable
// file, a writable directory, a program outside the allowlist): blocked,
// or skipped for that reason, never failed.
func blockedOrEnvSkip(t *testing.T, probes map[string]sandbox.ProbeResult, name string) {
	t.Helper()
	if p := probes[name]; p.Status == sandbox.ProbeSkipped && p.Error != "" {
		t.Logf("probe %s not applicable on this machine: %s", name, p.Error)
		return
	}
	wantProbe(t, probes, name, sandbox.ProbeBlocked)
}

// TestKernelCanary runs the canary in a child sandboxed with TCP granted:
// below ABI 4 the network probe is skipped with the reason (ports cannot be
// restricted, and that is no failure of the sandbox); below ABI 6 so is the
// signal probe; and the result is still "sandboxed" when everything
// applicable is blocked.
func TestKernelCanary(t *testing.T) {
	childtest.Run(t, func(t *testing.T) {
		ln := listenDefault(t, "127.0.0.1:0")
		cfg := sandbox.Config{AllowedTCPConnect: []string{"*:" + strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)}}
		apply(t, cfg)
		v := sandbox.Probe().Version
		r := sandbox.VerifyCanaryFor(cfg)
		logCanary(t, r)
		probes := probeByName(r)
		for _, name := range []string{"file_read", "file_write", "exec"} {
			blockedOrEnvSkip(t, probes, name)
		}
		for _, name := range []string{"process_spawn", "udp", "unix_abstract"} {
			wantProbe(t, probes, name, sandbox.ProbeBlocked)
		}
		if v >= 4 {
			wantProbe(t, probes, "network", sandbox.ProbeBlocked)
		} else {
			wantProbe(t, probes, "network", sandbox.ProbeSkipped)
			if p := probes["network"]; !strings.Contains(p.Error, "ABI 4") {
				t.Errorf("ABI %d: network skipped without naming the ABI it needs: %q", v, p.Error)
			}
			if !strings.Contains(r.Summary, "Skipped: ") || !strings.Contains(r.Summary, "network") {
				t.Errorf("summary does not list network as skipped: %q", r.Summary)
			}
		}
		if v >= 6 {
			wantProbe(t, probes, "signal", sandbox.ProbeBlocked)
		} else {
			wantProbe(t, probes, "signal", sandbox.ProbeSkipped)
			if p := probes["signal"]; !strings.Contains(p.Error, "ABI 6") {
				t.Errorf("ABI %d: signal skipped without naming the ABI it needs: %q", v, p.Error)
			}
		}
		wantProbe(t, probes, "control_system", sandbox.ProbeAllowed)
		wantProbe(t, probes, "control_connect", sandbox.ProbeAllowed)
		if r.Status != sandbox.CanarySandboxed || !r.Verified || r.Failed() != 0 {
			t.Errorf("ABI %d: canary %s verified=%v failed=%d, want sandboxed", v, r.Status, r.Verified, r.Failed())
		}
	})
}

// TestKernelCanaryNoGrants: with nothing granted the network probe is
// blocked on every kernel (by seccomp where Landlock has no TCP rules).
func TestKernelCanaryNoGrants(t *testing.T) {
	childtest.Run(t, func(t *testing.T) {
		apply(t, sandbox.Config{})
		v := sandbox.Probe().Version
		r := sandbox.VerifyCanary()
		logCanary(t, r)
		probes := probeByName(r)
		for _, name := range []string{"file_read", "file_write", "exec"} {
			blockedOrEnvSkip(t, probes, name)
		}
		for _, name := range []string{"network", "process_spawn", "udp", "unix_abstract"} {
			wantProbe(t, probes, name, sandbox.ProbeBlocked)
		}
		if v < 6 {
			wantProbe(t, probes, "signal", sandbox.ProbeSkipped)
		}
		if r.Status != sandbox.CanarySandboxed || !r.Verified {
			t.Errorf("ABI %d: canary %s, want sandboxed", v, r.Status)
		}
	})
}

// TestKernelUnavailable runs where the kernel has no Landlock: every
// ApplySelf is refused with ErrUnavailable and nothing is applied, not even
// the seccomp filter that could have been loaded on its own (the library's
// decision: without Landlock the sandbox is refused as a whole); the canary
// reports the process as not sandboxed.
func TestKernelUnavailable(t *testing.T) {
	f := newFSFixture(t)
	childtest.Run(t, func(t *testing.T) {
		st := sandbox.Probe()
		if st.Active {
			t.Skipf("the sandbox is available on this kernel (%s, Landlock ABI %d); the refusal is exercised on a kernel without Landlock (.ci/kernels.sh boots one)", kernelRelease(), st.Version)
		}
		t.Logf("kernel %s, Probe: %+v", kernelRelease(), st)
		if sandbox.New().Available() {
			t.Error("Available() = true with the mechanism missing")
		}
		strict := f.cfg()
		strict.Strict = true
		exe := sandbox.Config{AllowProcessSpawn: true}
		if fileExists("/bin/true") {
			exe.AllowedExecPaths = []string{"/bin/true"}
		}
		for _, c := range []struct {
			name string
			cfg  sandbox.Config
		}{
			{"zero Config (seccomp alone could deny spawn and sockets)", sandbox.Config{}},
			{"workspace", f.cfg()},
			{"strict", strict},
			{"TCP granted", sandbox.Config{AllowedTCPConnect: []string{"*:80"}}},
			{"spawn and exec", exe},
		} {
			before := readProcSeccomp(t)
			err := sandbox.New().ApplySelf(c.cfg)
			if !errors.Is(err, sandbox.ErrUnavailable) || errors.Is(err, sandbox.ErrPartiallyApplied) {
				t.Errorf("ApplySelf(%s) = %v, want ErrUnavailable", c.name, err)
			} else if !strings.Contains(err.Error(), st.Reason) {
				t.Errorf("ApplySelf(%s) = %v, does not say why (%s)", c.name, err, st.Reason)
			}
			nothingApplied(t, "refused ApplySelf("+c.name+")", before, f)
		}
		if err := sandbox.New().WrapCommand(exec.Command("/bin/true"), f.cfg()); !errors.Is(err, sandbox.ErrUnavailable) {
			t.Errorf("WrapCommand = %v, want ErrUnavailable", err)
		}

		r := sandbox.VerifyCanaryFor(f.cfg())
		logCanary(t, r)
		if r.Verified || r.Blocked() != 0 || (r.Status != sandbox.CanaryUnsandboxed && r.Status != sandbox.CanaryUnavailable) {
			t.Errorf("canary without a sandbox: %s verified=%v blocked=%d, want unsandboxed or unavailable", r.Status, r.Verified, r.Blocked())
		}
		if p := probeByName(r)["file_read"]; readable("/etc/passwd") && p.Status != sandbox.ProbeFailed {
			t.Errorf("file_read probe = %+v, want failed: nothing stops the read", p)
		}
	})
}

// TestKernelReexec checks what every child test relies on: os.Args[0] names
// this very binary (in a VM guest as on the host), and a re-executed child
// runs, with the parent as its parent process.
func TestKernelReexec(t *testing.T) {
	parent := childtest.Share(t, func() string { return strconv.Itoa(os.Getpid()) })
	if !childtest.InChild(t) {
		a, err := os.Stat(os.Args[0])
		if err != nil {
			t.Fatalf("os.Args[0] = %q: %v", os.Args[0], err)
		}
		b, err := os.Stat("/proc/self/exe")
		if err != nil {
			t.Fatal(err)
		}
		if !os.SameFile(a, b) {
			t.Fatalf("os.Args[0] = %q is not this binary", os.Args[0])
		}
		t.Logf("os.Args[0] = %q", os.Args[0])
	}
	childtest.Run(t, func(t *testing.T) {
		if got := strconv.Itoa(os.Getppid()); got != parent {
			t.Errorf("child's parent is %s, want %s", got, parent)
		}
	})
}
