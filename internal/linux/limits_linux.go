//go:build linux

package linux

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// currentCreds is what decides whether ApplySelf's rlimits bind the
// process it leaves behind: its real user ID, which it keeps, and its
// capabilities, which it does not: ApplySelf empties every capability set
// of every thread (dropCapabilities) before the caller's next instruction,
// so neither CAP_SYS_RESOURCE (raising a hard limit) nor CAP_SYS_ADMIN
// survives. RLIMIT_NPROC still does not apply to uid 0.
//
// It also carries the caller's hard limits, which the child half of
// WrapCommand and Run inherits and cannot raise, for the plan to say what
// a limit above them becomes.
func currentCreds() selfCreds { return credsOf(os.Getuid() == 0, rlimitCeilings()) }

// The resources rlimitsFor names, as this architecture numbers them.
const (
	rlimitCPU    = unix.RLIMIT_CPU
	rlimitFSIZE  = unix.RLIMIT_FSIZE
	rlimitDATA   = unix.RLIMIT_DATA
	rlimitCORE   = unix.RLIMIT_CORE
	rlimitNPROC  = unix.RLIMIT_NPROC
	rlimitNOFILE = unix.RLIMIT_NOFILE
)

// The child half sets its rlimits with prlimit64, soft and hard limit
// together (commandRlimits), on the hard limits it inherited from the
// caller, and only after it has dropped every capability (both child
// halves: internal/spawnhelper's helper.c step 5, internal/trampoline's
// step 6), so it can lower a hard limit but never raise one. A limit is a
// ceiling, not a grant: a limit above the inherited hard limit is asked as
// that hard limit, which binds the program at least as tightly as the
// limit asked (asking for more would fail the spawn with "prlimit64:
// operation not permitted"), and the plan says which value is set.

// rlimitCeilings are, per resource, the most the child half can set as a
// hard limit: the caller's own hard limits, which the child inherits. A
// resource whose limit cannot be read has no ceiling.
func rlimitCeilings() map[int]uint64 {
	out := map[int]uint64{}
	for _, res := range rlimitOfFeature {
		var rl unix.Rlimit
		if unix.Getrlimit(res, &rl) == nil {
			out[res] = rl.Max
		}
	}
	return out
}

// applyRlimits sets the limits of rs on the calling process. It only ever
// lowers: a hard limit that is already lower than asked stays, and the soft
// limit never exceeds the hard one. Lowering is always permitted, so once
// the current limits have been read nothing here is expected to fail.
//
// Every limit goes through the syscall package: for RLIMIT_NOFILE it then stops
// restoring the soft limit Go raised at start-up in the children this
// process starts (Go 1.21+): the limit set here is what they inherit.
func applyRlimits(rs []rlimit) error {
	for _, r := range rs {
		var cur syscall.Rlimit
		if err := syscall.Getrlimit(r.resource, &cur); err != nil {
			return fmt.Errorf("getrlimit(%s): %w", r.name, err)
		}
		soft, hard := clampRlimit(r, cur.Max)
		if err := syscall.Setrlimit(r.resource, &syscall.Rlimit{Cur: soft, Max: hard}); err != nil {
			return fmt.Errorf("setrlimit(%s, %d, %d): %w", r.name, soft, hard, err)
		}
	}
	return nil
}
