//go:build linux

package mountns

import (
	"fmt"

	"github.com/openparallax/sandbox/internal/trampoline"
)

// Apply performs p's steps in order. It must run in a process that is alone
// in a new mount namespace (clone or unshare with CLONE_NEWNS; with
// CLONE_NEWUSER too when the caller is not root), before Landlock and
// seccomp are applied. The first step makes every mount private, so that
// nothing reaches the host even if a later step fails; on any error Apply
// stops and returns it, naming the step, and the caller must not run the
// target (the namespace is then half set up).
//
// It is a thin wrapper over trampoline.ApplyMounts, the raw system calls
// WrapCommand's child half runs: these tests exercise that very code.
func Apply(p Plan) error {
	if f, failed := trampoline.ApplyMounts(p.MountOps()); failed >= 0 {
		return fmt.Errorf("mountns: %s: %w", p.Ops[failed], f)
	}
	return nil
}
