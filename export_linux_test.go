//go:build linux

package sandbox

import "os"

// SANDBOX_TEST_GO_TRAMPOLINE=1 runs this package's tests with the Go
// trampoline as WrapCommand's child half, where the static helper would
// otherwise be used (.ci/run runs the WrapCommand tests both ways).
func init() {
	if os.Getenv("SANDBOX_TEST_GO_TRAMPOLINE") == "1" {
		forceGoTrampoline = true
	}
}

// SetCgroupOptions points the cgroup detection of WrapCommand, Run and
// PlanFor at other files (tests: a host without a usable cgroup), and
// returns a function that restores the default.
func SetCgroupOptions(mountinfo, selfCgroup string) (restore func()) {
	old := cgroupOptions
	cgroupOptions.Mountinfo, cgroupOptions.SelfCgroup = mountinfo, selfCgroup
	return func() { cgroupOptions = old }
}
