package linux

// The sandbox's own root in the mount layer's decision and plan entries,
// pure (see mountlayer_linux.go's "The own root").

import (
	"slices"
	"strings"

	"github.com/openparallax/sandbox/internal/mountns"
	"github.com/openparallax/sandbox/internal/spec"
)

// rootWanted lists what in rc asks for the sandbox's own root: the
// Config's PrivateRoot, and each Mount whose target does not exist on the
// host (lookup says; only an own root can show something there without
// making a mount point on the host), unless it lies in the private /tmp
// or /dev/shm, where its mount point is made anyway.
func rootWanted(rc *spec.Resolved, lookup func(string) mountns.Kind) []string {
	var out []string
	if rc.Config.PrivateRoot {
		out = append(out, "private_root")
	}
	grants := append(slices.Clone(rc.Read), rc.Write...)
	inPrivateTmp := func(p string) bool {
		for _, d := range []string{"/tmp", "/dev/shm"} {
			if spec.Under(p, d) && p != d && !slices.ContainsFunc(grants, func(g spec.Path) bool { return spec.Under(d, g.Resolved) }) {
				return true
			}
		}
		return false
	}
	for _, m := range rc.Mounts {
		if lookup(m.At) == mountns.Missing && !inPrivateTmp(m.At) {
			out = append(out, "the mount at "+m.At+" (absent on this host)")
		}
	}
	return out
}

// rootGap is the plan's reason the own root could not be planned ("" when
// it could, or is not asked for).
func rootGap(l *mountLayer) string {
	if l.rootBlocked != "" {
		return l.rootBlocked
	}
	for _, g := range l.plan.Gaps {
		if g.Field == "private_root" {
			return g.Reason
		}
	}
	return ""
}

// refuseViews is WrapCommand's and Run's refusal of a Config that changes
// what the program sees (Mounts, PrivateRoot) where the layer l cannot
// make the change (see spec.RefuseViews), nil where it can.
func refuseViews(rc *spec.Resolved, l *mountLayer) error {
	switch {
	case !l.used():
		reason := layerMissing(l)
		if h := layerHint(l, ""); h != "" {
			reason += " (" + h + ")"
		}
		return spec.RefuseViews(rc.Config, "WrapCommand", reason)
	case rootGap(l) != "":
		return spec.RefuseViews(rc.Config, "WrapCommand", "the sandbox's own root cannot be built: "+rootGap(l))
	}
	return nil
}

// privateRootEntry is private_root's entry for WrapCommand and Run: what
// the own root hides, and whether /proc is fresh; or why it is refused.
func privateRootEntry(l *mountLayer, available bool) spec.Enforcement {
	e := spec.Enforcement{Feature: spec.FeaturePrivateRoot, Scope: spec.ScopeCommand}
	switch {
	case !available:
		e.Detail = "WrapCommand/Run: sandbox unavailable"
	case !l.used():
		e.Detail = "WrapCommand/Run: REFUSED (they fail): " + layerMissing(l)
		e.Hint = layerHint(l, "")
	case rootGap(l) != "":
		e.Detail = "WrapCommand/Run: REFUSED (they fail): " + rootGap(l)
	default:
		proc := "the host's /proc, bound (read-only): other processes' entries stay as visible as Landlock leaves them " +
			"(a fresh procfs where the tree has a PID namespace of its own: Run with AllowProcessSpawn)"
		if l.spec.Root != nil && l.spec.Root.FreshProc {
			proc = "a fresh procfs of the program's PID namespace: only its own processes are there"
		}
		e.Enforced = true
		e.Detail = "WrapCommand/Run: the program has a root of its own (asked for by " + strings.Join(l.root, ", ") +
			"): a tmpfs holding only the system paths, the grants, the Mounts, /dev and a private /tmp, the host's root detached; " +
			"hidden: the names and stat of everything not granted (ENOENT), and the host's mount table (/proc/self/mountinfo lists the own root's mounts only); /proc: " + proc
	}
	return e
}
