package sandbox

import (
	"github.com/openparallax/sandbox/internal/spec"
)

// CommandReport is what the caller found and did once a confined program's
// whole tree was gone: [FinishCommand] returns it for a command that
// [Sandbox.WrapCommand] prepared, and [Run] embeds it in its [RunResult].
type CommandReport struct {
	// LimitExceeded names the limit of Config.Limits that ended the
	// program (what [ReleaseCommand] returns), one of the Feature
	// constants of the limits (FeatureLimitMemory for a kill by the
	// out-of-memory killer of the tree's cgroup, FeatureLimitProcesses
	// when forks failed at the limit and the program then failed,
	// FeatureLimitCPUTime for SIGXCPU or the CPU-time watchdog,
	// FeatureLimitFileSize for SIGXFSZ); "" when no limit is known to have
	// ended it. It is distinct from a timeout or cancellation and from a
	// crash (a signal with LimitExceeded empty). Memory and Processes are
	// known only from the tree's cgroup (its out-of-memory kill count and
	// pids.events), and reported only when the program did not exit 0;
	// CPU time from the cgroup's watchdog or SIGXCPU; file size from
	// SIGXFSZ. Where the limit is an rlimit that makes a call fail
	// (RLIMIT_DATA, RLIMIT_NPROC, RLIMIT_NOFILE), nothing is known of it.
	LimitExceeded string `json:"limit_exceeded,omitempty"`
	// DeniedRequests are the network requests the program's egress proxy
	// refused, oldest first: Linux, when Config.AllowedTCPConnect names
	// hosts and the namespace and proxy enforce them (see [Egress] and
	// [EgressOf]); nil otherwise. At most the first 1000 are kept.
	DeniedRequests []DeniedRequest `json:"denied_requests,omitempty"`
	// Removed lists what the caller removed once the program's whole tree
	// was gone, because it would let the program act outside the sandbox
	// later: on Linux, a commondir the program created in the git
	// directory of a repository the mount layer protects (git would take
	// hooks and config from the directory it names the next time the user
	// runs git there; see FeatureGitCommonDir). nil when nothing was.
	Removed []string `json:"removed,omitempty"`
	// GitCreated lists each .git (a directory, or a gitdir file naming
	// one) that the program created where git finds the repository of a
	// write path's top or of the working directory, and where there was
	// none at the start: on Linux, with git protection on (not
	// NoGitProtection). The mount layer protects the hooks and config of
	// repositories that exist when the sandbox starts; it cannot keep a
	// new .git out (there is nothing yet to mount over), so its hooks and
	// config are whatever the program wrote, and git runs them the next
	// time anyone works there, outside the sandbox (a shell prompt that
	// shows git status is enough for core.fsmonitor). It also lists the
	// .git of each checked-out submodule or embedded repository that a
	// protected repository's index names (a gitlink, which git add makes)
	// and whose git directory was not protected: git status in the
	// protected repository runs git in it, with its config, so what the
	// program wrote there runs outside the sandbox too. They are left in
	// place: the repository may be the requested work. Look at its hooks
	// and config before running git there. nil when none appeared.
	GitCreated []string `json:"git_created,omitempty"`
	// Findings are what the caller found, once the program's tree was
	// gone, in places the program could write and that the caller had to
	// look at (git directories, the workspace): each a kind (the Finding*
	// constants), the path and what it means. Nothing here was followed,
	// opened as a special file, or read past a bound: a bound hit or a
	// special file found is itself a finding. nil when there was nothing
	// to report.
	Findings []Finding `json:"findings,omitempty"`
}

// Finding is one thing the caller found in a place the program could
// write, which the caller must know of (see CommandReport.Findings): Kind
// (a Finding* constant), Path (where it was found), Detail (what it is and
// what to do about it).
type Finding = spec.Finding

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
