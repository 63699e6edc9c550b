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
	g, err := WrapCommand(cmd, cfg)
	if g != nil {
		testEgresses.Store(cmd, g)
	}
	return err
}

// testEgresses holds the proxies WrapCommand returned (sandbox.EgressOf's
// registry, here).
var testEgresses sync.Map

func EgressOf(cmd *exec.Cmd) *EgressProc {
	if v, ok := testEgresses.Load(cmd); ok {
		return v.(*EgressProc)
	}
	return nil
}
