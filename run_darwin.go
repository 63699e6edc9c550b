//go:build darwin

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/openparallax/sandbox/internal/darwin"
	"golang.org/x/sys/unix"
)

// confinedProc is a started, wrapped command on macOS: a session (and
// process group) leader, with its private temporary directory.
type confinedProc struct {
	cmd *exec.Cmd
	tmp string // removed by release
}

// startConfined wraps cmd with this platform's WrapCommand and starts it in
// a new session. The program gets a private temporary directory, made for
// this run under os.TempDir (/var/folders/…, resolved to /private/var/…),
// added to the write paths and removed by release; TMPDIR, HOME and
// GIT_CONFIG_GLOBAL point into it unless cmd.Env sets them (darwin.RunEnv).
// Without it no temporary directory is writable: /tmp and the per-user
// /var/folders are not granted.
func startConfined(cmd *exec.Cmd, cfg Config, tty bool) (*confinedProc, error) {
	path := cmd.Path
	tmp, err := os.MkdirTemp("", "sandbox-run-")
	if err != nil {
		return nil, fmt.Errorf("sandbox: Run: private temporary directory: %w", err)
	}
	real, err := filepath.EvalSymlinks(tmp)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("sandbox: Run: private temporary directory: %w", err)
	}
	cfg.AllowedWritePaths = append(slices.Clone(cfg.AllowedWritePaths), real)
	cmd.Env = darwin.RunEnv(cmd.Env, real)
	// With RunOptions.TTY (tty), Run made the program's standard input,
	// output and error one pseudo-terminal of its own, and the profile
	// must let the program use it as a terminal (a terminal never reaches
	// here otherwise: Run passes only regular files and FIFOs as they
	// are).
	terminal := ""
	if in, ok := cmd.Stdin.(*os.File); tty && ok {
		terminal = in.Name()
	}
	if err := darwin.WrapCommand(cmd, cfg.spec(), darwin.SandboxExec(), terminal); err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	attr := &syscall.SysProcAttr{}
	if cmd.SysProcAttr != nil {
		*attr = *cmd.SysProcAttr
	}
	attr.Setsid = true
	cmd.SysProcAttr = attr
	if err := cmd.Start(); err != nil {
		os.RemoveAll(tmp)
		return nil, fmt.Errorf("sandbox: Run %s: %w", path, err)
	}
	return &confinedProc{cmd: cmd, tmp: tmp}, nil
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

// finish removes the private temporary directory. Nothing else was set up
// beside the process here: the report is empty (no limits, egress proxy or
// git checks on macOS).
func (p *confinedProc) finish(*os.ProcessState) (CommandReport, error) {
	if err := os.RemoveAll(p.tmp); err != nil {
		return CommandReport{}, fmt.Errorf("removing the private temporary directory: %w", err)
	}
	return CommandReport{}, nil
}

func (p *confinedProc) failure() error { return nil }
