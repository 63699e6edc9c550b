//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"strconv"
	"strings"
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
// It also carries what decides how the child half of WrapCommand and Run
// can set its rlimits: the caller's hard limits, which the child inherits,
// and whether the static helper started for this caller may raise them
// (childMayRaise, for a command whose SysProcAttr keeps the caller's
// user), for the plan to say what a limit above them becomes.
func currentCreds() selfCreds {
	c := selfCreds{uid0: os.Getuid() == 0, hard: map[string]uint64{}}
	for f, res := range rlimitOfFeature {
		var rl unix.Rlimit
		if unix.Getrlimit(res, &rl) == nil {
			c.hard[f] = rl.Max
		}
	}
	helper, _ := childHalf()
	c.raise = childMayRaise(helper != nil, nil)
	if c.raise {
		c.nrOpen = nrOpen()
	}
	return c
}

// rlimitOfFeature is the resource limit that stands for each limit
// feature where an rlimit enforces it.
var rlimitOfFeature = map[string]int{
	FeatureLimitProcesses: unix.RLIMIT_NPROC,
	FeatureLimitMemory:    unix.RLIMIT_DATA,
	FeatureLimitCPUTime:   unix.RLIMIT_CPU,
	FeatureLimitFileSize:  unix.RLIMIT_FSIZE,
	FeatureLimitOpenFiles: unix.RLIMIT_NOFILE,
}

// The child half sets its rlimits with prlimit64, soft and hard limit
// together (commandRlimits), on the hard limits it inherited from the
// caller. Lowering a hard limit is always permitted; raising one needs
// CAP_SYS_RESOURCE in the initial user namespace at that moment, and
// RLIMIT_NOFILE can never go above fs.nr_open. A limit is a ceiling, not
// a grant: where the child half cannot raise, a limit above the inherited
// hard limit is asked as that hard limit, which binds the program at least
// as tightly as the limit asked (asking for more would fail the spawn with
// "prlimit64: operation not permitted", as it did for any caller without
// CAP_SYS_RESOURCE, nobody included, until this clamp).
//
// Where raising works, the limit asked is set as it is: a root caller that
// asks for more descriptors than its own hard limit gets them, as it could
// have raised its own limit first. That is only the static helper, which
// sets the limits before it drops capabilities, when it runs with
// CAP_SYS_RESOURCE:
//
//   - The Go trampoline sets them after it has dropped every capability
//     (root included), so it never can; it is also the child half in new
//     namespaces, where a user namespace's capabilities do not count for
//     rlimits (capable() looks at the initial user namespace).
//   - The helper is executed by the child of exec.Cmd: run as uid 0 (the
//     effective user), execve gives it the bounding set, unless
//     SECBIT_NOROOT is set; run as another user, only the ambient set. A
//     SysProcAttr.Credential making the child another user than the
//     caller clears the sets at setuid: no raise is assumed then.
//
// A prediction is wrong only in the safe direction or fails closed: a
// clamp where raising would have worked sets a lower limit (the plan says
// which); a raise predicted where it fails (a caller that changes
// cmd.SysProcAttr after WrapCommand) fails the spawn with EPERM, never
// runs the program with a weaker limit.

// childMayRaise reports whether the child half can raise a hard limit:
// staticHelper is whether it is the static helper, sys the command's
// SysProcAttr (nil: the caller's user).
func childMayRaise(staticHelper bool, sys *syscall.SysProcAttr) bool {
	if !staticHelper || !initialUserNS() {
		return false
	}
	uid := os.Geteuid()
	if sys != nil && sys.Credential != nil && int(sys.Credential.Uid) != uid {
		return false
	}
	if uid == 0 {
		const secbitNoroot = 1
		bits, err := unix.PrctlRetInt(unix.PR_GET_SECUREBITS, 0, 0, 0, 0)
		if err != nil || bits&secbitNoroot != 0 {
			return false
		}
		in, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, unix.CAP_SYS_RESOURCE, 0, 0, 0)
		return err == nil && in == 1
	}
	in, err := unix.PrctlRetInt(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_IS_SET, unix.CAP_SYS_RESOURCE, 0, 0)
	return err == nil && in == 1
}

// initialUserNS reports whether this process is in the initial user
// namespace, whose /proc/self/ns/user has the inode number the kernel
// fixes for it (PROC_USER_INIT_INO); false where that cannot be read.
func initialUserNS() bool {
	var st unix.Stat_t
	return unix.Stat("/proc/self/ns/user", &st) == nil && st.Ino == 0xEFFFFFFD
}

// nrOpen is fs.nr_open, the most RLIMIT_NOFILE can be, or 0 where it
// cannot be read.
func nrOpen() uint64 {
	b, err := os.ReadFile("/proc/sys/fs/nr_open")
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	return n
}

// rlimitCeilings are, per resource, the most the child half can set as a
// hard limit (see childMayRaise): the caller's hard limits where it cannot
// raise them; where it can, only fs.nr_open for RLIMIT_NOFILE (the caller's
// hard limit where nr_open cannot be read). A resource absent has no
// ceiling.
func rlimitCeilings(staticHelper bool, sys *syscall.SysProcAttr) map[int]uint64 {
	out := map[int]uint64{}
	raise := childMayRaise(staticHelper, sys)
	for _, res := range rlimitOfFeature {
		var rl unix.Rlimit
		if unix.Getrlimit(res, &rl) != nil {
			continue
		}
		if !raise {
			out[res] = rl.Max
		} else if res == unix.RLIMIT_NOFILE {
			if n := nrOpen(); n != 0 {
				out[res] = max(n, rl.Max)
			} else {
				out[res] = rl.Max
			}
		}
	}
	return out
}

// clampRlimit is r as it can be set under the hard limit ceiling: soft and
// hard never above it, soft never above hard.
func clampRlimit(r rlimit, ceiling uint64) (soft, hard uint64) {
	hard = min(r.hard, ceiling)
	return min(r.soft, hard), hard
}

// rlimit is one resource limit ApplySelf sets.
type rlimit struct {
	resource   int
	name       string
	soft, hard uint64
}

// rlimitsFor returns the resource limits for l, in the order they
// are set. It is empty for a zero l.
func rlimitsFor(l Limits) []rlimit {
	if l.IsZero() {
		return nil
	}
	var out []rlimit
	add := func(res int, name string, v int64) {
		if v > 0 {
			out = append(out, rlimit{resource: res, name: name, soft: uint64(v), hard: uint64(v)})
		}
	}
	add(unix.RLIMIT_FSIZE, "RLIMIT_FSIZE", l.FileSizeBytes)
	add(unix.RLIMIT_NOFILE, "RLIMIT_NOFILE", l.OpenFiles)
	add(unix.RLIMIT_DATA, "RLIMIT_DATA", l.MemoryBytes)
	add(unix.RLIMIT_NPROC, "RLIMIT_NPROC", l.Processes)
	if l.CPUTime > 0 {
		s := rlimitSeconds(l.CPUTime)
		// SIGXCPU at the limit ends a program that does not handle it,
		// with a signal that names the cause; SIGKILL a second later ends
		// one that does.
		out = append(out, rlimit{resource: unix.RLIMIT_CPU, name: "RLIMIT_CPU", soft: s, hard: s + 1})
	}
	out = append(out, rlimit{resource: unix.RLIMIT_CORE, name: "RLIMIT_CORE", soft: 0, hard: 0})
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
