//go:build !linux && !darwin && !windows

package sandbox

import (
	"context"
	"fmt"
	"os"
	"os/exec"
)

// confinedProc never exists here: WrapCommand fails closed.
type confinedProc struct{}

func startConfined(_ context.Context, cmd *exec.Cmd, cfg Config, _ bool, _ string) (*confinedProc, error) {
	if err := New().WrapCommand(cmd, cfg); err != nil {
		return nil, err
	}
	return nil, errUnreachable
}

var errUnreachable = fmt.Errorf("%w: no sandbox mechanism", ErrUnavailable)

func (*confinedProc) waitExit()      {}
func (*confinedProc) kill()          {}
func (*confinedProc) killRest()      {}
func (*confinedProc) failure() error { return nil }

func (*confinedProc) finish(*os.ProcessState) (CommandReport, error) { return CommandReport{}, nil }
