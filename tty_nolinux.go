//go:build !linux

package sandbox

import "os/exec"

// setControllingTTY is never reached here: internal/pty cannot open a
// pseudo-terminal on this platform, and Run reports that first.
func setControllingTTY(*exec.Cmd) {}
