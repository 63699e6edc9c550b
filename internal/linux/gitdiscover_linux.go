//go:build linux

package linux

import (
	"path/filepath"
	"slices"

	"github.com/openparallax/sandbox/internal/mountns"
	"github.com/openparallax/sandbox/internal/spec"
)

// gitFound is what newMountLayer learns of the repositories in the write
// paths and writable Mounts' sources when the program starts.
type gitFound struct {
	gitChosen
	// roots are the walked trees: the write paths and the sources of the
	// writable Mounts (a repository there is as writable as one in a
	// write path, through the Mount's target).
	roots []string
	walk  gitWalkResult
	// gitDirs are the git directories whose hooks are protected.
	gitDirs []string
}

// gitRoots are the trees the walk looks at for rc: the write paths, and
// the sources of writable Mounts. Run's own temporary directory
// (Config.RunTemp) is left out: Run made it a moment ago with nothing in
// it but its home and tmp, and removes it with everything in it once the
// program's tree has ended, so there is no repository in it to protect
// before the run, and none the run leaves that git could later run hooks
// of. Looking would cost its directories' listings before and after every
// Run, and report repositories that are about to be removed.
func gitRoots(rc *spec.Resolved) []string {
	var roots []string
	for _, w := range rc.Write {
		if rc.Config.RunTemp != "" && w.Resolved == rc.Config.RunTemp {
			continue
		}
		roots = append(roots, w.Resolved)
	}
	for _, m := range rc.Mounts {
		if m.Write && !slices.Contains(roots, m.Path) {
			roots = append(roots, m.Path)
		}
	}
	return roots
}

// discoverGit walks roots (the write paths, and the sources of writable
// Mounts) for repositories (gitWalkHost, within
// defaultGitWalkBudget) and chooses those the layer protects
// (chooseGitRepos): first come the repositories gitLook found (a write
// path's top, the working directory's) that the walk found too, then the
// shallower. A repository in a writable Mount's source is protected by its
// source's paths: the mount layer protects each path at every view of it
// (where the Mount shows it).
func discoverGit(roots, first []string) gitFound {
	f := gitFound{roots: roots}
	f.walk = gitWalkHost(roots, defaultGitWalkBudget)
	bare := map[string]bool{}
	for _, d := range f.walk.Bare {
		bare[d] = true
	}
	// A .git gitLook saw that the walk found of no use (a FIFO) is
	// dropped; one the walk did not reach is kept.
	first = slices.DeleteFunc(slices.Clone(first), func(d string) bool {
		return !slices.Contains(f.walk.Repos, d) && (f.walk.complete() || slices.Contains(f.walk.Odd, filepath.Join(d, ".git")))
	})
	var cands []gitCandidate
	for _, d := range sortRepos(append(append(slices.Clone(first), f.walk.Repos...), f.walk.Bare...), first) {
		c := gitCandidate{dir: d, bare: bare[d] && !slices.Contains(f.walk.Repos, d)}
		if bare[d] {
			c.protect, c.pin = mountns.GitBareProtected(d, mountns.HostLookup, mountns.HostReadFile, mountns.HostReadDir)
		}
		if !c.bare {
			p, q := mountns.GitProtected(d, mountns.HostLookup, mountns.HostReadFile, mountns.HostReadDir)
			c.protect, c.pin = append(c.protect, p...), append(c.pin, q...)
		}
		cands = append(cands, c)
	}
	f.gitChosen = chooseGitRepos(cands, roots)
	for _, p := range f.protect {
		if filepath.Base(p) == "hooks" && !slices.Contains(f.gitDirs, filepath.Dir(p)) {
			f.gitDirs = append(f.gitDirs, filepath.Dir(p))
		}
	}
	return f
}
