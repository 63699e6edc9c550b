//go:build !linux && !darwin && !windows

package sandbox

import (
	"fmt"
	"os/exec"
	"runtime"

	"github.com/openparallax/sandbox/internal/spec"
)

// otherSandbox is the sandbox of a platform this library has no mechanism
// for. Every call that asks for protection fails with ErrUnavailable.
type otherSandbox struct{}

func newPlatform() Sandbox { return otherSandbox{} }

func (otherSandbox) Available() bool { return false }
func (otherSandbox) Mode() string    { return ModeNone }

func (otherSandbox) ApplySelf(Config) error {
	return fmt.Errorf("%w: no sandbox mechanism on %s", ErrUnavailable, runtime.GOOS)
}

func (otherSandbox) WrapCommand(*exec.Cmd, Config) error {
	return fmt.Errorf("%w: no sandbox mechanism on %s", ErrUnavailable, runtime.GOOS)
}

func probePlatform() Status {
	return Status{Mode: ModeNone, Reason: "no sandbox mechanism on " + runtime.GOOS}
}

func planPlatform(*resolvedConfig) Plan {
	return Plan(spec.UnavailablePlan(ModeNone, "no sandbox mechanism on "+runtime.GOOS))
}

func verifyPlatform(Config) CanaryResult {
	why := "no sandbox mechanism on " + runtime.GOOS
	return NewCanaryResult(ModeNone, []ProbeResult{
		{Name: "file_read", Status: ProbeSkipped, Error: why},
		{Name: "file_write", Status: ProbeSkipped, Error: why},
		{Name: "network", Status: ProbeSkipped, Error: why},
		{Name: "process_spawn", Status: ProbeSkipped, Error: why},
	})
}
