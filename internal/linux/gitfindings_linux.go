//go:build linux

package linux

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/openparallax/sandbox/internal/safefs"
	"github.com/openparallax/sandbox/internal/spec"
	"golang.org/x/sys/unix"
)

// gitDepthEnd is what the checks after a command need from the walk before
// it (see gitEnd.depth): the trees walked and what was found there, the
// findings made then, and the todo files of the protected git
// directories as they were.
type gitDepthEnd struct {
	roots    []string
	start    gitWalkResult
	findings []spec.Finding
	// todos are the todo files (gitTodoFiles) of the protected git
	// directories, with their stamp at the start (zero: absent).
	todos map[string]gitTodoStamp
}

// gitTodoStamp is what lstat said of a todo file: a file rewritten, or
// replaced, has another (ctime cannot be set back).
type gitTodoStamp struct {
	dev, ino     uint64
	size, ctimeN int64
}

func lstatTodo(p string) gitTodoStamp {
	var st unix.Stat_t
	if unix.Lstat(p, &st) != nil {
		return gitTodoStamp{}
	}
	return gitTodoStamp{st.Dev, st.Ino, st.Size, st.Ctim.Nano()}
}

// gitDepth is what the layer's walk leaves for the checks after the
// command: nil when git protection is off or nothing was walked.
func (l *mountLayer) gitDepth() *gitDepthEnd {
	if l == nil || len(l.gitRoots) == 0 {
		return nil
	}
	d := &gitDepthEnd{roots: l.gitRoots, start: l.gitWalk, todos: map[string]gitTodoStamp{}}
	d.findings = gitNotWalkedFindings(l.gitWalk, "at the start")
	for _, r := range l.gitSkipped {
		d.findings = append(d.findings, spec.Finding{Kind: spec.FindingGitNotProtected, Path: r,
			Detail: fmt.Sprintf("a repository past the budget of %d protected repositories (%d mounts) per spawn: its hooks and config were writable while the program ran; look at them before running git there", gitMaxRepos, gitMountBudget)})
	}
	for _, g := range l.gitWalk.Odd {
		d.findings = append(d.findings, spec.Finding{Kind: spec.FindingSpecialFile, Path: g,
			Detail: "a .git that is not a file or a directory (a FIFO, a socket or a device) was there at the start: not a repository git can use, and never opened"})
	}
	if l.used() {
		for _, g := range l.gitDirs {
			for _, t := range gitTodoFiles {
				p := filepath.Join(g, t)
				d.todos[p] = lstatTodo(p)
			}
		}
	}
	return d
}

// depthFindings are the findings of the checks after a command (run once
// its tree is gone): those made at the start, the repositories that
// appeared (a walk of the same trees, with the same budget, through the
// process's cache: only directories that changed are read again), and
// exec lines in the todo files of the protected git directories that are
// new or changed.
func (e gitEnd) depthFindings() []spec.Finding {
	d := e.depth
	if d == nil {
		return nil
	}
	out := slices.Clone(d.findings)
	end := gitWalkHost(d.roots, defaultGitWalkBudget)
	out = append(out, gitNewRepos(d.start, end, e.spots)...)
	keys := make([]string, 0, len(d.todos))
	for p := range d.todos {
		keys = append(keys, p)
	}
	slices.Sort(keys)
	for _, p := range keys {
		now := lstatTodo(p)
		if now == (gitTodoStamp{}) || now == d.todos[p] {
			continue
		}
		if f, ok := todoFinding(p); ok {
			out = append(out, f)
		}
	}
	return out
}

// gitTodoMax bounds what is read of a todo file: 1 MiB (a rebase of
// some thousands of commits).
const gitTodoMax = 1 << 20

// todoFinding reads the todo file p (beneath its git directory, pinned,
// without following a link or opening a special file, within
// gitTodoMax) and reports its exec lines, or that it could not be read.
func todoFinding(p string) (spec.Finding, bool) {
	gitdir := filepath.Dir(filepath.Dir(p))
	rel, _ := filepath.Rel(gitdir, p)
	f := spec.Finding{Kind: spec.FindingGitRebaseExec, Path: p}
	dir, err := safefs.Pin(gitdir)
	var b []byte
	if err == nil {
		b, err = dir.ReadFile(rel, gitTodoMax)
		dir.Close()
	}
	switch {
	case errors.Is(err, unix.ENOENT):
		return f, false
	case err != nil:
		f.Detail = "a todo list git runs at rebase --continue or cherry-pick --continue appeared or changed, and could not be checked (" + err.Error() + "); git follows a link there: look at it before continuing"
		return f, true
	}
	lines, n := gitExecLines(b)
	if n == 0 {
		return f, false
	}
	f.Detail = fmt.Sprintf("%d exec line(s) in a todo list that appeared or changed while the program ran, which git runs outside the sandbox at rebase --continue or cherry-pick --continue (%q); look at it, or run git rebase --abort (cherry-pick --abort)", n, lines)
	return f, true
}
