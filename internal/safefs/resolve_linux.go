package safefs

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// noOpenat2 is set once openat2 answered ENOSYS: the kernel is older than
// 5.6, or a seccomp filter (this library's own, under ApplySelf) refuses
// it. It stays set for the process (a filter is never lifted).
var noOpenat2 atomic.Bool

// openDirBeneath opens the directory cs beneath dirfd with one openat2
// call that refuses every symbolic link and magic link on the way and any
// escape from dirfd; where openat2 is missing, one openat(O_NOFOLLOW) per
// component (walkEach): the same rule, more calls.
func openDirBeneath(dirfd int, cs []string) (int, error) {
	if !noOpenat2.Load() {
		fd, err := unix.Openat2(dirfd, strings.Join(cs, "/"), &unix.OpenHow{
			Flags:   uint64(dirFlags),
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS,
		})
		switch {
		case err == nil:
			return fd, nil
		case errors.Is(err, unix.ENOSYS):
			noOpenat2.Store(true)
		case errors.Is(err, unix.EAGAIN), errors.Is(err, unix.ENOTDIR):
			// RESOLVE_BENEATH answers EAGAIN when a rename elsewhere
			// raced the lookup; the per-component walk has no such
			// limit. ENOTDIR is also the answer for a link as the last
			// component: the walk says which it was.
		default:
			return -1, classify(err)
		}
	}
	return walkEach(dirfd, cs)
}

// chmodNoFollow sets name's mode in dirfd without following a link:
// fchmodat2(AT_SYMLINK_NOFOLLOW) (Linux 6.6); before that, through an
// O_PATH descriptor of the directory itself (opened O_NOFOLLOW|
// O_DIRECTORY, so it can be nothing else) and its /proc/self/fd entry.
func chmodNoFollow(dirfd int, name string, mode uint32) error {
	err := unix.Fchmodat(dirfd, name, mode, unix.AT_SYMLINK_NOFOLLOW)
	if !errors.Is(err, unix.EOPNOTSUPP) && !errors.Is(err, unix.ENOSYS) {
		return err
	}
	fd, err := unix.Openat(dirfd, name, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return classify(err)
	}
	defer unix.Close(fd)
	return unix.Chmod(fmt.Sprintf("/proc/self/fd/%d", fd), mode)
}
