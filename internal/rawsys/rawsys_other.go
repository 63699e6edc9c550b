//go:build linux && !amd64

package rawsys

import "syscall"

// I386Getpid reports that there is no i386 entry point to try here.
func I386Getpid() (int32, bool) { return 0, false }

// Vfork answers ENOSYS: this architecture has no vfork system call (libc
// uses clone with CLONE_VFORK, which Clone covers).
func Vfork() syscall.Errno { return syscall.ENOSYS }
