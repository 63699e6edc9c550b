//go:build unix

package main

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/openparallax/sandbox"
	"github.com/openparallax/sandbox/internal/pty"
)

// callerTerminal puts the caller's terminal in raw mode (keys reach the
// program's terminal as they are: ^C becomes the program's SIGINT there)
// and forwards its window size, now and on each SIGWINCH.
func callerTerminal(f *os.File) (restore func(), resize <-chan sandbox.WindowSize, err error) {
	undo, err := pty.MakeRaw(f)
	if err != nil {
		return nil, nil, err
	}
	ch := make(chan sandbox.WindowSize, 1)
	winch := make(chan os.Signal, 1)
	signal.Notify(winch, syscall.SIGWINCH)
	send := func() {
		if rows, cols, err := pty.Size(f); err == nil {
			select {
			case ch <- sandbox.WindowSize{Rows: rows, Cols: cols}:
			default:
			}
		}
	}
	send()
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-winch:
				send()
			case <-done:
				return
			}
		}
	}()
	return func() {
		signal.Stop(winch)
		close(done)
		undo()
	}, ch, nil
}
