//go:build linux

package pty

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// The requests that read and set a terminal's attributes here.
const (
	getTermios = unix.TCGETS
	setTermios = unix.TCSETS
)

// Open returns a new pair: master (the caller's end, non-blocking, so that
// read deadlines work) and tty (the program's end). Both are close-on-exec.
func Open() (master, tty *os.File, err error) {
	mfd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("pty: open /dev/ptmx: %w", err)
	}
	master = os.NewFile(uintptr(mfd), "/dev/ptmx")
	if err := unix.IoctlSetPointerInt(mfd, unix.TIOCSPTLCK, 0); err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("pty: unlock: %w", err)
	}
	// TIOCGPTPEER opens the terminal end through the master, not by a
	// path another process could have replaced.
	r, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(mfd), unix.TIOCGPTPEER, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC)
	sfd := int(r)
	if errno != 0 {
		n, nerr := unix.IoctlGetUint32(mfd, unix.TIOCGPTN)
		if nerr != nil {
			master.Close()
			return nil, nil, fmt.Errorf("pty: terminal number: %w", nerr)
		}
		sfd, err = unix.Open("/dev/pts/"+strconv.Itoa(int(n)), unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
		if err != nil {
			master.Close()
			return nil, nil, fmt.Errorf("pty: open terminal: %w", err)
		}
	}
	return master, os.NewFile(uintptr(sfd), "/dev/pts"), nil
}
