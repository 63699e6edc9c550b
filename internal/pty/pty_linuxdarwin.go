//go:build linux || darwin

package pty

import (
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

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
	_, err := unix.IoctlGetTermios(int(f.Fd()), getTermios)
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
	old, err := unix.IoctlGetTermios(fd, getTermios)
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
	if err := unix.IoctlSetTermios(fd, setTermios, &raw); err != nil {
		return nil, err
	}
	return func() error { return unix.IoctlSetTermios(fd, setTermios, old) }, nil
}

// SetControllingTerminal makes cmd's standard input (a terminal the caller
// owns, such as Open's tty) the program's controlling terminal: it sets
// Setsid, Setctty and Ctty 0 on a copy of cmd.SysProcAttr, keeping every
// other attribute already set. Run's startConfined keeps these attributes
// and adds the new session this needs.
func SetControllingTerminal(cmd *exec.Cmd) {
	attr := &syscall.SysProcAttr{}
	if cmd.SysProcAttr != nil {
		*attr = *cmd.SysProcAttr
	}
	attr.Setsid = true
	attr.Setctty = true
	attr.Ctty = 0
	cmd.SysProcAttr = attr
}

// Refusal says why Run cannot give the program a pseudo-terminal here, or
// "": on Linux and macOS it can (on macOS the Seatbelt profile then grants
// ioctl on exactly that terminal: see seatbelt.Policy.Terminal).
func Refusal() string { return "" }
