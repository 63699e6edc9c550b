package childtest

import (
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"syscall"
)

// TrySpawn runs cmd, a helper child that prints hello, with the creation
// flags, and reports the outcome as one line: "spawn(flags): ok",
// "spawn(flags): errno N: message" when the spawn failed with an errno,
// "spawn(flags): error: …" on another error, or "spawn(flags): no output:
// …" when it ran without printing hello. Tests compare these lines, also
// across a process boundary (a child prints them), so their form is part
// of this contract. It replaces cmd.SysProcAttr.
func TrySpawn(cmd *exec.Cmd, flags uint32, hello string) string {
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: flags}
	out, err := cmd.CombinedOutput()
	var errno syscall.Errno
	switch {
	case errors.As(err, &errno):
		return fmt.Sprintf("spawn(%#x): errno %d: %v", flags, uint32(errno), err)
	case err != nil:
		return fmt.Sprintf("spawn(%#x): error: %v", flags, err)
	case !strings.Contains(string(out), hello):
		return fmt.Sprintf("spawn(%#x): no output: %q", flags, out)
	}
	return fmt.Sprintf("spawn(%#x): ok", flags)
}
