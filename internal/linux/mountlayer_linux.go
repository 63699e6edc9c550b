//go:build linux

package linux

// When WrapCommand and Run use the mount-namespace layer (internal/mountns),
// and what it is asked to do.
//
// The layer is used wherever it is available, a plain Config included:
// file metadata outside the write paths (chmod and utimes by path, which
// Landlock does not mediate) is refused by default, and only the layer's
// read-only mounts do that under WrapCommand and Run. With it come the
// rest of its defaults: write paths mounted noexec unless on the exec
// allowlist (Config.AllowExecWritePaths lifts it), and a private /tmp and
// /dev/shm (so shared memory works on first contact, Python's
// multiprocessing semaphores included). The Config adds to it: DenyWritePaths,
// DenyReadPaths, Mounts, a git repository in a write path (whose hooks and
// config it protects: Config.NoGitProtection turns that off). The spawn
// costs more with it (the namespaces and mounts: bench/spawn.sh, BenchmarkSpawnWrapped);
// where namespaces are unavailable the child half starts in no new
// namespace and the plan says file metadata is not enforced.
//
// When the layer is used the child half (the static helper, or the Go
// trampoline where that cannot run) is cloned into new mount and IPC
// namespaces (and a user namespace when the caller is not root: see
// nsAttr); its namespace step performs the mountns plan built here, after
// the cgroup join and close_range and before
// Landlock (whose rules are opened after the mounts, so they name what the
// target sees), the capability drop, no_new_privs and seccomp (which
// refuses every mount system call: nothing can be unmounted, remounted or
// mounted over from inside).
//
// Available means the probe in ns_linux.go succeeded. Where it did not, the
// features that need the layer are reported as not enforced with the
// probe's reason and remedy (Strict: an error), and Landlock and seccomp
// still apply.
//
// # The own root
//
// With Config.PrivateRoot, or a Mount whose target the host does not have
// (outside the private /tmp, where its mount point is made anyway:
// rootWanted), the plan gives the program a root of its own
// (mountns.Spec.Root, rootfs_linux.go): every path the policy grants is
// shown at its own path in a fresh tmpfs, with the host's symbolic links
// on the way to each, and the host's root is detached. /proc is a fresh
// procfs where the spawn has a PID namespace of its own. Where it cannot
// be made (the layer unavailable, a grant of /, a root on the initial
// ramfs) WrapCommand and Run refuse the Config (refuseViews), as ApplySelf
// always does.
//
// # No further defaults
//
// Only a repository's hooks and config are protected by default: they run
// code outside the sandbox the next time the user runs git, with nothing
// in the workspace to show it. Shell start-up files live in the home
// directory, which is not a write path unless the caller grants it; editor
// and agent configuration inside the workspace (.vscode, .idea, .claude,
// ...) is what agents are routinely asked to edit, so protecting it by
// default would break ordinary work. List such paths in DenyWritePaths.
//
// # Paths that do not exist
//
// A protected path (DenyWritePaths, DenyReadPaths, a repository's hooks or
// config) that does not exist when the sandbox starts cannot be protected:
// a mount needs a mount point, and the layer never creates one on a host
// filesystem (that would leave files behind and change what the user's
// own programs see). Inside a write path the sandbox can then create it,
// so the plan reports each such path as not enforced (Strict: an error),
// naming it. Outside every write path nothing can create it anyway
// (Landlock), and nothing is reported. Create the path before starting
// the sandbox to have it protected. The same holds for a whole repository
// the program creates where there was none (gitSpots): Run reports each
// such .git once the tree is gone (RunResult.GitCreated); the plan does
// not, since every write path without a repository would be listed.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/openparallax/sandbox/internal/mountns"
	"github.com/openparallax/sandbox/internal/spec"
)

