//go:build linux

package sandbox_test

import (
	"context"
	"strings"
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

// TestRunTTY: with TTY the program's stdin, stdout and stderr are a
// pseudo-terminal Run owns, and it is the program's controlling terminal.
func TestRunTTY(t *testing.T) {
	requireSandbox(t)
	for _, prog := range []string{"/bin/sleep", "/bin/stty", "/usr/bin/tty"} {
		need(t, prog, "coreutils")
	}
	cfg := sandbox.Config{AllowProcessSpawn: true, AllowedExecPaths: []string{"/usr/bin", "/bin"}}
	resize := make(chan sandbox.WindowSize, 1)
	resize <- sandbox.WindowSize{Rows: 33, Cols: 101}
	var streamed strings.Builder
	res, err := sandbox.Run(context.Background(), cfg, "/bin/sh",
		[]string{"-c", `sleep 0.2; test -t 0 && test -t 1 && test -t 2 && echo all-terminals; stty size; echo to-stderr >&2; tty >/dev/null && echo has-tty`},
		sandbox.RunOptions{TTY: true, Resize: resize, Stdout: &streamed, Env: []string{"PATH=/usr/bin:/bin"}, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	want := "all-terminals\r\n33 101\r\nto-stderr\r\nhas-tty\r\n"
	if got := string(res.Stdout); got != want || streamed.String() != want {
		t.Errorf("stdout %q, streamed %q, want %q (stderr %q, exit %d %s)", got, streamed.String(), want, res.Stderr, res.ExitCode, res.State)
	}
}
