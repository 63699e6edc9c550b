//go:build linux

package sandbox

import (
	"os/exec"

	"github.com/openparallax/sandbox/internal/linux"
)

// linuxSandbox is the Sandbox of Linux: Landlock, seccomp and namespaces,
// the engine of internal/linux.
type linuxSandbox struct{}

func newPlatform() Sandbox { return linuxSandbox{} }

func (linuxSandbox) Available() bool { return Probe().Active }
func (linuxSandbox) Mode() string    { return ModeLandlock }

func probePlatform() Status {
	s := linux.Probe()
	return Status{Active: s.Active, Mode: ModeLandlock, Version: s.Version, Filesystem: s.Active, Network: s.Network, Reason: s.Reason}
}

func planPlatform(rc *resolvedConfig) Plan { return Plan(linux.PlanFor(rc)) }

// ApplySelf restricts the calling process and all its threads (see
// linux.ApplySelf for the order of its steps and what it refuses beyond
// WrapCommand).
func (linuxSandbox) ApplySelf(cfg Config) error {
	rc, err := resolve(cfg)
	if err != nil {
		return err
	}
	return linux.ApplySelf(rc)
}

// WrapCommand is [Sandbox.WrapCommand] on Linux: its contract, with the
// Linux sections, is documented there.
func (linuxSandbox) WrapCommand(cmd *exec.Cmd, cfg Config) error {
	c, err := linux.WrapCommand(cmd, cfg.spec())
	if err != nil {
		return err
	}
	register(cmd, c)
	return nil
}