// newMountLayer decides whether rc needs the layer and builds its plan.
// targets are executables that must stay visible and executable (the
// WrapCommand target, resolved); cwd is the target's working directory
// ("" when unknown); root is what the sandbox's own root shows, where
// rc asks for one (rootWanted).
func newMountLayer(rc *spec.Resolved, targets []string, cwd string, root rootHost) *mountLayer {
	l := &mountLayer{root: rootWanted(rc, mountns.HostLookup)}
	givenCwd := cwd
	var writes []string
	for _, w := range rc.Write {
		writes = append(writes, w.Resolved)
	}
	// The working directory, resolved once and only when something below
	// looks at it: most spawns need no layer and have no repository to
	// look for, and should not pay for the symlink walk.
	var rcwd string
	resolvedCwd := func() string {
		if rcwd == "" && cwd != "" {
			if r, err := filepath.EvalSymlinks(cwd); err == nil {
				rcwd = r
			}
			cwd = ""
		}
		return rcwd
	}

	// First what decides whether the layer is needed at all: the git
	// repositories the default protects, then the Config's own fields.
	// The plan is built only when the answer is yes: WrapCommand calls
	// this on every spawn, and most need no layer.
	gitProtect, gitPin := l.findGit(rc, resolvedCwd)
	l.needs = layerNeeds(rc, append(slices.Clone(l.git), l.gitBare...))
	if len(l.root) > 0 && !rc.Config.PrivateRoot {
		l.needs = append([]string{"the sandbox's own root (" + strings.Join(l.root, ", ") + ")"}, l.needs...)
	}
	if len(l.needs) == 0 {
		return l
	}

	ms := layerSpec(rc, targets, writes, resolvedCwd(), len(l.root) > 0)
	if len(l.root) > 0 {
		ms.Root = root.spec(givenCwd)
		l.rootBlocked = rootPivotBlocked()
	}
	for _, p := range gitProtect {
		if !slices.Contains(ms.DenyWrite, p) {
			ms.DenyWrite = append(ms.DenyWrite, p)
		}
	}
	ms.Pin = append(ms.Pin, gitPin...)
	if len(ms.DenyRead) > 0 && root.pol != nil {
		ms.Readable = readableRoots(root.pol)
	}
	pinParents(&ms, writes)
	slices.SortStableFunc(ms.Pin, func(a, b string) int { return strings.Count(a, "/") - strings.Count(b, "/") })
	ms.Aliases, l.err = hostAliases(ms)
	if l.err != nil {
		return l
	}
	l.hardLinked = hardLinked(append(slices.Clone(rc.DenyWrite), rc.DenyRead...))

	l.spec = ms
	l.plan, l.err = mountns.Build(ms)
	l.ns = namespaces()
	return l
}

// readableRoots are the paths pol's Landlock rules grant beneath:
// mountns.Spec.Readable, so that a DenyReadPaths entry inside a default
// system path or an exec grant is hidden as one inside a read grant is.
// The Config's paths and the exec grants' extras are resolved already; a
// default system path is kept as written (its rule is made by opening
// it, links followed) and is added resolved too. /proc is left out: its
// rule is for the program's own /proc entries, which a mount here cannot
// name.
func readableRoots(pol *linuxPolicy) []string {
	system := map[string]bool{}
	for _, sp := range SystemPaths {
		system[sp.Path] = true
	}
	var out []string
	add := func(p string) {
		if strings.HasPrefix(p, "/proc/") {
			return
		}
		out = append(out, p)
		if !system[p] {
			return
		}
		if r, err := filepath.EvalSymlinks(p); err == nil && r != p {
			out = append(out, r)
		}
	}
	for _, r := range pol.Paths {
		add(r.Path)
	}
	for _, r := range pol.System {
		add(r.Path)
	}
	return out
}

// findGit looks for the repositories git protection covers (unless the
// Config turns it off), records them in l, and returns the paths to make
// read-only and to pin. The trees looked at are the write paths and the
// sources of writable Mounts: a repository shown through one is as
// writable as one in a write path.
func (l *mountLayer) findGit(rc *spec.Resolved, resolvedCwd func() string) (protect, pin []string) {
	roots := gitRoots(rc)
	if rc.Config.NoGitProtection || len(roots) == 0 {
		return nil, nil
	}
	var first []string
	first, l.gitSpots = gitLook(roots, resolvedCwd())
	f := discoverGit(roots, first)
	l.git, l.gitBare, l.gitDirs, l.gitProtect = f.dotgits, f.bare, f.gitDirs, f.protect
	l.gitWalk, l.gitSkipped, l.gitRoots = f.walk, f.skipped, f.roots
	return f.protect, f.pin
}

// pinParents pins every directory between a write path and a protected or
// hidden path of ms (shown over itself, still writable): as a mount point
// it cannot be renamed, so the protected path cannot be moved away and its
// old path made anew, writable. (Both the path as given, which may be a
// protected link, and where it resolves.)
func pinParents(ms *mountns.Spec, writes []string) {
	for _, p := range append(slices.Clone(ms.DenyWrite), ms.DenyRead...) {
		r := mountns.HostResolve(p)
		if r == "" {
			continue
		}
		for _, q := range []string{p, r} {
			for _, w := range writes {
				if !spec.Under(q, w) || q == w {
					continue
				}
				for d := filepath.Dir(q); d != w && spec.Under(d, w); d = filepath.Dir(d) {
					if mountns.HostResolve(d) == d && !slices.Contains(ms.Pin, d) {
						ms.Pin = append(ms.Pin, d)
					}
				}
			}
		}
	}
}

