package linux

// The mount-namespace layer's decision, its spec and its plan entries,
// pure: they are computed (and tested as data) on every OS; only Linux
// builds a layer, reading the host (mountlayer_linux.go).

import (
	"slices"
	"strings"

	"github.com/openparallax/sandbox/internal/mountns"
	"github.com/openparallax/sandbox/internal/spec"
)

// nsState is the result of the availability probe.
type nsState struct {
	ok bool
	// reason says why the namespaces cannot be used, hint the remedy.
	reason, hint string
}

// mountLayer is the layer's decision and plan for one Config.
type mountLayer struct {
	// needs lists what asks for the layer, e.g. "deny_write_paths".
	needs []string
	// ns is the availability probe's result (only probed when needed).
	ns   nsState
	spec mountns.Spec
	plan mountns.Plan
	// git lists the repositories (their .git) protected by default, and
	// gitDirs their git directories (for a worktree or submodule, the
	// directory its .git file names, and the common one).
	git, gitDirs []string
	// gitSpots are where a .git absent now would be found by git for a
	// write path's top or the working directory (see gitLook): Run and
	// FinishCommand report one that appears there.
	gitSpots []string
	// gitBare are the implicit bare repositories protected, gitProtect
	// every path git protection makes read-only (see discoverGit).
	gitBare, gitProtect []string
	// gitWalk is what the walk for repositories found, and what it did
	// not walk; gitSkipped the repositories past the per-spawn budget
	// (not protected); gitRoots the trees walked.
	gitWalk              gitWalkResult
	gitSkipped, gitRoots []string
	err                  error // the plan could not be made (Build refused the spec, or the host's mounts could not be read)
	// hardLinked are the protected and hidden files that have other
	// names (hard links) somewhere: no mount of a name reaches those, so
	// the plan reports them (see hostAliases).
	hardLinked []string
	// root lists what asks for the sandbox's own root (rootWanted), nil
	// when it is not built; rootBlocked says why this host cannot have
	// one ("" when it can: see rootPivotBlocked).
	root        []string
	rootBlocked string
}

// used reports whether WrapCommand and Run start the child half in new
// namespaces with this layer.
func (l *mountLayer) used() bool { return l != nil && len(l.needs) > 0 && l.ns.ok && l.err == nil }

// layerMissing says why the layer is not in force (for plan details).
func layerMissing(l *mountLayer) string {
	switch {
	case l == nil:
		return "the mount-namespace layer was not looked at for this plan"
	case len(l.needs) == 0:
		return "the mount-namespace layer is not used"
	case l.err != nil:
		return "the mount-namespace layer cannot be planned: " + l.err.Error()
	case !l.ns.ok:
		return "the mount-namespace layer is unavailable here: " + l.ns.reason
	}
	return "the mount-namespace layer is in force"
}

// layerHint is the remedy for what the missing layer leaves unenforced.
func layerHint(l *mountLayer, otherwise string) string {
	switch {
	case l != nil && !l.ns.ok && l.ns.hint != "":
		return l.ns.hint
	}
	return otherwise
}

