//go:build linux

package linux

// Test hooks: the root package's tests (export_linux_test.go,
// export_egress_linux_test.go) reach this package's internals through
// these, and only tests may call them.

import (
	"context"
	"net"
	"net/netip"

	"github.com/openparallax/sandbox/internal/spec"
)

// SetCgroupOptionsHook points the cgroup detection of WrapCommand, Run and
// PlanFor at other files (tests: a host without a usable cgroup), and
// returns a function that restores the default. For tests only.
func SetCgroupOptionsHook(mountinfo, selfCgroup string) (restore func()) {
	old := cgroupOptions
	cgroupOptions.Mountinfo, cgroupOptions.SelfCgroup = mountinfo, selfCgroup
	return func() { cgroupOptions = old }
}

// SetEgressTestNetHook replaces the resolver and dialer of every egress
// proxy started from now on, until restore. For tests only.
func SetEgressTestNetHook(resolve func(ctx context.Context, host string) ([]netip.Addr, error),
	dial func(ctx context.Context, addr netip.AddrPort) (net.Conn, error)) (restore func()) {
	old := egressTestNet
	egressTestNet.resolve, egressTestNet.dial = resolve, dial
	return func() { egressTestNet = old }
}

// ForceGoTrampolineHook makes WrapCommand use the Go trampoline as its
// child half, until restore. For tests only.
func ForceGoTrampolineHook() (restore func()) {
	old := forceGoTrampoline
	forceGoTrampoline = true
	return func() { forceGoTrampoline = old }
}

// SetInboundPoolPerPortHook sets the size of each port's inbound pool for
// a non-root caller in Configs resolved from now on, until restore. For
// tests only.
func SetInboundPoolPerPortHook(n int) (restore func()) {
	old := inboundPoolPerPort
	inboundPoolPerPort = n
	return func() { inboundPoolPerPort = old }
}

// TestPolicy is the built Linux policy (Landlock rules, seccomp policy),
// for the root package's canary fault-injection tests. For tests only.
type TestPolicy = linuxPolicy

// TestKernel is the Landlock ABI in use and whether seccomp is supported.
// For tests only.
func TestKernel() (abi int, seccomp bool) {
	k := kernel()
	return k.abi, k.seccomp
}

// TestBuildPolicy builds the policy of rc for the Landlock ABI abi, as
// ApplySelf would with procSelf (see buildLinuxPolicy). For tests only.
func TestBuildPolicy(rc *spec.Resolved, abi int, procSelf string, targets []string) TestPolicy {
	return buildLinuxPolicy(rc, abi, procSelf, targets)
}

// TestApply applies pol to the calling process as ApplySelf does (see
// applyLinux). For tests only.
func TestApply(pol TestPolicy) error { return applyLinux(pol) }

// TestTarget is the canary's choice of a probe target among candidates
// (see target). For tests only.
func TestTarget(rc *spec.Resolved, mode uint32, candidates ...string) (string, bool) {
	return target(rc, mode, candidates...)
}

// TestKernelReason is why the Landlock ABI is 0 ("" when it is not). For
// tests only.
func TestKernelReason() string { return kernel().abiReason }

// TestNamespaces reports whether the namespaces of the mount layer can be
// made here, and why not. For tests only.
func TestNamespaces() (ok bool, reason string) {
	ns := namespaces()
	return ns.ok, ns.reason
}

// SetGitWalkBudgetHook bounds the walk for git repositories to dirs
// directories and entries entries (no time bound), until restore. For
// tests only.
func SetGitWalkBudgetHook(dirs, entries int) (restore func()) {
	saved := defaultGitWalkBudget
	defaultGitWalkBudget = gitWalkBudget{dirs: dirs, entries: entries}
	return func() { defaultGitWalkBudget = saved }
}

// TestGitNotWalkedNamed is how many directories not walked a plan entry
// and the findings name at most. For tests only.
const TestGitNotWalkedNamed = gitNotWalkedNamed
