//go:build windows

package sandbox

import (
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/windows"

	"github.com/openparallax/sandbox/internal/winjob"
)

// The Windows sandbox is a Job Object (mode "job-object").
//
// # What it enforces
//
//   - Process creation from inside the job: unless Config.AllowProcessSpawn
//     is set, the job's active-process limit is 1, so CreateProcess from
//     the confined process fails with ERROR_NOT_ENOUGH_QUOTA. This is not
//     a denial of process creation as such: see below.
//   - No breakaway: JOB_OBJECT_LIMIT_BREAKAWAY_OK and
//     JOB_OBJECT_LIMIT_SILENT_BREAKAWAY_OK are never set, so every process
//     created in the job (when spawning is allowed) stays in it, and
//     CREATE_BREAKAWAY_FROM_JOB fails with ERROR_ACCESS_DENIED.
//   - The job cannot be undone from inside: its security descriptor
//     (winjob.JobSecurity) refuses every request for more access to it, to
//     the owner too, so neither the query-only handle ApplySelf keeps nor
//     the reduced handle a WrapCommand caller keeps (assign, query,
//     terminate; query and terminate after PostStart) can be raised to one
//     that lifts a limit, by the confined process or by one that steals
//     the handle with PROCESS_DUP_HANDLE.
//   - Lifetime: JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE, and Close (and every
//     failure path) calls TerminateJobObject before closing the handle, so
//     a stolen copy of the handle does not keep the job's processes alive.
//     JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION makes a crash end the
//     process instead of waiting on a dialog.
//   - UI: every JOBOBJECT_BASIC_UI_RESTRICTIONS bit (desktop, display
//     settings, exit windows, global atoms, USER handles of processes outside
//     the job, reading and writing the clipboard, system parameters). A
//     headless agent needs none of them; the handle restriction stops window
//     messages to programs outside the job. When the caller is in a job
//     already (Windows Terminal, a CI runner, a libuv parent, an Engine's
//     job), Windows refuses to nest a job with UI restrictions, so the job
//     is made without them and PlanFor reports ui_restrictions not enforced.
//   - The console: WrapCommand starts the child without the caller's
//     console unless the caller chose a console flag, and Run also feeds a
//     console standard input through a pipe, so the child does not share
//     the caller's console or hold its input handle, through which it could
//     write keystrokes into it (WriteConsoleInput: the Windows TIOCSTI). It
//     can still attach to a console of a process of the same user
//     (AttachConsole): one of the same-user routes below.
//
// # What it does not enforce
//
// A Job Object is not an access-control boundary. Files, the registry,
// named pipes, AF_UNIX sockets and the network stay as open as the user's
// token allows: filesystem, exec, tcp_connect, tcp_bind, udp and
// unix_sockets are reported as not enforced by [PlanFor], and
// Config.Strict therefore always fails with [ErrNotEnforced] on Windows.
// Nor does a job stop the process from opening other processes of the same
// user (OpenProcess): it can terminate them, inject code into them, take
// their handles, or name one as the parent of a new process
// (PROC_THREAD_ATTRIBUTE_PARENT_PROCESS), which then starts in that
// parent's job, outside this one; and WMI (Win32_Process.Create), the Task
// Scheduler, BITS and out-of-process COM servers start processes on its
// behalf. So process_spawn is reported as not enforced (inside the job
// only, with these routes), scope_signal as not enforced, and the canary's
// process_spawn_parent probe fails where OpenProcess(parent,
// PROCESS_CREATE_PROCESS) succeeds. A caller that is elevated gives the
// child an administrator's token, which a job does not confine: reported as
// unelevated not enforced (Strict: an error).
//
// # Tokens: decided, not applied
//
// A low-integrity token would close the same-user routes above (a
// low-integrity process cannot open a medium-integrity process for
// PROCESS_CREATE_PROCESS, PROCESS_DUP_HANDLE or writing), but it can then
// write only to low-integrity places: not the workspace, the user's profile,
// %TEMP% or HKCU, unless those are relabelled, which changes the host's
// files. A restricted token breaks most programs in similar ways. This
// library therefore does not change the token; a caller that can live with
// that passes its own (cmd.SysProcAttr.Token, which WrapCommand keeps), or
// uses a container or VM. Wine ignores integrity levels, so CI could only
// test the plumbing of such a token, not its effect.
type windowsSandbox struct {
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

var _ PostStarter = (*windowsSandbox)(nil)

// newPlatform returns a fresh value: values share nothing, so an Engine may
// use one per command (or per goroutine) to keep their lifetimes apart.
func newPlatform() Sandbox { return &windowsSandbox{} }

// Available reports whether Job Objects with this library's limits can be
// made here.
func (*windowsSandbox) Available() bool { return Probe().Active }

func (*windowsSandbox) Mode() string { return ModeJobObject }

// selfJobs holds the query-only handles of the jobs ApplySelf put this
// process in. They stay open for the life of the process: closing one would
// kill the process (KILL_ON_JOB_CLOSE).
var selfJobs struct {
	sync.Mutex
	handles []windows.Handle
}

// ApplySelf puts the calling process into a new Job Object with the limits
// described on windowsSandbox, irreversibly: Windows cannot take a process
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
	h, err := winjob.ConfineSelf(jobOptions(cfg, inJobAlready()))
	if err != nil {
		// ConfineSelf leaves the process out of the job on any error.
		return fmt.Errorf("%w: job object: %w", ErrUnavailable, err)
	}
	selfJobs.Lock()
	selfJobs.handles = append(selfJobs.handles, h)
	selfJobs.Unlock()
	return nil
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
	nested := inJobAlready() && attr.CreationFlags&windows.CREATE_BREAKAWAY_FROM_JOB == 0
	job, err := winjob.Create(jobOptions(cfg, nested))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	attr.CreationFlags |= windows.CREATE_SUSPENDED | consoleFlag(attr.CreationFlags, cfg)
	cmd.SysProcAttr = &attr
	s.pending = append(s.pending, &wrappedCmd{cmd: cmd, job: job})
	return nil
}

