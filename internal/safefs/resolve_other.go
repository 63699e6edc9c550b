//go:build !linux && !windows

package safefs

import "golang.org/x/sys/unix"

// openDirBeneath opens the directory cs beneath dirfd one component at a
// time, each with openat(O_NOFOLLOW|O_DIRECTORY): no openat2 here.
func openDirBeneath(dirfd int, cs []string) (int, error) { return walkEach(dirfd, cs) }

// chmodNoFollow sets name's mode in dirfd without following a link
// (fchmodat with AT_SYMLINK_NOFOLLOW, which macOS and the BSDs honour).
func chmodNoFollow(dirfd int, name string, mode uint32) error {
	return unix.Fchmodat(dirfd, name, mode, unix.AT_SYMLINK_NOFOLLOW)
}
