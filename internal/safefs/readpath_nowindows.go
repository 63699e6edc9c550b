//go:build !windows

package safefs

import (
	"io/fs"
	"os"

	"golang.org/x/sys/unix"
)

// ReadFileNoFollow reads the file at p, which must be a regular file and
// not a symbolic link at its last component, at most max bytes
// (ErrTooLarge past it). It opens p with O_NOFOLLOW|O_NONBLOCK|O_NOCTTY,
// so neither a link nor a FIFO swapped in at any moment makes it follow
// or wait, then refuses by fstat whatever is not a regular file
// (ErrSpecial: a device so opened is closed unread). Links above the last
// component are followed: p is a path the caller trusts up to its
// directory (the status file under the workspace it chose).
func ReadFileNoFollow(p string, max int64) ([]byte, error) {
	fd, err := unix.Open(p, fileFlags, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: p, Err: classify(err)}
	}
	f := os.NewFile(uintptr(fd), p)
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil, &fs.PathError{Op: "read", Path: p, Err: err}
	}
	if err := wantRegular(&st); err != nil {
		return nil, &fs.PathError{Op: "read", Path: p, Err: err}
	}
	b, err := readBounded(f, st.Size, max)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: p, Err: err}
	}
	return b, nil
}
