//go:build darwin

package sandbox

import (
	"fmt"
	"os/exec"
)

// The darwin backend is not built yet: every call that asks for protection
// fails closed with ErrUnavailable.
type darwinSandbox struct{}

func newPlatform() Sandbox { return darwinSandbox{} }

func (darwinSandbox) Available() bool { return false }
func (darwinSandbox) Mode() string    { return ModeSandboxExec }

const darwinPending = "the darwin backend is not implemented yet"

func (darwinSandbox) ApplySelf(Config) error {
	return fmt.Errorf("%w: %s", ErrUnavailable, darwinPending)
}

func (darwinSandbox) WrapCommand(*exec.Cmd, Config) error {
	return fmt.Errorf("%w: %s", ErrUnavailable, darwinPending)
}

func probePlatform() Status { return Status{Mode: ModeSandboxExec, Reason: darwinPending} }

func planPlatform(*resolvedConfig) Plan { return unavailablePlan(ModeSandboxExec, darwinPending) }
