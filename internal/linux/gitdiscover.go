package linux

// Which of the repositories the walk found the mount layer protects, pure:
// the per-spawn budget, and the order in which repositories get it.

import (
	"path"
	"slices"

	"github.com/openparallax/sandbox/internal/spec"
)

// The per-spawn budget of protected repositories: at most gitMaxRepos,
// and at most gitMountBudget mounts for all of them. Each repository
// costs at least three mounts (hooks, config, the pinned .git or bare
// directory), two more per submodule, and one per directory between the
// write path and it (pinned, so that it cannot be renamed away); the mount
// layer's plan may clone at most trampoline.MaxMountSlots (1024) trees in
// all, and the other half is left for the Config's own paths. Past
// either bound the remaining repositories are not protected: the plan
// names them (not enforced: Strict refuses) and Run reports them.
const (
	gitMaxRepos    = 64
	gitMountBudget = 512
)

// gitCandidate is one repository the walk found: dir holds a .git (or is
// a bare repository), with the paths its protection makes read-only and
// pins.
type gitCandidate struct {
	dir          string
	bare         bool
	protect, pin []string
}

// gitChosen is what the budget let through.
type gitChosen struct {
	// dotgits are the .git entries of the protected repositories (the
	// layer's git), bare the protected bare repositories.
	dotgits, bare []string
	protect, pin  []string
	// skipped are the repositories past the budget (their directories).
	skipped []string
}

// chooseGitRepos takes candidates in order (sortRepos's) while the budget
// holds. writes are the walk's roots: the directories between a root and
// a protected path are pinned (see newMountLayer), one mount each, shared
// between the repositories below them.
func chooseGitRepos(cands []gitCandidate, writes []string) gitChosen {
	var c gitChosen
	pinned := map[string]bool{}
	mounts := 0
	for _, g := range cands {
		if len(g.pin) == 0 {
			continue // nothing git would use (a .git file naming nothing)
		}
		var between []string
		for _, p := range append(slices.Clone(g.protect), g.pin...) {
			for _, w := range writes {
				if !spec.Under(p, w) || p == w {
					continue
				}
				for d := path.Dir(p); d != w && spec.Under(d, w); d = path.Dir(d) {
					if !pinned[d] && !slices.Contains(between, d) {
						between = append(between, d)
					}
				}
			}
		}
		cost := len(g.protect) + len(g.pin) + len(between)
		if len(c.dotgits)+len(c.bare) >= gitMaxRepos || mounts+cost > gitMountBudget {
			c.skipped = append(c.skipped, g.dir)
			continue
		}
		mounts += cost
		for _, d := range between {
			pinned[d] = true
		}
		if g.bare {
			c.bare = append(c.bare, g.dir)
		} else {
			c.dotgits = append(c.dotgits, path.Join(g.dir, ".git"))
		}
		for _, p := range g.protect {
			if !slices.Contains(c.protect, p) {
				c.protect = append(c.protect, p)
			}
		}
		c.pin = append(c.pin, g.pin...)
	}
	return c
}