// mountLayerFeatures reports what the layer enforces, per entry point
// (WrapCommand's and Run's entry first: Plan.Describe, written for a
// program started with Run, reads the first entry of a feature):
// ApplySelf cannot create namespaces (a multi-threaded Go process cannot
// unshare a mount or user namespace), so every field that needs the layer
// is not enforced there; under WrapCommand and Run it is enforced where
// the layer is used, except the paths the plan could not protect (see
// "Paths that do not exist" above), and otherwise not, with the reason
// and the remedy.
func mountLayerFeatures(rc *spec.Resolved, l *mountLayer, available bool) []spec.Enforcement {
	var out []spec.Enforcement
	const noSelf = "ApplySelf: not enforced: the mount-namespace layer needs new namespaces, which a process that confines itself cannot enter (a multi-threaded Go process cannot unshare a mount or user namespace)"
	const refusedSelf = "ApplySelf: REFUSED (ApplySelf fails): the mount-namespace layer needs new namespaces, which a process that confines itself cannot enter (a multi-threaded Go process cannot unshare a mount or user namespace)"
	const selfHint = "run the program with WrapCommand or Run"
	gitPaths := map[string]bool{}
	if l != nil {
		for _, p := range l.gitProtect {
			gitPaths[p] = true
		}
	}
	gaps := func(field string, git bool) []string {
		var s []string
		for _, g := range l.plan.Gaps {
			if g.Field == field && gitPaths[g.Path] == git {
				s = append(s, g.Path+" ("+g.Reason+")")
			}
		}
		return s
	}
	command := func(feature, field, enforcedDetail string, git bool) spec.Enforcement {
		e := spec.Enforcement{Feature: feature, Scope: spec.ScopeCommand}
		switch {
		case !available:
			e.Detail = "WrapCommand/Run: sandbox unavailable"
		case !l.used():
			e.Detail = "WrapCommand/Run: not enforced: " + layerMissing(l)
			e.Hint = layerHint(l, "")
		default:
			if g := gaps(field, git); len(g) > 0 {
				e.Detail = "WrapCommand/Run: not enforced for " + strings.Join(g, "; ")
				e.Hint = "create each path before the sandbox starts (a mount needs a mount point, which is never made on the host)"
				if git {
					e.Detail += "; a hooks directory or config file the program creates there is removed by Run and FinishCommand once its tree is gone (RunResult.Removed), but until then git run by anyone in that repository would use it"
					e.Hint = "create each before the sandbox starts (mkdir the hooks directory; git init in the repository adds both and changes nothing else)"
				}
				if field == "mounts" {
					e.Hint = "create the mount target before the sandbox starts, of the same kind (file or directory) as the source"
				}
			} else {
				e.Enforced = true
				e.Detail = "WrapCommand/Run: " + enforcedDetail
			}
		}
		return e
	}
	linked := ""
	if l != nil && len(l.hardLinked) > 0 {
		linked = "; NOT through their other names: " + strings.Join(l.hardLinked, ", ") + " (hard links elsewhere, which no mount of a name reaches)"
	}
	if len(rc.DenyWrite) > 0 {
		out = append(out, command(spec.FeatureDenyWrite, "deny_write_paths", "read-only mounts over "+strings.Join(rc.DenyWrite, ", ")+
			": writes, creates, deletes and truncation fail with EROFS; as mount points they cannot be renamed or removed (EBUSY); "+
			"the same wherever the sandbox sees them (inside a writable Mount of a directory holding them, at the host's bind mounts of them; hard links are not followed)"+linked, false),
			spec.Enforcement{Feature: spec.FeatureDenyWrite, Scope: spec.ScopeApplySelf, Detail: noSelf, Hint: selfHint})
	}
	if len(rc.DenyRead) > 0 {
		out = append(out, command(spec.FeatureDenyRead, "deny_read_paths", "hidden: a directory is an empty read-only tmpfs of mode 000 (listing fails with EACCES "+
			"for a non-root target; root's dropped capabilities leave it the same), a file is a /dev/null on a nodev mount (opening it fails with EACCES; stat shows a character device): "+
			strings.Join(rc.DenyRead, ", ")+"; the same wherever the sandbox sees them (inside a Mount of a directory holding them, at the host's bind mounts of them; hard links are not followed)"+linked, false),
			spec.Enforcement{Feature: spec.FeatureDenyRead, Scope: spec.ScopeApplySelf, Detail: noSelf, Hint: selfHint})
	}
	if len(rc.Mounts) > 0 {
		var shown []string
		for _, m := range rc.Mounts {
			shown = append(shown, m.Path+" at "+m.At+pick(m.Write, " (read-write)", " (read-only)"))
		}
		e := command(spec.FeatureMounts, "mounts", strings.Join(shown, ", ")+"; Landlock grants follow (read, or read-write)", false)
		if !e.Enforced && available && !l.used() {
			e.Detail = "WrapCommand/Run: REFUSED (they fail): " + layerMissing(l)
		}
		out = append(out, e, spec.Enforcement{Feature: spec.FeatureMounts, Scope: spec.ScopeApplySelf, Detail: refusedSelf, Hint: selfHint})
	}
	if l != nil && len(l.root) > 0 || rc.Config.PrivateRoot {
		out = append(out, privateRootEntry(l, available),
			spec.Enforcement{Feature: spec.FeaturePrivateRoot, Scope: spec.ScopeApplySelf, Detail: refusedSelf, Hint: selfHint})
	}
	if l == nil {
		return out
	}
	if len(l.git)+len(l.gitBare) > 0 || gitWalkGaps(l) {
		out = append(out, gitProtectEntry(l, command(spec.FeatureGitProtect, "deny_write_paths", gitProtectDetail(l), true)))
	}
	if len(l.git)+len(l.gitBare) > 0 {
		out = append(out, gitCommonDirEntry(l))
	}
	if l.used() && available {
		out = append(out, privateTmpFeatures(l)...)
	}
	return out
}

