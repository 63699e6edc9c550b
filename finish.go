package sandbox

import (
	"errors"
	"os/exec"

	"github.com/openparallax/sandbox/internal/linux"
	"github.com/openparallax/sandbox/internal/spec"
)

// CommandReport is what [FinishCommand] found once a command that
// [Sandbox.WrapCommand] prepared was done: the same findings [Run] returns
// in its [RunResult].
type CommandReport struct {
	// LimitExceeded is what [ReleaseCommand] returns: the limit of
	// Config.Limits known to have ended the program, or "".
	LimitExceeded string `json:"limit_exceeded,omitempty"`
	// DeniedRequests are the requests the command's egress proxy refused
	// (see [EgressOf]), as RunResult.DeniedRequests.
	DeniedRequests []DeniedRequest `json:"denied_requests,omitempty"`
	// Removed lists what FinishCommand removed because it would let the
	// program act outside the sandbox later, as RunResult.Removed: on
	// Linux, a commondir the program created in the git directory of a
	// repository the mount layer protected.
	Removed []string `json:"removed,omitempty"`
	// GitCreated lists each .git the program created where git finds the
	// repository of a write path's top or of the working directory, where
	// there was none at the start, and each .git of a submodule or an
	// embedded repository that a protected repository's index makes git
	// enter and that was not protected, as RunResult.GitCreated: its hooks
	// and config are the program's, and git runs them outside the sandbox
	// the next time anyone works there. Left in place.
	GitCreated []string `json:"git_created,omitempty"`
	// Findings are what the caller found, once the program's tree was
	// gone, in places the program could write and that the caller had to
	// look at (git directories, the workspace), as RunResult.Findings:
	// each a kind (the Finding* constants), the path and what it means.
	// Nothing here was followed, opened as a special file, or read past a
	// bound: a bound hit or a special file found is itself a finding.
	Findings []Finding `json:"findings,omitempty"`
}

// Finding is one thing the caller found in a place the program could
// write, which the caller must know of (see CommandReport.Findings): Kind
// (a Finding* constant), Path (where it was found), Detail (what it is and
// what to do about it).
type Finding = spec.Finding

// gitReport is what the git checks after a command found (see
// linux.GitReport): CommandReport's Removed, GitCreated and Findings.
type gitReport = linux.GitReport

// FinishCommand ends what WrapCommand set up beside cmd's process and
// reports what the program left that the caller must know of. Call it once,
// after cmd.Wait (or after a failed cmd.Start), for every command
// WrapCommand prepared; [Run] does all of this itself. In order:
//
//   - [ReleaseCommand]: with Config.Limits, the tree's cgroup ends what is
//     left of the tree (every process the program started) and goes;
//   - the egress proxy, if the command has one ([EgressOf]), is closed and
//     its refusals reported;
//   - on Linux, the git checks [Run] makes: a commondir that appeared in
//     the git directory of a repository the mount layer protected is
//     removed (git would take hooks and config from where it points the
//     next time anyone runs git there: see FeatureGitCommonDir), and a .git
//     that appeared at a write path's top or on the working directory's way
//     up is reported (GitCreated), not removed.
//
// The git checks are meaningful only once no process of the program is
// left: the tree's cgroup guarantees that with Limits; otherwise the
// caller must know its tree is gone (a program that starts no process, or
// AllowProcessSpawn false). Calling it again, or for a command WrapCommand
// did not prepare, reports nothing.
func FinishCommand(cmd *exec.Cmd) (CommandReport, error) {
	var r CommandReport
	if cmd == nil {
		return r, nil
	}
	var errs []error
	hit, err := ReleaseCommand(cmd)
	r.LimitExceeded = hit
	errs = append(errs, err)
	if e := EgressOf(cmd); e != nil {
		errs = append(errs, e.Close())
		r.DeniedRequests = e.Denied()
	}
	g, err := linux.FinishGit(cmd)
	r.Removed, r.GitCreated, r.Findings = g.Removed, g.Created, g.Findings
	errs = append(errs, err)
	return r, errors.Join(errs...)
}
