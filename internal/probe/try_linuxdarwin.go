//go:build linux || darwin

package probe

import "golang.org/x/sys/unix"

// TryRead opens path for reading, as the file_read probe does: without
// following a symlink at the last component, closing what it opened.
func TryRead(path string) error {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err == nil {
		unix.Close(fd)
	}
	return PathErr("open", path, err)
}

// TryCreate creates a new file in dir, as the file_write probe does
// (O_CREAT|O_EXCL|O_NOFOLLOW under a fresh name), and removes it if it was
// created. It returns the name it tried.
func TryCreate(dir string) (string, error) {
	path := FileName(dir)
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err == nil {
		unix.Close(fd)
		unix.Unlink(path)
	}
	return path, PathErr("create", path, err)
}
