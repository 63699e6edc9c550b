//go:build linux || darwin

package sandbox_test

import (
	"context"
	"io"
	"strings"
	"sync"
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

// readyWriter closes ready once the text written to it holds "ready".
type readyWriter struct {
	b     strings.Builder
	once  sync.Once
	ready chan struct{}
}

func (w *readyWriter) Write(p []byte) (int, error) {
	w.b.Write(p)
	if strings.Contains(w.b.String(), "ready") {
		w.once.Do(func() { close(w.ready) })
	}
	return len(p), nil
}

// TestRunTTYInterrupt: with TTY, ^C typed at the terminal interrupts a
// program that does not handle SIGINT, as it does outside the sandbox,
// also with spawn allowed (where a run without TTY makes the program PID 1
// of a PID namespace, which ignores signals it does not handle).
func TestRunTTYInterrupt(t *testing.T) {
	requireTTYRun(t)
	cfg := sandbox.Config{AllowProcessSpawn: true, AllowedExecPaths: []string{"/usr/bin", "/bin"}}
	out := &readyWriter{ready: make(chan struct{})}
	in, typed := io.Pipe()
	defer typed.Close()
	go func() {
		<-out.ready
		typed.Write([]byte{3}) // ^C
	}()
	start := time.Now()
	res, err := sandbox.Run(context.Background(), cfg, "/bin/sh", []string{"-c", `echo ready; exec sleep 30`},
		sandbox.RunOptions{TTY: true, Stdin: in, Stdout: out, Env: []string{"PATH=/usr/bin:/bin"}, Timeout: 15 * time.Second})
	if err != nil {
		t.Fatalf("%v (after %v): ^C did not end the program; stdout %q", err, time.Since(start), res.Stdout)
	}
	if res.State != "signal: interrupt" {
		t.Errorf("state %q, want signal: interrupt (stdout %q)", res.State, res.Stdout)
	}
}