// consoleFlags are the creation flags that decide a child's console.
const consoleFlags = windows.CREATE_NEW_CONSOLE | windows.CREATE_NO_WINDOW | windows.DETACHED_PROCESS

// consoleFlag returns the console flag WrapCommand adds to flags: none when
// the caller chose one, else DETACHED_PROCESS, or CREATE_NO_WINDOW when
// spawning is granted (so that console programs the child starts share one
// hidden console instead of each opening a window).
func consoleFlag(flags uint32, cfg Config) uint32 {
	switch {
	case flags&consoleFlags != 0:
		return 0
	case cfg.AllowProcessSpawn:
		return windows.CREATE_NO_WINDOW
	}
	return windows.DETACHED_PROCESS
}

// pruneLocked closes the jobs of post-started commands whose processes have
// all exited, so that a long-lived value does not pile up job handles.
func (s *windowsSandbox) pruneLocked() {
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
// WrapCommand are otherwise safe for concurrent use.
//
// # Resuming
//
// Go's os.StartProcess does not keep the main thread's handle, so the thread
// is found with a Toolhelp snapshot of the threads owned by pid; there must
// be exactly one, and ResumeThread must report it was suspended exactly
// once (see winjob.ResumeSuspendedProcess).
//
// # Failing closed
//
// If the command no longer has CREATE_SUSPENDED (its SysProcAttr was
// replaced after WrapCommand), or assignment or resumption fails, the child
// is terminated (and the job with TerminateJobObject) and an error is
// returned: it never runs outside the job. After a successful PostStart the
// value's handle to the job is reduced to query and terminate.
func (s *windowsSandbox) PostStart(pid int) error {
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
func (s *windowsSandbox) Close() error {
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

// terminateAndWait terminates every job of a post-started command and waits,
// for at most timeout each, until it holds no process: Run returns only
// after every process in the job is gone.
func (s *windowsSandbox) terminateAndWait(timeout time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, w := range s.running {
		errs = append(errs, w.job.TerminateAndWait(1, timeout))
	}
	return errors.Join(errs...)
}
