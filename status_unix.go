//go:build !windows

package sandbox

import (
	"os"
	"syscall"
)

// openStatus opens the status file for reading, refusing a symlink at the
// final component.
func openStatus(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
}

// replaceFile renames src over dst: atomic on POSIX.
func replaceFile(src, dst string) error { return os.Rename(src, dst) }
