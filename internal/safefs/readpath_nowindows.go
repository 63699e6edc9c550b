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
	return readPath(p, fileFlags, max)
}

// readPath opens p with flags, checks by fstat that it is a regular file,
// and reads at most max bytes.
func readPath(p string, flags int, max int64) ([]byte, error) {
	fd, err := unix.Open(p, flags, 0)
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

// ReadRegularFile reads the regular file at p, following symbolic links in
// every component as path resolution does, at most max bytes
// (ErrTooLarge past it): for a caller that must see what another program
// will see when it opens p (git opening a .git file), and whose use of
// what it reads cannot change or reveal anything on the host. It opens p
// with O_NONBLOCK|O_NOCTTY and refuses by fstat whatever is not a regular
// file (ErrSpecial), so neither a FIFO nor a link to /dev/zero makes it
// wait or read without end.
func ReadRegularFile(p string, max int64) ([]byte, error) {
	return readPath(p, fileFlags&^unix.O_NOFOLLOW, max)
}
