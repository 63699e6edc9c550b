//go:build windows

package windows

import (
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/windows"

	"github.com/openparallax/sandbox/internal/spec"
	"github.com/openparallax/sandbox/internal/winjob"
)

// Jobs is the job bookkeeping of one Sandbox value: the commands it
// wrapped, each with a Job Object of its own. The zero value is ready to
// use; values share nothing, so an Engine may use one per command (or per
// goroutine) to keep their lifetimes apart. Wrap, PostStart, Close and
// TerminateAndWait are safe for concurrent use (but see PostStart).
type Jobs struct {
	mu sync.Mutex
	// pending: commands wrapped and not yet post-started (their children,
	// if started, are suspended and outside any job of ours).
	pending []*wrappedCmd
	// running: commands whose child was assigned to its job and resumed.
	running []*wrappedCmd
}

// wrappedCmd is one command and the job made for it.
type wrappedCmd struct {
	cmd *exec.Cmd
	job *winjob.Job
}

// selfJobs holds the query-only handles of the jobs ConfineSelf put this
// process in. They stay open for the life of the process: closing one would
// kill the process (KILL_ON_JOB_CLOSE).
var selfJobs struct {
	sync.Mutex
	handles []windows.Handle
}

// ConfineSelf puts the calling process into a new Job Object with the
// limits of cfg (see the package doc), irreversibly: Windows cannot take a
// process out of its job, and the only handle left to the job has
// JOB_OBJECT_QUERY access, so code in the process cannot lift the limits
// through it. Without AllowProcessSpawn the process can create no process
// from then on; with it, its children stay in the job and are killed when
// the process exits. cfg must have been validated and checked against the
// plan (ApplySelf does both). On any error the process is not in the job,
// and the error matches spec.ErrUnavailable.
func ConfineSelf(cfg spec.Config) error {
	if err := spec.RefuseViews(cfg, "ApplySelf on windows", "Windows has none"); err != nil {
		return err
	}
	h, err := winjob.ConfineSelf(JobOptions(cfg, InJobAlready()))
	if err != nil {
		// ConfineSelf leaves the process out of the job on any error.
		return fmt.Errorf("%w: job object: %w", spec.ErrUnavailable, err)
	}
	selfJobs.Lock()
	selfJobs.handles = append(selfJobs.handles, h)
	selfJobs.Unlock()
	return nil
}

// Wrap makes a Job Object for cmd and makes cmd start suspended
// (CREATE_SUSPENDED is added to a copy of cmd.SysProcAttr; every other
// field and flag the caller set is kept), with the console flag of
// [ConsoleFlag]. Nothing runs until PostStart. cfg must have been validated
// and checked against the plan (WrapCommand does both, and refuses a nil
// or started cmd). Wrapping a command twice is an error, and so are console
// flags ConsoleFlag refuses (a console of the child's own while spawning is
// denied); cmd is then left untouched. A job that cannot be made is an
// error matching spec.ErrUnavailable.
//
// Each command gets its own job, so commands wrapped by one value may have
// different Configs and an active-process limit counts only the child of
// its own command. When the caller is in a job, the job is made without UI
// restrictions, unless the caller set CREATE_BREAKAWAY_FROM_JOB, which
// takes the child out of the caller's job (if that job allows it). If
// cmd.Start fails, the job made for cmd stays until Close.
func (s *Jobs) Wrap(cmd *exec.Cmd, cfg spec.Config) error {
	if err := spec.RefuseViews(cfg, "WrapCommand on windows", "Windows has none"); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if slices.ContainsFunc(s.pending, func(w *wrappedCmd) bool { return w.cmd == cmd }) {
		return errors.New("sandbox: WrapCommand: command already wrapped")
	}
	s.pruneLocked()
	// A copy, so that a SysProcAttr shared with other commands is not
	// changed under them.
	var attr syscall.SysProcAttr
	if cmd.SysProcAttr != nil {
		attr = *cmd.SysProcAttr
	}
	console, err := ConsoleFlag(attr.CreationFlags, cfg.AllowProcessSpawn)
	if err != nil {
		return fmt.Errorf("sandbox: WrapCommand: %w", err)
	}
	nested := InJobAlready() && attr.CreationFlags&windows.CREATE_BREAKAWAY_FROM_JOB == 0
	job, err := winjob.Create(JobOptions(cfg, nested))
	if err != nil {
		return fmt.Errorf("%w: %w", spec.ErrUnavailable, err)
	}
	attr.CreationFlags |= windows.CREATE_SUSPENDED | console
	cmd.SysProcAttr = &attr
	s.pending = append(s.pending, &wrappedCmd{cmd: cmd, job: job})
	return nil
}

// pruneLocked closes the jobs of post-started commands whose processes have
// all exited, so that a long-lived value does not pile up job handles.
func (s *Jobs) pruneLocked() {
	s.running = slices.DeleteFunc(s.running, func(w *wrappedCmd) bool {
		n, err := w.job.ActiveProcesses()
		if err != nil || n > 0 {
			return false
		}
		w.job.Close()
		return true
	})
}

