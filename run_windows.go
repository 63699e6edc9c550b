//go:build windows

package sandbox

import (
	"errors"
	"fmt"
	"os/exec"

	"golang.org/x/sys/windows"
)

// confinedProc is a started, wrapped command on Windows: a process in its
// own Job Object, which holds every process it creates.
type confinedProc struct {
	cmd *exec.Cmd
	ps  PostStarter
}

// startConfined wraps cmd with a Sandbox of its own, starts it (suspended),
// and calls PostStart, which assigns it to its job and resumes it.
func startConfined(cmd *exec.Cmd, cfg Config) (*confinedProc, error) {
	path := cmd.Path
	sb := New()
	ps, ok := sb.(PostStarter)
	if !ok {
		return nil, errors.New("sandbox: Run: the Windows sandbox does not implement PostStarter")
	}
	if err := sb.WrapCommand(cmd, cfg); err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		ps.Close()
		return nil, fmt.Errorf("sandbox: Run %s: %w", path, err)
	}
	if err := ps.PostStart(cmd.Process.Pid); err != nil {
		ps.Close()
		cmd.Wait()
		return nil, fmt.Errorf("sandbox: Run %s: %w", path, err)
	}
	return &confinedProc{cmd: cmd, ps: ps}, nil
}

func (p *confinedProc) waitExit() {
	p.cmd.Process.WithHandle(func(h uintptr) {
		windows.WaitForSingleObject(windows.Handle(h), windows.INFINITE)
	})
}

// kill closes the job: KILL_ON_JOB_CLOSE ends every process in it.
func (p *confinedProc) kill() { p.ps.Close() }

func (p *confinedProc) killRest() { p.ps.Close() }

func (p *confinedProc) release() error { return p.ps.Close() }

func (p *confinedProc) failure() error { return nil }
