//go:build linux

package sandbox

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/openparallax/sandbox/internal/trampoline"
)

// killWait bounds how long Run keeps killing a session that keeps
// producing processes.
const killWait = 5 * time.Second

// confinedProc is a started, wrapped command on Linux: a session leader
// whose session holds every process it created.
type confinedProc struct {
	cmd        *exec.Cmd
	path       string   // the target, for messages
	report     *os.File // read end of the trampoline's failure pipe
	spawn      bool     // AllowProcessSpawn: the session may hold more than the leader
	failureErr error
}

// startConfined wraps cmd for Run (with a failure pipe, and a filter
// refusing setsid(2)), starts it in a new session with Pdeathsig, and
// returns once the child exists.
func startConfined(cmd *exec.Cmd, cfg Config) (*confinedProc, error) {
	path := cmd.Path
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("sandbox: Run: %w", err)
	}
	if err := wrapLinux(cmd, cfg, wrapOptions{failurePipe: w, denySetsid: true, denyPdeathsigChange: true}); err != nil {
		r.Close()
		w.Close()
		return nil, err
	}
	attr := &syscall.SysProcAttr{}
	if cmd.SysProcAttr != nil {
		*attr = *cmd.SysProcAttr
	}
	attr.Setsid = true
	attr.Pdeathsig = syscall.SIGKILL
	cmd.SysProcAttr = attr
	err = cmd.Start()
	w.Close()
	if err != nil {
		r.Close()
		return nil, fmt.Errorf("sandbox: Run %s: %w", path, err)
	}
	return &confinedProc{cmd: cmd, path: path, report: r, spawn: cfg.AllowProcessSpawn}, nil
}

// waitExit returns when the program has exited, without reaping it: until
// cmd.Wait, its PID (which is also its session's ID) cannot be reused.
func (p *confinedProc) waitExit() {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, p.cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return
		}
	}
}

// kill kills every process of the program's session.
func (p *confinedProc) kill() {
	if !p.spawn {
		// Without spawn the program is its only process.
		p.cmd.Process.Signal(syscall.SIGKILL)
		return
	}
	killSession(p.cmd.Process.Pid)
}

// killRest kills what outlived the program.
func (p *confinedProc) killRest() {
	if p.spawn {
		killSession(p.cmd.Process.Pid)
	}
}

func (p *confinedProc) release() error { return nil }

// failure reads the trampoline's report, once the program has exited: empty
// when execve succeeded (the pipe was close-on-exec).
func (p *confinedProc) failure() error {
	if p.report == nil {
		return p.failureErr
	}
	defer func() { p.report.Close(); p.report = nil }()
	p.report.SetReadDeadline(time.Now().Add(drainTimeout))
	b, err := io.ReadAll(io.LimitReader(p.report, 64<<10))
	switch {
	case len(b) > 0:
		f, perr := trampoline.UnmarshalFailure(b)
		if perr != nil {
			p.failureErr = fmt.Errorf("sandbox: cannot start %s: %w", p.path, perr)
		} else {
			p.failureErr = &startError{path: p.path, f: f}
		}
	case err != nil:
		p.failureErr = fmt.Errorf("sandbox: Run %s: reading the trampoline's report: %w", p.path, err)
	}
	return p.failureErr
}

// startError is why a trampoline did not start its target. It unwraps to
// the errno, so errors.Is(err, fs.ErrNotExist) and the like work.
type startError struct {
	path string
	f    trampoline.Failure
}

func (e *startError) Error() string { return "sandbox: cannot start " + e.path + ": " + e.f.Error() }

func (e *startError) Unwrap() error {
	if e.f.Errno == 0 {
		return nil
	}
	return e.f.Errno
}

// killSession kills every process whose session ID is sid. It is the one
// place Run's tree kill lives, so that a cgroup kill (cgroup.kill of a
// delegated cgroup) can replace it where one is available.
//
// Without a cgroup the kernel offers no atomic "kill this tree", and a
// SIGKILL per process found by a /proc scan loses to a chain of processes
// that each fork a successor and exit: the successor is born after the
// scan passed its PID. So the session is frozen first: every live process
// found gets SIGSTOP, and scans repeat until two consecutive scans find
// every process of the session stopped (one scan that finds none running
// never ends the loop: a process created during a scan, behind its
// position in /proc, was created by one still running, which the next
// scan sees). A stopped process cannot fork, and only a running process
// of the session could continue one (Landlock's signal scope keeps
// outsiders, and the program's seccomp filter keeps ptrace, out). Then
// every process gets SIGKILL, and scans go on until two consecutive scans
// find nothing alive. All for at most killWait.
//
// A process cannot leave the session: Run's seccomp filter refuses
// setsid(2). The session ID cannot name another session meanwhile: it is
// the PID of the program, which Run has not reaped yet.
func killSession(sid int) {
	deadline := time.Now().Add(killWait)
	pause := func(delay *time.Duration) {
		time.Sleep(*delay)
		*delay = min(2**delay, 10*time.Millisecond)
	}
	delay := 50 * time.Microsecond
	for quiet := 0; quiet < 2 && time.Now().Before(deadline); {
		_, running := signalSession(sid, unix.SIGSTOP)
		if running == 0 {
			quiet++
			continue
		}
		quiet = 0
		pause(&delay)
	}
	delay = 50 * time.Microsecond
	for quiet := 0; quiet < 2 && time.Now().Before(deadline); {
		if live, _ := signalSession(sid, unix.SIGKILL); live == 0 {
			quiet++
			continue
		}
		quiet = 0
		pause(&delay)
	}
}

// signalSession sends sig to the live processes of session sid, and
// returns how many live ones it found and how many of those were not
// stopped when it looked.
func signalSession(sid int, sig unix.Signal) (live, running int) {
	d, err := os.Open("/proc")
	if err != nil {
		return 0, 0
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil || pid <= 0 {
			continue
		}
		if _, session, ok := procStat(pid); !ok || session != sid {
			continue
		}
		// The PID may have been reused since it was read: pin the
		// process with a pidfd, check again, and signal through the
		// pidfd, which never reaches a later process with that PID.
		pidfd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			continue // gone
		}
		if state, session, ok := procStat(pid); ok && session == sid {
			unix.PidfdSendSignal(pidfd, sig, nil, 0)
			if alive := procAlive(pid, state); alive {
				live++
				if state != 'T' {
					running++
				}
			}
		}
		unix.Close(pidfd)
	}
	return live, running
}

// procAlive reports whether a process whose leader is in state is alive:
// not a zombie, or a zombie leader whose other threads still run (a leader
// may exit before its threads).
func procAlive(pid int, state byte) bool {
	if state != 'Z' && state != 'X' {
		return true
	}
	tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		return false
	}
	for _, t := range tasks {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + t.Name() + "/stat")
		if err != nil {
			continue
		}
		if i := bytes.LastIndexByte(b, ')'); i > 0 && i+2 < len(b) && b[i+2] != 'Z' && b[i+2] != 'X' {
			return true
		}
	}
	return false
}

// procStat returns the state and session ID from /proc/PID/stat.
func procStat(pid int) (state byte, session int, ok bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, 0, false
	}
	// "pid (comm) state ppid pgrp session ...": comm may hold anything,
	// so parse from the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return 0, 0, false
	}
	f := bytes.Fields(b[i+2:])
	if len(f) < 4 || len(f[0]) != 1 {
		return 0, 0, false
	}
	s, err := strconv.Atoi(string(f[3]))
	if err != nil {
		return 0, 0, false
	}
	return f[0][0], s, true
}
