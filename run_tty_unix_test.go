//go:build linux || darwin

package sandbox_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/openparallax/sandbox"
)

// TestRunTTY: with TTY the program's stdin, stdout and stderr are a
// pseudo-terminal Run owns, its controlling terminal, usable as a terminal
// under the sandbox (tcgetattr, the window size: on macOS the profile's
// grant on exactly this terminal), with stderr merged into stdout.
func TestRunTTY(t *testing.T) {
	requireTTYRun(t)
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
