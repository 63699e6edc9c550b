//go:build !linux

package sandbox

import (
	"os/exec"
	"runtime"
)

// setControllingTTY is never reached here: internal/pty cannot open a
// pseudo-terminal on this platform, and Run reports that first.
func setControllingTTY(*exec.Cmd) {}

// ttyRefusal says why Run cannot give the program a pseudo-terminal here.
// On macOS internal/pty opens one, but the Seatbelt profile grants no
// ioctl on terminals (internal/seatbelt's doc), so the program would get a
// terminal it cannot use as one (tcgetattr refused): a rule for exactly
// this pair's /dev/ttysNNN is needed first. Elsewhere there is no pty.
func ttyRefusal() string {
	if runtime.GOOS == "darwin" {
		return "not on macOS yet: the Seatbelt profile grants no ioctl on the pseudo-terminal"
	}
	return "pseudo-terminals are not implemented on " + runtime.GOOS
}