// hostAliases returns the host's other mounts (bind mounts in
// /proc/self/mountinfo) of the trees that hold ms's protected, hidden
// and pinned paths: mountns.Build enforces each there too, where the
// sandbox can reach it. Nothing is read when there is nothing to protect.
// Hard links are not found (no mount of a name reaches them). A
// mountinfo that cannot be read is an error: the protections could not be
// made to hold at views of them that it would show, so the layer is
// reported as not planned (and Strict refuses) rather than used with
// those views open.
func hostAliases(ms mountns.Spec) ([]mountns.Alias, error) {
	var paths []string
	for _, p := range append(append(slices.Clone(ms.DenyWrite), ms.DenyRead...), ms.Pin...) {
		if r := mountns.HostResolve(p); r != "" {
			paths = append(paths, r)
		}
	}
	if len(paths) == 0 {
		return nil, nil
	}
	mi, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, fmt.Errorf("reading the host's mounts to find the other views of protected paths: %w", err)
	}
	return mountns.HostAliases(string(mi), paths), nil
}

// hardLinked returns those of paths that are files with more than one
// name (a link count above one): each other name is the same file,
// which no mount of this name protects or hides. They are reported, not
// looked for (that would mean walking every grant).
func hardLinked(paths []string) []string {
	var out []string
	for _, p := range paths {
		var st syscall.Stat_t
		if syscall.Stat(p, &st) == nil && st.Mode&syscall.S_IFMT != syscall.S_IFDIR && st.Nlink > 1 {
			out = append(out, fmt.Sprintf("%s (%d names)", p, st.Nlink))
		}
	}
	return out
}

// gitLook looks at the same places as git would for a write path's top and
// for the working directory (cwd, resolved, or ""), once, and returns the
// repositories there (which discoverGit protects first; the walk finds
// every other one, at any depth of the write paths) and the spots: the directories where
// git would find a repository, had they a .git, and that have none now.
// The spots are each write path's top without one, and every directory
// from the working directory up to the first that has a .git (or cannot be
// looked at) or leaves the write paths. A .git the program makes at a spot
// (git init, or a gitdir file pointing anywhere) carries hooks and config
// the program wrote, which git runs the next time the user works there,
// outside the sandbox; no mount can keep it out, because there is nothing
// yet to mount over (see "Paths that do not exist" above).
func gitLook(writes []string, cwd string) (repos, spots []string) {
	if len(writes) == 0 {
		// Nothing can be protected, and every WrapCommand without a write
		// path would otherwise resolve its working directory for nothing.
		return nil, nil
	}
	look := func(d string) error {
		_, err := os.Lstat(filepath.Join(d, ".git"))
		return err
	}
	for _, w := range writes {
		switch err := look(w); {
		case err == nil:
			repos = append(repos, w)
		case errors.Is(err, fs.ErrNotExist) && !slices.Contains(spots, w):
			spots = append(spots, w)
		}
	}
	if cwd == "" {
		return repos, spots
	}
	spotting := true
	for d := cwd; ; d = filepath.Dir(d) {
		if !slices.ContainsFunc(writes, func(w string) bool { return spec.Under(d, w) }) {
			break
		}
		err := look(d)
		if err == nil {
			if !slices.Contains(repos, d) {
				repos = append(repos, d)
			}
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			// Not a repository git finds, and not known to be without
			// one: git looks on up for the former, no spot beyond.
			spotting = false
		}
		if spotting && !slices.Contains(spots, d) {
			spots = append(spots, d)
		}
		if d == "/" {
			break
		}
	}
	return repos, spots
}

// missingGitEntries returns, for each protected git directory, its
// commondir, hooks and config where they do not exist now: what the
// program could create there, which no mount can keep out (there is
// nothing to mount over), and which Run and FinishCommand remove if it
// appeared, once the program's tree is gone (gitEnd.check). A commondir
// would point git at another directory's hooks and config; hooks and a
// config run the program's code outside the sandbox at the user's next
// git command. One that exists stays read-only (mountns.GitProtected).
func (l *mountLayer) missingGitEntries() []string {
	var out []string
	for _, d := range l.gitDirs {
		for _, name := range []string{"commondir", "hooks", "config"} {
			c := filepath.Join(d, name)
			if _, err := os.Lstat(c); errors.Is(err, fs.ErrNotExist) {
				out = append(out, c)
			}
		}
	}
	return out
}
