//go:build windows

package sandbox

import (
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"sync"
	"syscall"

	"golang.org/x/sys/windows"

	"github.com/openparallax/sandbox/internal/winjob"
)

// The Windows sandbox is a Job Object (mode "job-object").
//
// # What it enforces
//
//   - Process creation: unless Config.AllowProcessSpawn is set, the job's
//     active-process limit is 1, so the confined process cannot create a
//     process (CreateProcess fails with ERROR_NOT_ENOUGH_QUOTA).
//   - No breakaway: JOB_OBJECT_LIMIT_BREAKAWAY_OK and
//     JOB_OBJECT_LIMIT_SILENT_BREAKAWAY_OK are never set, so every process
//     created in the job (when spawning is allowed) stays in it, and
//     CREATE_BREAKAWAY_FROM_JOB fails with ERROR_ACCESS_DENIED.
//   - Lifetime: JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE. Only this library holds
//     a handle to the job (unnamed, not inheritable), so when it is closed,
//     by Close or by the exit of the process holding it, every process left
//     in the job is terminated. JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION
//     makes a crash end the process instead of waiting on a dialog.
//   - UI: every JOBOBJECT_BASIC_UI_RESTRICTIONS bit (desktop, display
//     settings, exit windows, global atoms, USER handles of processes outside
//     the job, reading and writing the clipboard, system parameters). A
//     headless agent needs none of them; the handle restriction stops window
//     messages to programs outside the job.
//
// # What it does not enforce
//
// A Job Object is not an access-control boundary. Files, the registry,
// named pipes, AF_UNIX sockets and the network stay as open as the user's
// token allows: filesystem, exec, tcp_connect, tcp_bind, udp and
// unix_sockets are reported as not enforced by [PlanFor], and
// Config.Strict therefore always fails with [ErrNotEnforced] on Windows.
// Nor does a job stop the process from opening other processes of the same
// user (OpenProcess): it can terminate them, inject code into them, or name
// one as the parent of a new process (PROC_THREAD_ATTRIBUTE_PARENT_PROCESS),
// which then starts in that parent's job, outside this one. That is reported
// as scope_signal not enforced. A caller that needs more runs the child with
// a restricted or low-integrity token (cmd.SysProcAttr.Token, which
// WrapCommand keeps) or in a container or VM.
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

// jobSupport is nil when a job with this library's limits can be made here.
var jobSupport = sync.OnceValue(winjob.Supported)

const (
	windowsLimits = "Job Objects do not isolate files or network: only process creation, " +
		"breakaway from the job and UI access are restricted; files, the registry and the network " +
		"stay as open as the user's token allows"
	noFiles   = "Job Objects do not restrict file access"
	noNetwork = "Job Objects do not restrict network access"
	tokenHint = "run the process with a restricted or low-integrity token, or in a container or VM"
)

// Available reports whether Job Objects with this library's limits can be
// made here.
func (*windowsSandbox) Available() bool { return Probe().Active }

func (*windowsSandbox) Mode() string { return ModeJobObject }

func probePlatform() Status {
	if err := jobSupport(); err != nil {
		return Status{Mode: ModeJobObject, Reason: "Job Objects unavailable: " + err.Error()}
	}
	return Status{Active: true, Mode: ModeJobObject, Filesystem: false, Network: false, Reason: windowsLimits}
}

func planPlatform(rc *resolvedConfig) Plan {
	if err := jobSupport(); err != nil {
		return unavailablePlan(ModeJobObject, "Job Objects unavailable: "+err.Error())
	}
	cfg := rc.cfg
	p := Plan{Platform: "windows", Mechanism: ModeJobObject, Available: true, Reason: windowsLimits}
	f := func(feature string, enforced bool, detail, hint string) {
		p.Features = append(p.Features, Enforcement{Feature: feature, Enforced: enforced, Detail: detail, Hint: hint})
	}
	f(FeatureFilesystem, false, noFiles+": every file the user's token can open stays readable and writable", tokenHint)
	f(FeatureExec, false, noFiles+": every file the user's token can read can be executed", tokenHint)
	f(FeatureTCPConnect, false, noNetwork+": every host and port is reachable", tokenHint)
	f(FeatureTCPBind, false, noNetwork+": every port can be bound", tokenHint)
	if cfg.AllowUDP {
		f(FeatureUDP, true, "granted: UDP sockets to any host and port", "")
	} else {
		f(FeatureUDP, false, noNetwork+": UDP sockets can be created", tokenHint)
	}
	if cfg.AllowUnixSockets {
		f(FeatureUnixSockets, true, "granted: AF_UNIX sockets", "")
	} else {
		f(FeatureUnixSockets, false, noFiles+": AF_UNIX sockets and named pipes can be reached", tokenHint)
	}
	f(FeatureScopeSignal, false, "Job Objects do not stop opening other processes of the same user: "+
		"they can be terminated, injected into, or named as the parent of a new process, which then starts outside the job", tokenHint)
	if cfg.AllowProcessSpawn {
		f(FeatureSpawn, true, "granted: children are created in the same Job Object (breakaway denied) and die when it is closed", "")
	} else {
		f(FeatureSpawn, true, "Job Object: active-process limit 1, breakaway denied: CreateProcess fails with ERROR_NOT_ENOUGH_QUOTA "+
			"(a process of the same user outside the job can still be named as parent: see scope_signal)", "")
	}
	f(FeatureSyscalls, false, "Job Objects do not filter system calls", "")
	p.Features = append(p.Features, layerFeatures(rc, true)...)
	return p
}

// jobOptions maps a Config to the limits of its job.
func jobOptions(cfg Config) winjob.Options {
	if cfg.AllowProcessSpawn {
		return winjob.Options{}
	}
	return winjob.Options{ActiveProcessLimit: 1}
}

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
	h, err := winjob.ConfineSelf(jobOptions(cfg))
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
	job, err := winjob.Create(jobOptions(cfg))
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	// A copy, so that a SysProcAttr shared with other commands is not
	// changed under them.
	var attr syscall.SysProcAttr
	if cmd.SysProcAttr != nil {
		attr = *cmd.SysProcAttr
	}
	attr.CreationFlags |= windows.CREATE_SUSPENDED
	cmd.SysProcAttr = &attr
	s.pending = append(s.pending, &wrappedCmd{cmd: cmd, job: job})
	return nil
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
// is terminated and an error is returned: it never runs outside the job.
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
	return nil
}

// Close ends every command this value wrapped: a child that was started but
// never post-started (still suspended, outside any job) is terminated, and
// every job handle is closed, which terminates every process still in it
// (KILL_ON_JOB_CLOSE) — children of several commands alike, so a value
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
