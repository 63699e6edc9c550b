//go:build windows

package sandbox

import (
	"errors"
	"os/exec"

	"github.com/openparallax/sandbox/internal/windows"
)

// windowsSandbox is the Windows Sandbox: a Job Object per command (mode
// "job-object"). What it enforces and what it does not is the package doc
// of internal/windows; the job bookkeeping is windows.Jobs.
type windowsSandbox struct {
	jobs windows.Jobs
}

var _ PostStarter = (*windowsSandbox)(nil)

// newPlatform returns a fresh value: values share nothing, so an Engine may
// use one per command (or per goroutine) to keep their lifetimes apart.
func newPlatform() Sandbox { return &windowsSandbox{} }

// Available reports whether Job Objects with this library's limits can be
// made here.
func (*windowsSandbox) Available() bool { return Probe().Active }

func (*windowsSandbox) Mode() string { return ModeJobObject }

// ApplySelf puts the calling process into a new Job Object with the limits
// described in the package doc of internal/windows, irreversibly: Windows cannot take a process
// out of its job, and the only handle left to the job has JOB_OBJECT_QUERY
// access, so code in the process cannot lift the limits through it. Without
// AllowProcessSpawn the process can create no process from then on; with it,
// its children stay in the job and are killed when the process exits.
//
// Files and network are not restricted (see [PlanFor]); with Config.Strict
// ApplySelf therefore fails with [ErrNotEnforced] and applies nothing. On
// any error the process is not in the job; when the job could not be made
// or joined (for example inside a job that forbids nesting, before Windows
// 8), the error matches [ErrUnavailable].
func (*windowsSandbox) ApplySelf(cfg Config) error {
	rc, err := resolve(cfg)
	if err != nil {
		return err
	}
	if err := checkApplicable(planPlatform(rc), cfg); err != nil {
		return err
	}
	return windows.ConfineSelf(rc.Config)
}

// WrapCommand validates cfg, makes a Job Object for cmd and makes cmd start
// suspended (CREATE_SUSPENDED is added to a copy of cmd.SysProcAttr; every
// other field and flag the caller set is kept). Nothing runs until
// PostStart: after cmd.Start the caller must call PostStart with
// cmd.Process.Pid, which assigns the child to the job and only then resumes
// it, so no instruction of the child runs outside the job. A child that is
// never post-started stays suspended and is killed by Close.
//
// Each command gets its own job, so commands wrapped by one value may have
// different Configs and an active-process limit counts only the child of
// its own command. A bad cfg is an error (*ConfigError) and cmd is left
// untouched. Wrapping a command twice, or one already started, is an error.
//
// # The console
//
// Unless the caller set CREATE_NEW_CONSOLE, CREATE_NO_WINDOW or
// DETACHED_PROCESS, WrapCommand adds DETACHED_PROCESS (no console, so no
// console host needs to start for it) when spawning is denied and
// CREATE_NO_WINDOW (a console of its own, without a window, that its
// children share) when it is granted: a child attached to the caller's
// console could write keystrokes into it (WriteConsoleInput), to be read
// by the shell that started the caller. (AttachConsole to the caller's
// console is a same-user route this does not stop; PlanFor lists it.)
// Standard handles the caller sets
// are passed as they are: a console input handle given as cmd.Stdin
// reaches the caller's console all the same (Run pipes it).
//
// # Jobs inside jobs
//
// When the caller is in a job, the child would be too, and Windows refuses
// to put it into a job with UI restrictions; the job is then made without
// them (PlanFor reports ui_restrictions not enforced), unless the caller
// set CREATE_BREAKAWAY_FROM_JOB, which takes the child out of the caller's
// job (if that job allows it) so that it gets the UI restrictions.
//
// # A failed Start
//
// If cmd.Start fails, the job made for cmd stays until Close (it holds no
// process); a caller that keeps the value should call Close.
func (s *windowsSandbox) WrapCommand(cmd *exec.Cmd, cfg Config) error {
	if cmd == nil {
		return errors.New("sandbox: WrapCommand: nil *exec.Cmd")
	}
	if cmd.Process != nil {
		return errors.New("sandbox: WrapCommand: command already started")
	}
	rc, err := resolve(cfg)
	if err != nil {
		return err
	}
	if err := checkApplicable(planPlatform(rc), cfg); err != nil {
		return err
	}
	return s.jobs.Wrap(cmd, rc.Config)
}

// PostStart completes the start of a command this value wrapped: it assigns
// the child to the command's Job Object and only then resumes the child's
// main thread (windows.Jobs.PostStart: how the command is found, the
// goroutine rule, failing closed).
func (s *windowsSandbox) PostStart(pid int) error { return s.jobs.PostStart(pid) }

// Close ends every command this value wrapped: every job is terminated and
// its handle closed (windows.Jobs.Close). Afterwards the value may wrap new
// commands.
func (s *windowsSandbox) Close() error { return s.jobs.Close() }
