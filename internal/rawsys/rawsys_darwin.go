//go:build darwin

package rawsys

import (
	"bytes"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ProcPidpath is libproc's proc_pidpath(pid) without cgo: proc_info(2) with
// PROC_INFO_CALL_PIDINFO and PROC_PIDPATHINFO. It returns the executable's
// path, or the errno (EPERM from Seatbelt's process-info rules, ESRCH for
// no such process).
func ProcPidpath(pid int) (string, syscall.Errno) {
	const (
		procInfoCallPIDInfo = 2
		procPIDPathInfo     = 11
		maxSize             = 4 * 1024 // PROC_PIDPATHINFO_MAXSIZE
	)
	buf := make([]byte, maxSize)
	_, _, errno := unix.Syscall6(unix.SYS_PROC_INFO, procInfoCallPIDInfo, uintptr(pid), procPIDPathInfo, 0,
		uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
	if errno != 0 {
		return "", errno
	}
	return unix.ByteSliceToString(buf), 0
}

// FcntlGetpath is fcntl(fd, F_GETPATH): the path the kernel has for the
// open file (golang.org/x/sys has no wrapper for it).
func FcntlGetpath(fd int) (string, syscall.Errno) {
	buf := make([]byte, 1024) // MAXPATHLEN
	_, _, errno := unix.Syscall(unix.SYS_FCNTL, uintptr(fd), unix.F_GETPATH, uintptr(unsafe.Pointer(&buf[0])))
	if errno != 0 {
		return "", errno
	}
	n := bytes.IndexByte(buf, 0)
	if n < 0 {
		return "", syscall.ENAMETOOLONG
	}
	return string(buf[:n]), 0
}
