//go:build !linux

package seccomp

import (
	"errors"
	"fmt"
	"runtime"
)

// Supported reports whether the running kernel supports seccomp filters. It
// is always false outside Linux.
func Supported() bool { return false }

// Load installs filters on Linux. Outside Linux it loads nothing and returns
// an error wrapping errors.ErrUnsupported.
func Load(filters ...Filter) error {
	return fmt.Errorf("seccomp: cannot load filters on %s: %w", runtime.GOOS, errors.ErrUnsupported)
}