// gitCommonDirEntry is git_commondir's entry for the repositories l
// protects.
func gitCommonDirEntry(l *mountLayer) spec.Enforcement {
	// What no mount can do: keep a new file out of the git
	// directory, which git must be able to write.
	return spec.Enforcement{Feature: spec.FeatureGitCommonDir, Scope: spec.ScopeCommand,
		Detail: "WrapCommand/Run: NOT prevented: the program can create commondir in the git directory of " + strings.Join(append(slices.Clone(l.git), l.gitBare...), ", ") +
			" (git writes lock files there, so it stays writable, and a mount needs an existing path); git reads it in every repository and " +
			"takes hooks and config from the directory it names, so a later git run outside the sandbox would run what the program wrote there; " +
			"Run removes a commondir that appeared once the program's tree is gone and lists it in RunResult.Removed; FinishCommand does the same for WrapCommand's caller",
		Hint: "use Run, or call FinishCommand once a WrapCommand program's tree is gone, before anyone runs git in this repository; " +
			"or grant the repository read-only"}
}

// privateTmpFeatures are the entries of the layer l's private /tmp and
// /dev/shm, and of its noexec write paths, where the layer is used.
func privateTmpFeatures(l *mountLayer) []spec.Enforcement {
	var out []spec.Enforcement
	tmp := "no private /tmp or /dev/shm"
	if len(l.plan.Tmp) > 0 {
		tmp = "a fresh tmpfs (noexec) at " + strings.Join(l.plan.Tmp, " and ") + ", granted read-write: nothing of the host's is there, and nothing written there reaches the host"
	}
	for _, g := range l.plan.Gaps {
		if g.Field == "private_tmp" {
			tmp += "; " + g.Path + ": " + g.Reason
		}
	}
	out = append(out, spec.Enforcement{Feature: spec.FeaturePrivateTmp, Scope: spec.ScopeCommand, Enforced: true, Detail: "WrapCommand/Run: " + tmp})
	var noexec []string
	for _, w := range l.spec.Write {
		if !w.Exec {
			noexec = append(noexec, w.Path)
		}
	}
	if len(noexec) > 0 {
		out = append(out, spec.Enforcement{Feature: spec.FeatureWriteNoexec, Scope: spec.ScopeCommand, Enforced: true,
			Detail: "WrapCommand/Run: " + strings.Join(noexec, ", ") + " are mounted noexec (executables granted inside them are shown over themselves, executable): " +
				"nothing written there can be executed or mapped executable, not even as \"ld.so ./file\""})
	}
	return out
}

// layerNeeds lists what in rc asks for the layer (see mountlayer_linux.go's doc);
// git are the repositories the default protection covers.
func layerNeeds(rc *spec.Resolved, git []string) []string {
	var needs []string
	if len(rc.DenyWrite) > 0 {
		needs = append(needs, "deny_write_paths")
	}
	if len(rc.DenyRead) > 0 {
		needs = append(needs, "deny_read_paths")
	}
	if len(rc.Mounts) > 0 {
		needs = append(needs, "mounts")
	}
	if rc.Config.PrivateRoot {
		needs = append(needs, "private_root")
	}
	if rc.Resolver != "" {
		needs = append(needs, "the egress resolver (a generated "+rc.ResolverAt+")")
	}
	if len(git) > 0 {
		needs = append(needs, "git protection of "+strings.Join(git, ", "))
	}
	if rc.Config.AllowSharedMemory {
		needs = append(needs, "allow_shared_memory (a private /dev/shm)")
	}
	// Last, so that the list says first what the Config itself asks for.
	needs = append(needs, "file metadata outside the write paths (the default)")
	return needs
}

