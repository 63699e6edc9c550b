//go:build linux || darwin

package sandbox

import (
	"os/exec"
	"syscall"
)

// setControllingTTY makes the program's standard input (a terminal Run
// owns) its controlling terminal; startConfined keeps these attributes and
// adds the new session this needs.
func setControllingTTY(cmd *exec.Cmd) {
	attr := &syscall.SysProcAttr{}
	if cmd.SysProcAttr != nil {
		*attr = *cmd.SysProcAttr
	}
	attr.Setsid = true
	attr.Setctty = true
	attr.Ctty = 0
	cmd.SysProcAttr = attr
}

// ttyRefusal says why Run cannot give the program a pseudo-terminal here,
// or "": on Linux and macOS it can (on macOS the Seatbelt profile then
// grants ioctl on exactly that terminal: see seatbelt.Policy.Terminal).
func ttyRefusal() string { return "" }
