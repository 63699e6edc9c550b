//go:build linux

package sandbox_test

import (
	"context"
	"testing"
	"time"

	"github.com/openparallax/sandbox"
	"github.com/openparallax/sandbox/internal/pty"
)

// TestRunNeverHandsOverATerminal: a terminal passed as Stdin reaches the
// program through a pipe, not as the terminal itself (a program could
// otherwise change the caller's terminal: modes, window size, hang-up).
func TestRunNeverHandsOverATerminal(t *testing.T) {
	requireSandbox(t)
	master, tty, err := pty.Open() // a terminal of this test's own
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer master.Close()
	defer tty.Close()
	master.Write([]byte("typed\n"))
	cfg := sandbox.Config{AllowProcessSpawn: true, AllowedExecPaths: []string{"/usr/bin", "/bin"}}
	res, err := sandbox.Run(context.Background(), cfg, "/bin/sh",
		[]string{"-c", `if test -t 0; then echo stdin-is-a-terminal; else echo stdin-is-not-a-terminal; fi; read line; echo "got $line"`},
		sandbox.RunOptions{Stdin: tty, Env: []string{"PATH=/usr/bin:/bin"}, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(res.Stdout); got != "stdin-is-not-a-terminal\ngot typed\n" {
		t.Errorf("stdout %q", got)
	}
}

// requireTTYRun skips unless Run can confine here, with the programs
// TestRunTTY runs.
func requireTTYRun(t *testing.T) {
	t.Helper()
	requireSandbox(t)
	for _, prog := range []string{"/bin/sleep", "/bin/stty", "/usr/bin/tty"} {
		need(t, prog, "coreutils")
	}
}
