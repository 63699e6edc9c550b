//go:build darwin

package pty

import (
	"bytes"
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// The requests that read and set a terminal's attributes here.
const (
	getTermios = unix.TIOCGETA
	setTermios = unix.TIOCSETA
)

// Open returns a new pair: master (the caller's end, non-blocking, so that
// read deadlines work and a Close ends a read in progress) and tty (the
// program's end). Both are close-on-exec.
//
// This is posix_openpt, grantpt, unlockpt and ptsname as macOS's libc makes
// them, with the ioctls they use. Unlike Linux (TIOCGPTPEER), macOS has no
// way to open the terminal end through the master: it is opened by the name
// the master reports, a /dev/ttysNNN node the kernel created for this pair
// and that grantpt gave to this user.
//
// Never run on a Mac (none was available): TestOpen (pty_test.go) is what
// checks it there.
func Open() (master, tty *os.File, err error) {
	mfd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("pty: open /dev/ptmx: %w", err)
	}
	fail := func(what string, err error) (*os.File, *os.File, error) {
		unix.Close(mfd)
		return nil, nil, fmt.Errorf("pty: %s: %w", what, err)
	}
	if err := unix.IoctlSetInt(mfd, unix.TIOCPTYGRANT, 0); err != nil {
		return fail("grant", err)
	}
	if err := unix.IoctlSetInt(mfd, unix.TIOCPTYUNLK, 0); err != nil {
		return fail("unlock", err)
	}
	var name [128]byte // TIOCPTYGNAME's size, in its request number
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(mfd), unix.TIOCPTYGNAME, uintptr(unsafe.Pointer(&name[0]))); errno != 0 {
		return fail("terminal name", errno)
	}
	path := string(name[:max(0, bytes.IndexByte(name[:], 0))])
	if len(path) < len("/dev/tty") || path[:len("/dev/tty")] != "/dev/tty" {
		return fail("terminal name", fmt.Errorf("unexpected name %q", path))
	}
	sfd, err := unix.Open(path, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fail("open "+path, err)
	}
	if err := unix.SetNonblock(mfd, true); err != nil {
		unix.Close(sfd)
		return fail("non-blocking", err)
	}
	return os.NewFile(uintptr(mfd), "/dev/ptmx"), os.NewFile(uintptr(sfd), path), nil
}
