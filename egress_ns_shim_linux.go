//go:build linux

package sandbox

import (
	"errors"
	"os/exec"

	"github.com/openparallax/sandbox/internal/trampoline"
)

// netNamespaces: until the namespace layer lands.
func netNamespaces() (ok bool, reason, hint string) {
	return false, "the namespace layer is not in this build", ""
}

func useNetStep(p *trampoline.Payload, cmd *exec.Cmd, fd int, port uint16) error {
	return errors.New("sandbox: the network step needs the namespace layer")
}
