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
