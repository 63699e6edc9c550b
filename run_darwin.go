//go:build darwin

package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"github.com/openparallax/sandbox/internal/darwin"
	"golang.org/x/sys/unix"
)

// confinedProc is a started, wrapped command on macOS: a session (and
// process group) leader.
type confinedProc struct {
	cmd *exec.Cmd
}

// startConfined wraps cmd with this platform's WrapCommand and starts it in
// a new session. Run has made the program's private temporary directory
// (internal/runtemp: granted read-write, TMPDIR and HOME inside it, removed
// by Run); darwin.RunEnv adds GIT_CONFIG_GLOBAL inside it and
// GIT_CONFIG_NOSYSTEM unless cmd.Env sets them. /tmp and the per-user
// /var/folders are not granted.
func startConfined(_ context.Context, cmd *exec.Cmd, cfg Config, tty bool, _ string) (*confinedProc, error) {
	path := cmd.Path
	cmd.Env = darwin.RunEnv(cmd.Env)
	// With RunOptions.TTY (tty), Run made the program's standard input,
	// output and error one pseudo-terminal of its own and, through
	// SysProcAttr (setsid, TIOCSCTTY), its controlling terminal; the
	// profile must let the program use it as a terminal, /dev/tty
	// included (a terminal never reaches here otherwise: Run passes only
	// regular files and FIFOs as they are).
	terminal := ""
	if in, ok := cmd.Stdin.(*os.File); tty && ok && cmd.SysProcAttr != nil && cmd.SysProcAttr.Setctty && cmd.SysProcAttr.Setsid {
		terminal = in.Name()
	}
	if err := darwin.WrapCommand(cmd, cfg.spec(), darwin.SandboxExec(), terminal); err != nil {
		return nil, err
	}
	attr := &syscall.SysProcAttr{}
	if cmd.SysProcAttr != nil {
		*attr = *cmd.SysProcAttr
	}
	attr.Setsid = true
	cmd.SysProcAttr = attr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("sandbox: Run %s: %w", path, err)
	}
	return &confinedProc{cmd: cmd}, nil
}

// waitExit returns when the program has exited, without reaping it, so
// that its process group ID cannot be reused before kill: kqueue's
// EVFILT_PROC NOTE_EXIT.
func (p *confinedProc) waitExit() {
	kq, err := unix.Kqueue()
	if err != nil {
		p.cmd.Process.Wait() // last resort; cmd.Wait then reports the error
		return
	}
	defer unix.Close(kq)
	ev := []unix.Kevent_t{{Ident: uint64(p.cmd.Process.Pid), Filter: unix.EVFILT_PROC, Flags: unix.EV_ADD | unix.EV_ONESHOT, Fflags: unix.NOTE_EXIT}}
	out := make([]unix.Kevent_t, 1)
	for {
		_, err := unix.Kevent(kq, ev, out, nil)
		if err == unix.EINTR {
			ev = nil // registered already
			continue
		}
		return // exited, or ESRCH: exited before registration
	}
}

// kill kills the program's process group (not enforced for descendants that
// moved to another group).
func (p *confinedProc) kill() { syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL) }

func (p *confinedProc) killRest() { p.kill() }

// finish has nothing to undo: Run removes the private temporary directory,
// and the report is empty (no limits, egress proxy or after-run git report
// on macOS: the profile's git denies hold during the run instead).
func (p *confinedProc) finish(*os.ProcessState) (CommandReport, error) {
	return CommandReport{}, nil
}

func (p *confinedProc) failure() error { return nil }
