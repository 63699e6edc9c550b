//go:build !linux && !darwin

package pty

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
)

var errUnsupported = errors.New("pty: pseudo-terminals are not implemented on " + runtime.GOOS)

// Open is not implemented here.
func Open() (master, tty *os.File, err error) { return nil, nil, errUnsupported }

// SetSize is not implemented here.
func SetSize(*os.File, uint16, uint16) error { return errUnsupported }

// IsTerminal reports whether f is a character device (a terminal, or
// another device such as the null device).
func IsTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// Size is not implemented here.
func Size(*os.File) (uint16, uint16, error) { return 0, 0, errUnsupported }

// MakeRaw is not implemented here.
func MakeRaw(*os.File) (func() error, error) { return nil, errUnsupported }

// SetControllingTerminal is never reached here: Run refuses TTY first
// (Refusal). It leaves cmd unchanged.
func SetControllingTerminal(*exec.Cmd) {}

// Refusal says why Run cannot give the program a pseudo-terminal here
// (never ""): pseudo-terminals are not implemented on this GOOS.
func Refusal() string {
	return "pseudo-terminals are not implemented on " + runtime.GOOS
}
