package sandbox

import "github.com/openparallax/sandbox/internal/spec"

// Kinds of [Finding]: what the caller (Run, FinishCommand) found in a
// place the program could write, when it had to look there. Each is about
// the caller's own safety first: the caller did not follow, open or read
// what it names, and says so, so that whoever works there next (a person
// running git, a later Run) knows what it would meet.
const (
	// FindingSpecialFile: a FIFO, device or socket where the caller had
	// to read a regular file or list a directory (a repository's index,
	// a .git file, a git directory). It was not opened: opening a FIFO
	// waits for a writer forever, and reading a device (/dev/zero) never
	// ends. git opening the same path may hang or misbehave the same way.
	FindingSpecialFile = spec.FindingSpecialFile
	// FindingSymlink: a symbolic link where the caller had to read or
	// remove something (a repository's .git, a component of a
	// submodule's path), or a .git link the program re-pointed during
	// the run. It was not followed: the caller never reads, lists or
	// removes through a link the program could have planted. git follows
	// some of these links: Detail says where it points now.
	FindingSymlink = spec.FindingSymlink
	// FindingBoundExceeded: a file larger than the caller reads there (an
	// index past its documented bound), or a directory with more entries
	// than its budget. The part past the bound was not read, so the check
	// it was for (e.g. the submodules an index makes git enter) was not
	// made: Detail says which.
	FindingBoundExceeded = spec.FindingBoundExceeded
)

// The kinds of Findings git protection reports (CommandReport.Findings,
// RunResult.Findings). The pure half of finding them (what a git todo list
// asks git to run, and what a walk after the run found that the walk before
// it did not) is internal/linux's gitfindings.go.

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
