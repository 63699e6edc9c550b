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

// WrapCommand is [Sandbox.WrapCommand] on Windows: its contract, with the
// Windows section, is documented there.
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

func probePlatform() Status {
	active, reason := windows.Status(windows.CurrentHost())
	return Status{Active: active, Mode: ModeJobObject, Filesystem: false, Network: false, Reason: reason}
}

func planPlatform(rc *resolvedConfig) Plan { return Plan(windows.PlanFor(rc, windows.CurrentHost())) }
