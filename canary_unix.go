//go:build linux || darwin

package sandbox

import "golang.org/x/sys/unix"

// tryRead opens path for reading, as the file_read probe does: without
// following a symlink at the last component, closing what it opened.
func tryRead(path string) error {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err == nil {
		unix.Close(fd)
	}
	return pathErr("open", path, err)
}

// tryCreate creates a new file in dir, as the file_write probe does
// (O_CREAT|O_EXCL|O_NOFOLLOW under a fresh name), and removes it if it was
// created. It returns the name it tried.
func tryCreate(dir string) (string, error) {
	path := canaryFileName(dir)
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err == nil {
		unix.Close(fd)
		unix.Unlink(path)
	}
	return path, pathErr("create", path, err)
}
