package linux

// The Landlock rules of a spawn's payload: PlanSpawn's, pure.

import (
	"fmt"
	"slices"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"github.com/openparallax/sandbox/internal/spec"
	"github.com/openparallax/sandbox/internal/trampoline"
)

// pathRules are the Landlock rules of pol: the default paths, then the
// Config's, each with the identity the child checks. The slice has room
// for the mount layer's rules too (withNamespaceStep: its private
// directories and the targets of the Config's mounts), so that adding
// them does not copy a few hundred rules again.
func pathRules(pol linuxPolicy, host Host, namespaces bool, mounts int) []trampoline.PathRule {
	var tmp []string
	if pol.Layer != nil {
		tmp = pol.Layer.plan.Tmp
	}
	rules := make([]trampoline.PathRule, 0, len(pol.System)+len(pol.Paths)+len(tmp)+mounts)
	for _, r := range pol.System {
		rules = append(rules, trampoline.PathRule{Path: r.Path, Dir: uint64(r.Dir), File: uint64(r.File)})
	}
	for _, r := range pol.Paths {
		// The child checks that it opens the object resolved here: a
		// path replaced since (by a symlink to a secret, say) grants
		// nothing. A path gone already grants nothing either.
		//
		// Not for /dev/shm under the mount layer (allow_shared_memory):
		// the child opens the private tmpfs the layer mounted there,
		// not what is here. Every other rule path was resolved
		// (symlinks and all) when the policy was built, so a symlink
		// here now was swapped in since: lstat, not stat, which would
		// record the object the substitute names and let the child
		// grant it (Host.Rules).
		rule := trampoline.PathRule{Path: r.Path}
		if !namespaces || !slices.Contains(tmp, r.Path) {
			id, ok := host.Rules[r.Path]
			if !ok || id.Symlink {
				continue
			}
			rule.Dev, rule.Ino = id.Dev, id.Ino
		}
		// Directory rights always include READ_DIR, file rights never.
		if r.Access&ll.AccessFSReadDir != 0 {
			rule.Dir = uint64(r.Access)
		} else {
			rule.File = uint64(r.Access)
		}
		rules = append(rules, rule)
	}
	return rules
}

// withNamespaceStep adds the mount layer's step to p, and the Landlock
// rules of the Mounts' targets: each opens, in the child after the
// mounts, the source shown there (checked by the source's device and
// inode), with read rights, or read-write ones for a writable mount.
func withNamespaceStep(p *trampoline.Payload, rc *spec.Resolved, pol linuxPolicy, host Host) error {
	if host.ParentMountNSErr != nil {
		return fmt.Errorf("%w: WrapCommand: /proc/self/ns/mnt: %w", spec.ErrUnavailable, host.ParentMountNSErr)
	}
	p.Flags |= trampoline.FlagNamespaces
	p.Net = trampoline.NetStep{FD: -1}
	p.ParentMountNS = host.ParentMountNS
	if !pol.Layer.used() {
		// Only the egress layer, Run's PID namespace or AllowSysVIPC's
		// private IPC namespace needs the namespaces: no mounts.
		return nil
	}
	p.Mounts = pol.Layer.plan.MountOps()
	for _, m := range p.Mounts {
		if m.Slot >= trampoline.MaxMountSlots {
			// Both child halves refuse such a payload; say why here.
			return fmt.Errorf("sandbox: WrapCommand: the mount layer's plan needs more than %d mount clones (too many write, deny and mount paths)", trampoline.MaxMountSlots)
		}
	}
	unixRight := landlock.AccessFSSet(0)
	if rc.Config.AllowUnixSockets {
		unixRight = ll.AccessFSResolveUnix
	}
	// The private /tmp and /dev/shm are the sandbox's own: granted
	// read-write (they are noexec). Programs that write to /tmp whatever
	// TMPDIR says, and POSIX shared memory and semaphores, work, and
	// nothing of the host's is there.
	for _, d := range pol.Layer.plan.Tmp {
		p.Rules = append(p.Rules, trampoline.PathRule{Path: d, Dir: uint64((llWriteDir | unixRight) & pol.HandledFS)})
	}
	for _, m := range rc.Mounts {
		// m.Path is resolved: lstat, as for the rules above.
		id, ok := host.Rules[m.Path]
		if !ok || id.Symlink {
			continue // gone (reported by the plan as a gap) or swapped
		}
		rule := trampoline.PathRule{Path: m.At, Dev: id.Dev, Ino: id.Ino}
		if id.Dir {
			rule.Dir = uint64(pick(m.Write, llWriteDir|unixRight, llReadDir) & pol.HandledFS)
		} else {
			rule.File = uint64(pick(m.Write, llWriteFile, llRead) & pol.HandledFS)
		}
		p.Rules = append(p.Rules, rule)
	}
	return nil
}
