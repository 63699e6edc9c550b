package darwin

import (
	"errors"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/openparallax/sandbox/internal/spec"
)

// macOS cannot show a path elsewhere nor give a program its own root:
// WrapCommand refuses such a Config with the reason (before looking at
// sandbox-exec), and leaves the command as it was.
func TestWrapCommandRefusesViews(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("a Seatbelt profile takes POSIX paths (a Mount's at is one); Windows paths cannot appear in one")
	}
	dir := t.TempDir()
	for _, cfg := range []spec.Config{
		{Mounts: []spec.Mount{{Path: dir, At: "/workspace"}}},
		{PrivateRoot: true},
	} {
		cmd := exec.Command("/usr/bin/true")
		err := WrapCommand(cmd, cfg, nil, "")
		if !errors.Is(err, spec.ErrUnavailable) || !strings.Contains(err.Error(), "refused") || cmd.Path != "/usr/bin/true" {
			t.Errorf("%+v: %v (cmd.Path %s); want a refusal matching ErrUnavailable, the command untouched", cfg, err, cmd.Path)
		}
	}
}
