//go:build !linux

package linux

import "os"

// Command is what WrapCommand set up beside a command's process: on Linux
// only; elsewhere there is nothing, and every method reports nothing.
type Command struct{}

// Egress is nil: there is no egress proxy off Linux.
func (*Command) Egress() Proxy { return nil }

// Release returns "" and nil: there is no tree cgroup off Linux.
func (*Command) Release(*os.ProcessState) (string, error) { return "", nil }

// FinishGit reports nothing: the git checks are the Linux mount layer's.
func (*Command) FinishGit() (GitReport, error) { return GitReport{}, nil }

// Drop does nothing.
func (*Command) Drop() {}
