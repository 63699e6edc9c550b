package sandbox

// The kinds of Findings git protection reports (CommandReport.Findings,
// RunResult.Findings). The pure half of finding them (what a git todo list
// asks git to run, and what a walk after the run found that the walk before
// it did not) is internal/linux's gitfindings.go.

import "github.com/openparallax/sandbox/internal/spec"

// Kinds of Finding that git protection reports, on Linux with the
// protection on (not Config.NoGitProtection). Each one is left in place:
// it may be the requested work; look at it before running git there. A
// .git the walk finds that is a FIFO, a socket or a device is reported
// as FindingSpecialFile (never opened).
const (
	// FindingGitRepository: a repository (a .git directory, a gitdir
	// file, or a .git link, which git follows) that the program created
	// in a write path or a writable Mount's source, at any depth, where
	// GitCreated does not list it (GitCreated covers a write path's top
	// and the working directory's way up). Its hooks and config are the
	// program's: git runs them the next time anyone works in it. Path is
	// the .git.
	FindingGitRepository = spec.FindingGitRepository
	// FindingGitBareRepository: an implicit bare repository (HEAD,
	// objects/, refs/) that the program created, a write path's top
	// included: git run inside it takes it for a git directory and uses
	// its config (core.sshCommand runs a program at git fetch, for one)
	// and hooks. Path is the directory.
	FindingGitBareRepository = spec.FindingGitBareRepository
	// FindingGitRebaseExec: rebase or cherry-pick state with exec lines
	// (rebase-merge/git-rebase-todo, sequencer/todo) in the git
	// directory of a protected repository, new or changed since the
	// start, or a todo file the caller could not check (a link, a special
	// file, too large): git rebase --continue (or cherry-pick --continue)
	// runs each exec line outside the sandbox. Path is the todo file.
	// rebase-apply (git am, and rebase's apply backend) holds no list of
	// commands: its state runs nothing but hooks, which are protected.
	FindingGitRebaseExec = spec.FindingGitRebaseExec
	// FindingGitNotWalked: the walk for repositories (before the program
	// started, or after it) stopped at its budget or at an error: Path is
	// a directory it did not walk, or walked in part; a repository there
	// was not protected, or not reported.
	FindingGitNotWalked = spec.FindingGitNotWalked
	// FindingGitNotProtected: a repository found at the start beyond the
	// per-spawn budget of protected repositories: its hooks and config
	// were writable. Path is the repository's directory.
	FindingGitNotProtected = spec.FindingGitNotProtected
)
