//go:build linux

package rawsys

import (
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// exitChild ends a child created by a raw fork. It must not touch the Go
// runtime: it is nosplit, norace and makes one raw system call.
//
//go:nosplit
//go:norace
func exitChild() {
	syscall.RawSyscall(syscall.SYS_EXIT_GROUP, 0, 0, 0)
}

// forked finishes a process-creating system call that returned r1, e: in a
// child it exits at once; in the parent it reaps the child and returns 0,
// or returns the errno when no child was created.
//
//go:nosplit
//go:norace
func forked(r1 uintptr, e syscall.Errno) syscall.Errno {
	if e != 0 {
		return e
	}
	if r1 == 0 {
		exitChild()
	}
	reap(r1)
	return 0
}

// reap waits for a child created by a successful probe so nothing is left.
func reap(pid uintptr) {
	var ws syscall.WaitStatus
	syscall.Wait4(int(pid), &ws, 0, nil)
}

// Fork tries fork(2) (clone(SIGCHLD) where there is no fork syscall). It
// returns 0 when a child was created (and reaped), or the errno.
//
//go:nosplit
//go:norace
func Fork() syscall.Errno {
	return Clone(0)
}

// CloneThreadFlags are the flags the Go runtime uses to create a thread.
const CloneThreadFlags = unix.CLONE_VM | unix.CLONE_FS | unix.CLONE_FILES | unix.CLONE_SIGHAND |
	unix.CLONE_SYSVSEM | unix.CLONE_THREAD

// Clone tries clone(flags|SIGCHLD) as a new process (flags must not contain
// CLONE_VM or CLONE_THREAD). 0 when a child was created (and reaped).
//
//go:nosplit
//go:norace
func Clone(flags uintptr) syscall.Errno {
	r1, _, e := syscall.RawSyscall6(syscall.SYS_CLONE, flags|uintptr(syscall.SIGCHLD), 0, 0, 0, 0, 0)
	return forked(r1, e)
}

// CloneHighBits is Clone with bits set in the upper 32 bits of the flags,
// which the kernel ignores (it uses lower_32_bits of clone's flags).
//
//go:nosplit
//go:norace
func CloneHighBits() syscall.Errno {
	return Clone(uintptr(1) << 40)
}

// Clone3 tries clone3 with exit_signal SIGCHLD. 0 when a child was created.
//
//go:nosplit
//go:norace
func Clone3() syscall.Errno {
	// struct clone_args, CLONE_ARGS_SIZE_VER0 (64 bytes): flags, pidfd,
	// child_tid, parent_tid, exit_signal, stack, stack_size, tls.
	var args [8]uint64
	args[4] = uint64(syscall.SIGCHLD)
	r1, _, e := syscall.RawSyscall(unix.SYS_CLONE3, uintptr(unsafe.Pointer(&args)), unsafe.Sizeof(args), 0)
	return forked(r1, e)
}

// Execve tries to execute path with no arguments. If it succeeds the
// calling process is replaced: call it only where it must fail.
func Execve(path string) syscall.Errno {
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return syscall.EINVAL
	}
	argv := []*byte{p, nil}
	envv := []*byte{nil}
	_, _, e := syscall.RawSyscall(syscall.SYS_EXECVE, uintptr(unsafe.Pointer(p)),
		uintptr(unsafe.Pointer(&argv[0])), uintptr(unsafe.Pointer(&envv[0])))
	return e
}

// Execveat is Execve through execveat(AT_FDCWD, path).
func Execveat(path string) syscall.Errno {
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return syscall.EINVAL
	}
	argv := []*byte{p, nil}
	envv := []*byte{nil}
	_, _, e := syscall.RawSyscall6(unix.SYS_EXECVEAT, atFDCWD, uintptr(unsafe.Pointer(p)),
		uintptr(unsafe.Pointer(&argv[0])), uintptr(unsafe.Pointer(&envv[0])), 0, 0)
	return e
}

// atFDCWD is AT_FDCWD (-100) as a syscall argument.
const atFDCWD = ^uintptr(99)

// Errno is the errno of err, or 0.
func Errno(err error) syscall.Errno {
	for err != nil {
		if e, ok := err.(syscall.Errno); ok {
			return e
		}
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return 0
		}
		err = u.Unwrap()
	}
	return 0
}
