package sandbox_test

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/openparallax/sandbox"
	"github.com/openparallax/sandbox/internal/childtest"
)

// exportP prints the program's environment with the shell's own builtin
// (no coreutils needed: the kernel-matrix guests have only /bin/sh).
var exportP = []string{"-c", "export -p"}

// TestConfigEnvIsTheWholeEnvironment: under Run, Config.Env is what the
// program sees, plus only Run's temporary directory and private HOME; a
// variable of the caller's does not reach it.
func TestConfigEnvIsTheWholeEnvironment(t *testing.T) {
	requireSandbox(t)
	t.Setenv("SANDBOX_TEST_CALLER_SECRET", "leaked")
	cfg := sandbox.Config{AllowedExecPaths: []string{"/bin", "/usr/bin"}, Env: map[string]string{"PATH": "/usr/bin:/bin", "FOO": "bar baz"}}
	res, err := sandbox.Run(context.Background(), cfg, "/bin/sh", exportP, sandbox.RunOptions{Timeout: 30 * time.Second})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("Run: %v, exit %d, stderr %q", err, res.ExitCode, res.Stderr)
	}
	out := string(res.Stdout)
	for _, want := range []string{"FOO='bar baz'", "PATH='/usr/bin:/bin'", "TMPDIR=", "HOME="} {
		if !strings.Contains(out, want) {
			t.Errorf("environment lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, "SANDBOX_TEST_CALLER_SECRET") {
		t.Errorf("the caller's variable reached the program:\n%s", out)
	}
}

// TestConfigEnvHasOneOwner: Config.Env together with RunOptions.Env or
// cmd.Env is refused before anything runs, and WrapCommand leaves cmd as
// it was.
func TestConfigEnvHasOneOwner(t *testing.T) {
	requireSandbox(t)
	cfg := sandbox.Config{Env: map[string]string{"A": "1"}}
	res, err := sandbox.Run(context.Background(), cfg, "/bin/sh", exportP, sandbox.RunOptions{Env: []string{"B=2"}})
	if !errors.Is(err, sandbox.ErrInvalidConfig) || res.ExitCode != -1 || res.State != "" {
		t.Errorf("Run with both: %v, exit %d, state %q; want ErrInvalidConfig and nothing run", err, res.ExitCode, res.State)
	}
	cmd := exec.Command("/bin/sh", exportP...)
	cmd.Env = []string{"B=2"}
	if err := sandbox.New().WrapCommand(cmd, cfg); !errors.Is(err, sandbox.ErrInvalidConfig) {
		t.Errorf("WrapCommand with both: %v; want ErrInvalidConfig", err)
	}
	if len(cmd.Env) != 1 || cmd.Env[0] != "B=2" || cmd.Path != "/bin/sh" {
		t.Errorf("WrapCommand changed the command it refused: Env %q, Path %q", cmd.Env, cmd.Path)
	}
	bad := sandbox.Config{Env: map[string]string{"A=B": "x"}}
	if _, err := sandbox.Run(context.Background(), bad, "/bin/sh", exportP, sandbox.RunOptions{}); !errors.Is(err, sandbox.ErrInvalidConfig) {
		t.Errorf("a name with '=': %v; want ErrInvalidConfig", err)
	}
}

// TestConfigEnvWrapCommand: WrapCommand makes Config.Env the command's
// environment, and the confined program sees it.
func TestConfigEnvWrapCommand(t *testing.T) {
	requireSandbox(t)
	cfg := sandbox.Config{AllowedExecPaths: []string{"/bin", "/usr/bin"}, Env: map[string]string{"FOO": "from-config"}}
	cmd := exec.Command("/bin/sh", exportP...)
	if err := sandbox.New().WrapCommand(cmd, cfg); err != nil {
		t.Fatal(err)
	}
	out, err := cmd.Output()
	sandbox.FinishCommand(cmd)
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !strings.Contains(string(out), "FOO='from-config'") || strings.Contains(string(out), "PATH=") {
		t.Errorf("want exactly Config.Env (FOO, no PATH):\n%s", out)
	}
}

// TestConfigEnvApplySelfRefused: ApplySelf cannot replace its own
// environment, so a Config with Env is refused and nothing is applied
// (checked in a child: were it applied, the child could not start a program).
func TestConfigEnvApplySelfRefused(t *testing.T) {
	requireSandbox(t)
	childtest.Run(t, func(t *testing.T) {
		err := sandbox.New().ApplySelf(sandbox.Config{Env: map[string]string{}})
		if !errors.Is(err, sandbox.ErrInvalidConfig) {
			t.Fatalf("ApplySelf with Env: %v; want ErrInvalidConfig", err)
		}
		if err := exec.Command("/bin/sh", "-c", "exit 0").Run(); err != nil {
			t.Errorf("the refused ApplySelf restricted the process anyway: %v", err)
		}
	})
}
