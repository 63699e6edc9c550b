//go:build linux

package sandbox

import (
	"os"

	"github.com/openparallax/sandbox/internal/linux"
)

// SANDBOX_TEST_GO_TRAMPOLINE=1 runs this package's tests with the Go
// trampoline as WrapCommand's child half, where the static helper would
// otherwise be used (.ci/run runs the WrapCommand tests both ways).
func init() {
	if os.Getenv("SANDBOX_TEST_GO_TRAMPOLINE") == "1" {
		linux.ForceGoTrampolineHook()
	}
}

// SetCgroupOptions points the cgroup detection of WrapCommand, Run and
// PlanFor at other files (tests: a host without a usable cgroup), and
// returns a function that restores the default.
func SetCgroupOptions(mountinfo, selfCgroup string) (restore func()) {
	return linux.SetCgroupOptionsHook(mountinfo, selfCgroup)
}

// linuxPolicy, kernel, buildLinuxPolicy, applyLinux and target are the
// Linux engine's, for the canary's fault-injection tests (kernel also for
// the git walk's).
type linuxPolicy = linux.TestPolicy

type kernelState struct {
	abi       int
	abiReason string
	seccomp   bool
}

func kernel() kernelState {
	abi, sc := linux.TestKernel()
	return kernelState{abi: abi, abiReason: linux.TestKernelReason(), seccomp: sc}
}

// namespaces, setGitWalkBudget and gitNotWalkedNamed are the Linux
// engine's, for the git walk's budget test.
type nsState struct {
	ok     bool
	reason string
}

func namespaces() nsState {
	ok, reason := linux.TestNamespaces()
	return nsState{ok: ok, reason: reason}
}

func setGitWalkBudget(dirs, entries int) (restore func()) {
	return linux.SetGitWalkBudgetHook(dirs, entries)
}

const gitNotWalkedNamed = linux.TestGitNotWalkedNamed

func buildLinuxPolicy(rc *resolvedConfig, abi int, procSelf string, targets []string) linuxPolicy {
	return linux.TestBuildPolicy(rc, abi, procSelf, targets)
}

func applyLinux(pol linuxPolicy) error { return linux.TestApply(pol) }

func target(rc *resolvedConfig, mode uint32, candidates ...string) (string, bool) {
	return linux.TestTarget(rc, mode, candidates...)
}
