//go:build linux

// Package pty opens pseudo-terminal pairs for Run and `sandbox run --tty`:
// the program gets the pair's terminal end, the caller keeps the other, so
// that no program is ever handed the caller's own terminal (whatever it does
// to its terminal, it does to one the caller owns and closes).
package pty

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
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

// SetSize sets the terminal's window size (the program receives SIGWINCH).
// It is safe to call while another goroutine closes master: it then
// returns an error.
func SetSize(master *os.File, rows, cols uint16) error {
	rc, err := master.SyscallConn()
	if err != nil {
		return err
	}
	var ioErr error
	err = rc.Control(func(fd uintptr) {
		ioErr = unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, &unix.Winsize{Row: rows, Col: cols})
	})
	if err != nil {
		return err
	}
	return ioErr
}

// IsTerminal reports whether f is a terminal.
func IsTerminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}

// Size returns the window size of the terminal f.
func Size(f *os.File) (rows, cols uint16, err error) {
	ws, err := unix.IoctlGetWinsize(int(f.Fd()), unix.TIOCGWINSZ)
	if err != nil {
		return 0, 0, err
	}
	return ws.Row, ws.Col, nil
}

// MakeRaw puts the terminal f in raw mode (no echo, no line editing, no
// signals from keys: they reach the program through its own terminal) and
// returns a function that restores what it was.
func MakeRaw(f *os.File) (restore func() error, err error) {
	fd := int(f.Fd())
	old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return nil, err
	}
	raw := *old
	raw.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	raw.Oflag &^= unix.OPOST
	raw.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	raw.Cflag &^= unix.CSIZE | unix.PARENB
	raw.Cflag |= unix.CS8
	raw.Cc[unix.VMIN] = 1
	raw.Cc[unix.VTIME] = 0
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &raw); err != nil {
		return nil, err
	}
	return func() error { return unix.IoctlSetTermios(fd, unix.TCSETS, old) }, nil
}
