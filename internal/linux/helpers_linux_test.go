//go:build linux

package linux

import (
	"os/exec"
	"sync"
)

func (testSandbox) Available() bool { return Probe().Active }

func (testSandbox) ApplySelf(cfg Config) error {
	rc, err := resolve(cfg)
	if err != nil {
		return err
	}
	return ApplySelf(rc)
}

func (testSandbox) WrapCommand(cmd *exec.Cmd, cfg Config) error {
	c, err := WrapCommand(cmd, cfg)
	if c != nil {
		testCommands.Store(cmd, c)
	}
	return err
}

// testCommands holds the Commands WrapCommand returned (the root's
// session registry, here).
var testCommands sync.Map

func EgressOf(cmd *exec.Cmd) Proxy {
	if v, ok := testCommands.Load(cmd); ok {
		return v.(*Command).Egress()
	}
	return nil
}
