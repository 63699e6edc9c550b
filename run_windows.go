//go:build windows

package sandbox

import (
	"context"
	"os"
	"os/exec"

	"github.com/openparallax/sandbox/internal/windows"
)

// confinedProc is a started, wrapped command on Windows: a process in its
// own Job Object, which holds every process it creates (windows.Proc).
type confinedProc struct{ p *windows.Proc }

// startConfined wraps cmd with a Sandbox of its own, starts it (suspended),
// and calls PostStart, which assigns it to its job and resumes it; a
// console standard input is copied through a pipe (windows.Start).
func startConfined(_ context.Context, cmd *exec.Cmd, cfg Config, _ bool, _ string) (*confinedProc, error) {
	sb := &windowsSandbox{}
	if err := sb.WrapCommand(cmd, cfg); err != nil {
		return nil, err
	}
	p, err := windows.Start(cmd, &sb.jobs)
	if err != nil {
		return nil, err
	}
	return &confinedProc{p}, nil
}

func (p *confinedProc) waitExit() { p.p.WaitExit() }

// kill terminates the job: every process in it ends.
func (p *confinedProc) kill() { p.p.Kill() }

// killRest terminates the job and waits until it holds no process, so that
// Run returns only after every process of the job is gone.
func (p *confinedProc) killRest() { p.p.KillRest() }

// finish releases the job; nothing else was set up beside the process
// here: the report is empty (no limits, egress proxy or git checks on
// Windows yet).
func (p *confinedProc) finish(*os.ProcessState) (CommandReport, error) {
	return CommandReport{}, p.p.Release()
}

func (p *confinedProc) failure() error { return nil }

// outputPipe returns a pipe whose read end (Run's) is polled by the
// runtime, so that SetReadDeadline works (windows.OutputPipe).
func outputPipe() (r, w *os.File, err error) { return windows.OutputPipe() }
