//go:build linux

package sandbox

import (
	"context"
	"os"
	"os/exec"

	"github.com/openparallax/sandbox/internal/linux"
	"github.com/openparallax/sandbox/internal/spec"
)

// confinedProc is a started, wrapped command on Linux: a session leader
// whose session holds every process it created (linux.Proc).
type confinedProc struct{ p *linux.Proc }

// startConfined wraps cmd for Run and starts it (see linux.StartConfined).
// tty is RunOptions.TTY: the program then gets no PID namespace. The
// spawn's plan goes to ctx's spec.PlanCheck, if any, before it is applied.
func startConfined(ctx context.Context, cmd *exec.Cmd, cfg Config, tty bool, runTemp string) (*confinedProc, error) {
	sc := cfg.spec()
	sc.RunTemp = runTemp
	p, err := linux.StartConfined(cmd, sc, tty, spec.PlanCheckOf(ctx))
	if err != nil {
		return nil, err
	}
	return &confinedProc{p}, nil
}

func (c *confinedProc) waitExit()      { c.p.WaitExit() }
func (c *confinedProc) kill()          { c.p.Kill() }
func (c *confinedProc) killRest()      { c.p.KillRest() }
func (c *confinedProc) failure() error { return c.p.Failure() }

// finish ends what the wrapping set up beside the process, once the whole
// session is gone: the same finish as FinishCommand's.
func (c *confinedProc) finish(ps *os.ProcessState) (CommandReport, error) {
	return newSession(c.p.Command()).finish(ps)
}
