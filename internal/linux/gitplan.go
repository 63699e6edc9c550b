package linux

// The plan's words for git protection at depth (FeatureGitProtect): which
// repositories are protected, which the per-spawn budget left, and what
// the walk did not reach.

import (
	"fmt"
	"strings"

	"github.com/openparallax/sandbox/internal/spec"
)

// gitWalkGaps reports whether the walk or the budget left something
// unprotected that the plan must name.
func gitWalkGaps(l *mountLayer) bool {
	return !l.gitWalk.complete() || len(l.gitSkipped) > 0
}

// gitProtectDetail is what the FeatureGitProtect entry says is protected.
func gitProtectDetail(l *mountLayer) string {
	var b strings.Builder
	switch {
	case len(l.git)+len(l.gitBare) == 0:
		b.WriteString("no repository found in the part of " + strings.Join(l.gitRoots, ", ") + " walked")
	default:
		var names []string
		names = append(names, l.git...)
		for _, d := range l.gitBare {
			names = append(names, d+" (a bare repository)")
		}
		b.WriteString("hooks and config of " + strings.Join(names, ", ") +
			" are read-only mounts (EROFS), as are those of their submodules' git directories, and each .git (or bare repository) can be neither renamed nor removed (EBUSY; a .git file naming the git directory is read-only too)")
	}
	fmt.Fprintf(&b, "; every repository in %s was looked for, at any depth (%d directories walked, links not followed)",
		strings.Join(l.gitRoots, ", "), l.gitWalk.Dirs)
	if len(l.gitWalk.Denied) > 0 {
		b.WriteString("; not readable by the caller, so not reachable by the program either: " + strings.Join(l.gitWalk.Denied, ", "))
	}
	b.WriteString("; the rest of each repository is writable, the index included, so a submodule or embedded repository the program adds (git status enters it, with its config) " +
		"has hooks and config of the program's: Run lists it in RunResult.GitCreated, FinishCommand in its GitCreated; a repository the program creates elsewhere in the write paths, " +
		"and rebase or cherry-pick state with exec lines in a protected one, are listed in their Findings (set no_git_protection to turn this off)")
	return b.String()
}

// gitProtectEntry amends e, the entry gitProtectDetail describes: past
// the walk's budget or the repositories' it is not enforced (Strict
// refuses), naming what was not walked and what was not protected.
func gitProtectEntry(l *mountLayer, e spec.Enforcement) spec.Enforcement {
	if !gitWalkGaps(l) {
		return e
	}
	var gaps []string
	if !l.gitWalk.complete() {
		s := "these directories were not walked (" + gitBudgetWords() + "): " + strings.Join(l.gitWalk.NotWalked, ", ")
		if n := l.gitWalk.NotWalkedMore; n > 0 {
			s += fmt.Sprintf(" and %d more", n)
		}
		gaps = append(gaps, s+": a repository there keeps writable hooks and config")
	}
	if len(l.gitSkipped) > 0 {
		gaps = append(gaps, fmt.Sprintf("these repositories are past the budget of %d repositories and %d mounts per spawn, and keep writable hooks and config: %s",
			gitMaxRepos, gitMountBudget, strings.Join(l.gitSkipped, ", ")))
	}
	e.Enforced = false
	e.Detail = "WrapCommand/Run: NOT enforced in full: " + strings.Join(gaps, "; ") + "; " + strings.TrimPrefix(e.Detail, "WrapCommand/Run: ")
	e.Hint = "grant narrower write paths (or list the repositories' hooks and config in deny_write_paths, or grant them read-only)"
	return e
}
