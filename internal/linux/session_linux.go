//go:build linux

package linux

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

	"github.com/openparallax/sandbox/internal/spec"
	"github.com/openparallax/sandbox/internal/trampoline"
)

// killWait bounds how long Run keeps killing a session that keeps
// producing processes.
const killWait = 5 * time.Second

// drainTimeout bounds how long Failure reads the child half's report after
// the program has exited: Run's own drainTimeout, for its output.
const drainTimeout = 2 * time.Second

// Proc is a started, wrapped command on Linux (Run's): a session leader
// whose session holds every process it created.
type Proc struct {
	cmd        *exec.Cmd
	path       string   // the target, for messages
	report     *os.File // read end of the trampoline's failure pipe
	spawn      bool     // AllowProcessSpawn: the session may hold more than the leader
	failureErr error
	pidNS      bool // the program is PID 1 of a PID namespace of its own
	// command is what the wrapping set up beside the process (the tree's
	// cgroup, the egress proxy, the git checks), which Run ends the way
	// FinishCommand ends WrapCommand's, once the whole session is gone.
	command *Command
}

// StartConfined wraps cmd for Run (with a failure pipe, and a filter
// refusing setsid(2)), starts it in a new session with Pdeathsig, and
// returns once the child exists. tty is RunOptions.TTY: the program then
// gets no PID namespace (see Run's doc). check, when not nil, is called
// with the spawn's plan before anything is applied (spec.PlanCheck).
func StartConfined(cmd *exec.Cmd, cfg spec.Config, tty bool, check spec.PlanCheck) (*Proc, error) {
	path := cmd.Path
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("sandbox: Run: %w", err)
	}
	var group *treeGroup
	var pidNS bool
	var git gitEnd
	opts := wrapOptions{failurePipe: w, denySetsid: true, denyPdeathsigChange: true, killGroup: true, group: &group, git: &git, check: check}
	if !tty {
		// With a terminal the program must get ^C, ^Z and ^\ as any
		// program does, which PID 1 of a namespace does not unless it
		// handles them: no PID namespace then.
		opts.pidNS = &pidNS
	}
	g, err := wrapLinux(cmd, cfg, opts)
	if err != nil {
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
	if g != nil {
		// The child has its copy; a child that dies before its network
		// step then ends the proxy's wait for the listener.
		g.closeChildEnd()
	}
	if err != nil {
		r.Close()
		group.close()
		if g != nil {
			g.Close()
		}
		return nil, fmt.Errorf("sandbox: Run %s: %w", path, err)
	}
	return &Proc{cmd: cmd, path: path, report: r, spawn: cfg.AllowProcessSpawn, pidNS: pidNS, command: newCommand(group, g, git)}, nil
}

// WaitExit returns when the program has exited, without reaping it: until
// cmd.Wait, its PID (which is also its session's ID) cannot be reused.
func (p *Proc) WaitExit() {
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, p.cmd.Process.Pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return
		}
	}
}

// Kill kills the program and every process of its tree.
func (p *Proc) Kill() {
	// The program itself first, by its PID, which is not reaped: before
	// its child half has joined the tree's cgroup, the cgroup is empty.
	// Without spawn the program is its only process.
	p.cmd.Process.Signal(syscall.SIGKILL)
	if p.spawn {
		p.killTree()
	}
}

// KillRest kills what outlived the program.
func (p *Proc) KillRest() {
	if p.spawn {
		p.killTree()
	}
}

// killTree kills every process of the tree: through the tree's cgroup
// where it can stop the tree whole (cgroup v2's cgroup.kill, or the v1
// freezer: see cgroup.Group.Kill), else through the PID namespace, else
// by killSession. Every process of the tree is in its cgroup: the child
// half joins it before the target runs, and so before any fork; and a
// process cannot leave it without write access to a cgroup.procs file
// (Landlock grants none under /sys/fs/cgroup unless the Config does).
//
// Where namespaces are available the program is also PID 1 of a PID
// namespace of its own (see wrapOptions.pidNS), with a cgroup only where
// the Limits need one (none is made for the kill alone: see
// pidNamespaceKills): a SIGKILL to it (from this, an ancestor namespace, it cannot ignore it)
// makes the kernel kill every process of the namespace, and its parent
// sees it exit only once they are all gone (zap_pid_ns_processes); after
// it exited on its own, nothing of the tree is left. Its PID is not reused
// meanwhile: it is not reaped before the kill is done. The same happens
// when the caller is killed: the program's Pdeathsig SIGKILL ends it, and
// the kernel the rest (TestRunKilledCaller).
func (p *Proc) killTree() {
	if t := p.command.group; t != nil && t.g != nil && t.raceFree {
		if t.g.Kill() == nil {
			return
		}
	}
	if p.pidNS {
		p.cmd.Process.Signal(syscall.SIGKILL)
		return
	}
	killSession(p.cmd.Process.Pid)
}

