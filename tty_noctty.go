//go:build !linux && !darwin

package sandbox

import (
	"os/exec"
	"runtime"
)

// setControllingTTY is never reached here: Run refuses TTY first
// (ttyRefusal).
func setControllingTTY(*exec.Cmd) {}

// ttyRefusal says why Run cannot give the program a pseudo-terminal here.
func ttyRefusal() string {
	return "pseudo-terminals are not implemented on " + runtime.GOOS
}