// layerSpec is the mount layer's spec for rc before git protection:
// targets are executables that must stay visible and executable, writes
// rc's write paths, cwd the target's working directory, resolved ("" when
// unknown).
func layerSpec(rc *spec.Resolved, targets, writes []string, cwd string, root bool) mountns.Spec {
	ms := mountns.Spec{PrivateTmp: true, Lookup: mountns.HostLookup, Resolve: mountns.HostResolve}
	var execs []spec.Path
	execs = append(execs, rc.Exec...)
	for _, t := range targets {
		execs = append(execs, spec.Path{Given: t, Resolved: t})
	}
	for _, e := range execs {
		ms.Exec = append(ms.Exec, e.Resolved)
	}
	underExec := func(p string) bool {
		return slices.ContainsFunc(execs, func(e spec.Path) bool { return e.IsDir && spec.Under(p, e.Resolved) })
	}
	for _, w := range writes {
		ms.Write = append(ms.Write, mountns.WritePath{Path: w, Exec: rc.Config.AllowExecWritePaths || underExec(w)})
	}
	inWrite := func(p string) bool {
		return slices.ContainsFunc(writes, func(w string) bool { return spec.Under(p, w) })
	}
	for _, r := range rc.Read {
		ms.Read = append(ms.Read, r.Resolved)
	}
	// Executables stay visible under a private /tmp, and executable
	// inside a noexec write path: each such one is shown over itself,
	// executable.
	// keep adds a path that must stay visible under a private /tmp or
	// /dev/shm, without granting it (Landlock decides) and without it
	// keeping the host's /tmp (as a read grant of /tmp would).
	keep := func(p string) {
		if strings.HasPrefix(p, "/tmp/") || strings.HasPrefix(p, "/dev/shm/") {
			ms.Read = append(ms.Read, p)
		}
	}
	for _, e := range execs {
		keep(e.Resolved)
		if inWrite(e.Resolved) && !rc.Config.AllowExecWritePaths && !slices.ContainsFunc(ms.Write, func(w mountns.WritePath) bool {
			return w.Exec && spec.Under(e.Resolved, w.Path)
		}) {
			ms.Mounts = append(ms.Mounts, mountns.Mount{Source: e.Resolved, Target: e.Resolved, Write: true, Exec: true})
		}
	}
	if r := cwd; r != "" {
		// A working directory a grant covers is kept visible (see
		// mountns.Spec.Read). One no grant covers is kept as a name only
		// (mountns.Spec.Opaque): the private /tmp's own grant would
		// otherwise let the target read it.
		granted := slices.ContainsFunc(append(append(slices.Clone(rc.Read), rc.Write...), rc.Exec...), func(g spec.Path) bool {
			return spec.Under(r, g.Resolved)
		})
		if granted {
			keep(r)
		} else if root || strings.HasPrefix(r, "/tmp/") || strings.HasPrefix(r, "/dev/shm/") {
			// In the own root anywhere: it exists there only if made.
			ms.Opaque = append(ms.Opaque, r)
		}
	}
	for _, m := range rc.Mounts {
		exec := slices.ContainsFunc(execs, func(e spec.Path) bool { return spec.Under(e.Resolved, m.At) || spec.Under(m.At, e.Resolved) })
		ms.Mounts = append(ms.Mounts, mountns.Mount{Source: m.Path, Target: m.At, Write: m.Write, Exec: exec})
	}
	if rc.Resolver != "" {
		ms.Mounts = append(ms.Mounts, mountns.Mount{Source: rc.Resolver, Target: rc.ResolverAt})
	}
	ms.DenyWrite = slices.Clone(rc.DenyWrite)
	ms.DenyRead = slices.Clone(rc.DenyRead)
	return ms
}