// Command is what the wrapping set up beside the process, for Run to end
// once the whole session is gone (as FinishCommand ends WrapCommand's).
func (p *Proc) Command() *Command { return p.command }

// Failure reads the trampoline's report, once the program has exited: empty
// when execve succeeded (the pipe was close-on-exec).
func (p *Proc) Failure() error {
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

// killSession kills every process whose session ID is sid: Run's tree
// kill where the tree has no cgroup that can stop it whole (see killTree),
// and the fallback if that kill fails.
//
// Without a cgroup the kernel offers no atomic "kill this tree", and a
// SIGKILL per process found by a /proc scan loses to a chain of processes
// that each fork a successor and exit: the successor is born after the
// scan passed its PID. So the session is frozen first: the program's
// process group gets SIGSTOP as a group (which also reaches forks in
// flight), every live process found in the session gets it too, and scans repeat until two consecutive scans find
// every process of the session stopped and no member the scan before did
// not list. One scan that finds none running never ends the loop: a member
// listed while running can fork and exit before its state is read, so
// that it looks dead and its child, born after the listing, is missed;
// the next scan lists that child as new. A stopped process cannot fork,
// and only a running process of the session could continue one
// (Landlock's signal scope keeps outsiders, and the program's seccomp
// filter keeps ptrace, out). Then every process gets SIGKILL, and scans go
// on, by the same rule, until two consecutive scans find nothing alive and
// nothing new; the group SIGKILL alone always ends the program itself.
// Each phase takes at most killWait/2. What is not closed: a chain whose
// every member first moves to a process group of its own and then forks
// is caught only by the scans, and may outlast both phases
// (TestRunKillsPgrpChain: seconds of chasing); the cgroup kill, and where
// there is none the PID namespace (TestRunPIDNamespaceKill), close that:
// this scan runs only where neither is available.
//
// A process cannot leave the session: Run's seccomp filter refuses
// setsid(2). The session ID cannot name another session meanwhile: it is
// the PID of the program, which Run has not reaped yet.
func killSession(sid int) {
	for _, sig := range []unix.Signal{unix.SIGSTOP, unix.SIGKILL} {
		// Each phase has its own time: the SIGKILL phase must run even
		// when freezing did not finish, or a stopped program would never
		// exit.
		deadline := time.Now().Add(killWait / 2)
		var seen map[int]bool
		delay := 50 * time.Microsecond
		for quiet := 0; quiet < 2 && time.Now().Before(deadline); {
			members, busy := signalSession(sid, sig)
			// Quiet: nothing running (SIGSTOP) or alive (SIGKILL), and
			// no member the scan before did not list: a member that
			// was listed running but had forked and exited by the time
			// its state was read looks dead, and its child was born
			// after the listing; the next scan lists the child.
			newcomer := false
			for pid := range members {
				if !seen[pid] {
					newcomer = true
				}
			}
			seen = members
			if busy == 0 && !newcomer {
				quiet++
				continue
			}
			quiet = 0
			time.Sleep(delay)
			delay = min(2*delay, 10*time.Millisecond)
		}
	}
}

// signalSession sends sig to the live processes of session sid. It returns
// every member it listed (zombies too), and how many were busy: for
// SIGSTOP, alive and not stopped when it looked; for SIGKILL, alive.
func signalSession(sid int, sig unix.Signal) (members map[int]bool, busy int) {
	members = map[int]bool{}
	// First the program's own process group, whose ID is the session's
	// (a session leader cannot change its group): a signal to a process
	// group also reaches the children of forks in flight (the kernel
	// restarts a fork that a group signal interrupts, or delivers the
	// signal to both), so a chain of forks in that group is caught at
	// once. Members that moved to another group of the session are
	// signalled one by one below.
	unix.Kill(-sid, sig)
	d, err := os.Open("/proc")
	if err != nil {
		return members, 0
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
		members[pid] = true
		// The PID may have been reused since it was read: pin the
		// process with a pidfd, check again, and signal through the
		// pidfd, which never reaches a later process with that PID.
		pidfd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			continue // gone
		}
		if state, session, ok := procStat(pid); ok && session == sid {
			unix.PidfdSendSignal(pidfd, sig, nil, 0)
			if procAlive(pid, state) && (sig == unix.SIGKILL || state != 'T') {
				busy++
			}
		}
		unix.Close(pidfd)
	}
	return members, busy
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
