//go:build windows

package main

import (
	"errors"
	"os"

	"github.com/openparallax/sandbox"
)

// callerTerminal: --tty is not implemented on Windows.
func callerTerminal(*os.File) (func(), <-chan sandbox.WindowSize, error) {
	return nil, nil, errors.New("not implemented on Windows")
}
