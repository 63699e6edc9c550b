package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"weak"

	"github.com/openparallax/sandbox/internal/linux"
)

// session is what WrapCommand set up beside one command's process, until
// the caller ends it: the engine's command (on Linux the tree's cgroup,
// the egress proxy and the git checks; nothing elsewhere) and the Egress
// handed out for it. There is one registry of them, keyed weakly by the
// *exec.Cmd, and one finish path, which FinishCommand, ReleaseCommand,
// EgressOf and Run share.
type session struct {
	engine *linux.Command
	egress *Egress // nil when the command has no proxy
}

// sessions maps a wrapped *exec.Cmd, weakly (a command its caller forgets
// is reclaimed, and its entry with it), to its *session until
// FinishCommand.
var sessions sync.Map

// newSession is the session of what the engine set up, with its Egress.
func newSession(c *linux.Command) *session {
	s := &session{engine: c}
	if p := c.Egress(); p != nil {
		s.egress = &Egress{addr: p.Addr(), impl: p}
	}
	return s
}

// register keeps c as cmd's session. A command never finished keeps what
// the session holds in the caller (the proxy, the git pins) only until it
// is reclaimed: the cleanup drops the session (see linux.Command.Drop).
func register(cmd *exec.Cmd, c *linux.Command) {
	key := weak.Make(cmd)
	sessions.Store(key, newSession(c))
	runtime.AddCleanup(cmd, func(k weak.Pointer[exec.Cmd]) {
		if v, ok := sessions.LoadAndDelete(k); ok {
			v.(*session).engine.Drop()
		}
	}, key)
}

// sessionOf is cmd's session, or nil.
func sessionOf(cmd *exec.Cmd) *session {
	if v, ok := sessions.Load(weak.Make(cmd)); ok {
		return v.(*session)
	}
	return nil
}

// release is the limits part of finish: the tree's cgroup ends what is
// left of the tree and goes; once.
func (s *session) release(ps *os.ProcessState) (string, error) {
	return s.engine.Release(ps)
}

// finish ends the session once the program's whole tree is gone, in order:
// the tree's cgroup (release), the egress proxy (closed, its refusals
// reported), the git checks.
func (s *session) finish(ps *os.ProcessState) (CommandReport, error) {
	var r CommandReport
	var errs []error
	hit, err := s.release(ps)
	r.LimitExceeded = hit
	errs = append(errs, err)
	if e := s.egress; e != nil {
		errs = append(errs, e.Close())
		r.DeniedRequests = e.Denied()
	}
	g, err := s.engine.FinishGit()
	r.Removed, r.GitCreated, r.Findings = g.Removed, g.Created, g.Findings
	errs = append(errs, err)
	return r, errors.Join(errs...)
}

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
//
// Run ends its own program by the same steps, in the same order. A command
// whose caller never calls FinishCommand keeps its egress proxy and the
// descriptors of the git checks only until the *exec.Cmd is reclaimed by
// the garbage collector (do not rely on the timing); its tree's cgroup,
// with Limits, stays until ReleaseCommand or the caller's exit (see
// [Limits]: the caller's reaper removes it). An error names what could not
// be ended (the cgroup could not be removed, the proxy did not close, a
// git check failed); the report holds what was found all the same.
func FinishCommand(cmd *exec.Cmd) (CommandReport, error) {
	if cmd == nil {
		return CommandReport{}, nil
	}
	v, ok := sessions.LoadAndDelete(weak.Make(cmd))
	if !ok {
		return CommandReport{}, nil
	}
	r, err := v.(*session).finish(cmd.ProcessState)
	if err != nil {
		err = fmt.Errorf("sandbox: FinishCommand: %w", err)
	}
	return r, err
}

// ReleaseCommand ends the resource limits of a command that
// [Sandbox.WrapCommand] prepared, once the caller is done with its process
// tree, and says which limit ended the program, if one is known to have (a
// Feature constant of the limits, as [RunResult.LimitExceeded]; "" when
// none). Call it after cmd.Wait, or after a failed cmd.Start, whenever
// WrapCommand succeeded with Config.Limits set; for any other command it
// does nothing.
//
// On Linux, where WrapCommand made the tree a cgroup of its own (see
// [Limits]), the tree's lifetime is the caller's: the cgroup holds the
// limits, and the CPU-time watchdog runs in the caller, for as long as the
// caller keeps it. ReleaseCommand stops the watchdog, kills every process
// still in the cgroup (descendants that outlived cmd's process: the tree is
// ended whole, without a race, as [Run] ends it), and removes the cgroup.
// A cgroup whose caller never released it, because the caller exited or
// was killed first, is removed with what is left in it by the caller's
// reaper once the caller is gone (see [Limits]): the tree does not outlive
// its caller. Elsewhere
// there is nothing to release: it returns "" and nil.
func ReleaseCommand(cmd *exec.Cmd) (limitExceeded string, err error) {
	if cmd == nil {
		return "", nil
	}
	s := sessionOf(cmd)
	if s == nil {
		return "", nil
	}
	hit, err := s.release(cmd.ProcessState)
	if err != nil {
		err = fmt.Errorf("sandbox: ReleaseCommand: %w", err)
	}
	return hit, err
}

// EgressOf returns the egress proxy WrapCommand set up for cmd, or nil when
// cmd has none: its Config names no host, or host names are not enforced
// here and fell back to port rules (see PlanFor), or WrapCommand failed, or
// the proxy was closed.
func EgressOf(cmd *exec.Cmd) *Egress {
	if s := sessionOf(cmd); s != nil && s.egress != nil && !s.egress.closed.Load() {
		return s.egress
	}
	return nil
}