// PostStart completes the start of a command this value wrapped: it assigns
// the child to the command's Job Object and only then resumes the child's
// main thread.
//
// # Finding the command
//
// pid selects, among the commands wrapped by this value and not yet
// post-started, the one whose cmd.Process.Pid is pid. The process itself is
// reached through that cmd.Process's own handle (os.Process.WithHandle),
// never by opening the PID: the handle was returned by CreateProcess, so it
// names the child even if the PID were reused, and it keeps the PID from
// being reused while PostStart runs. A pid that matches no such command is
// an error and no process is touched.
//
// PostStart reads cmd.Process of the wrapped commands, so it must not run
// while another goroutine is inside cmd.Start of a command wrapped by the
// same value: call it from the goroutine that called cmd.Start, after
// Start returned, and give goroutines that start commands concurrently a
// value each (New is cheap, and values share nothing). PostStart, Close and
// Wrap are otherwise safe for concurrent use.
//
// # Resuming
//
// Go's os.StartProcess does not keep the main thread's handle, so the thread
// is found with a Toolhelp snapshot of the threads owned by pid: the first
// listed, checked to be the oldest. Other threads (one that security
// software injects at creation) are left alone; ResumeThread must report
// the main thread was suspended exactly once, else the child ran before its
// assignment or stays suspended (see winjob.ResumeSuspendedProcess).
//
// # Failing closed
//
// If the command no longer has CREATE_SUSPENDED (its SysProcAttr was
// replaced after Wrap), or assignment or resumption fails, the child
// is terminated (and the job with TerminateJobObject) and an error is
// returned: it never runs outside the job. After a successful PostStart the
// value's handle to the job is reduced to query and terminate.
func (s *Jobs) PostStart(pid int) error {
	// The lock is held throughout, so that Close cannot run between taking
	// the command off pending and recording it as running. Assignment and
	// resumption take milliseconds.
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.IndexFunc(s.pending, func(w *wrappedCmd) bool {
		return w.cmd.Process != nil && w.cmd.Process.Pid == pid
	})
	if i < 0 {
		return fmt.Errorf("sandbox: PostStart(%d): no started command wrapped by this sandbox has that process ID "+
			"(not wrapped, not started, already post-started, or the sandbox was closed)", pid)
	}
	w := s.pending[i]
	s.pending = slices.Delete(s.pending, i, i+1)

	var err error
	herr := w.cmd.Process.WithHandle(func(h uintptr) { err = startInJob(w, windows.Handle(h), uint32(pid)) })
	if herr != nil {
		err = fmt.Errorf("process handle: %w", herr)
	}
	if err != nil {
		w.job.Close()
		return fmt.Errorf("sandbox: PostStart(%d): %w", pid, err)
	}
	s.running = append(s.running, w)
	return nil
}

// startInJob assigns the suspended child to its job and resumes it; on any
// failure it terminates the child.
func startInJob(w *wrappedCmd, process windows.Handle, pid uint32) error {
	if w.cmd.SysProcAttr == nil || w.cmd.SysProcAttr.CreationFlags&windows.CREATE_SUSPENDED == 0 {
		windows.TerminateProcess(process, 1)
		return errors.New("the command was not started suspended (SysProcAttr replaced after WrapCommand); child terminated")
	}
	if err := w.job.Assign(process); err != nil {
		windows.TerminateProcess(process, 1)
		return fmt.Errorf("%w; child terminated", err)
	}
	if err := winjob.ResumeSuspendedProcess(process, pid); err != nil {
		w.job.Terminate(1)
		return fmt.Errorf("%w; child terminated", err)
	}
	if err := w.job.Seal(); err != nil {
		w.job.Terminate(1)
		return fmt.Errorf("%w; child terminated", err)
	}
	return nil
}

// Close ends every command this value wrapped: a child that was started but
// never post-started (still suspended, outside any job) is terminated, and
// every job is terminated (TerminateJobObject, which does not depend on
// this being the last handle to the job) and its handle closed, which ends
// every process still in it — children of several commands alike, so a value
// shared by commands with different lifetimes is closed only when all are
// done. Afterwards the value is empty and may wrap new commands. A command
// wrapped before Close and started after it can no longer be post-started:
// it stays suspended until the caller kills it.
//
// Close does not wait for the processes to exit; cmd.Wait does. A value that
// is never closed keeps its job handles until the process exits, and the
// children die then.
func (s *Jobs) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, w := range s.pending {
		if w.cmd.Process != nil {
			// An error from WithHandle means the process was waited for or
			// released: there is nothing left to kill.
			_ = w.cmd.Process.WithHandle(func(h uintptr) {
				if err := windows.TerminateProcess(windows.Handle(h), 1); err != nil {
					if ev, _ := windows.WaitForSingleObject(windows.Handle(h), 0); ev == uint32(windows.WAIT_TIMEOUT) {
						errs = append(errs, fmt.Errorf("sandbox: terminating suspended process %d: %w", w.cmd.Process.Pid, err))
					}
				}
			})
		}
		errs = append(errs, w.job.Close())
	}
	for _, w := range s.running {
		errs = append(errs, w.job.Close())
	}
	s.pending, s.running = nil, nil
	return errors.Join(errs...)
}

// TerminateAndWait terminates every job of a post-started command and waits,
// for at most timeout each, until it holds no process: Run returns only
// after every process in the job is gone.
func (s *Jobs) TerminateAndWait(timeout time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, w := range s.running {
		errs = append(errs, w.job.TerminateAndWait(1, timeout))
	}
	return errors.Join(errs...)
}
