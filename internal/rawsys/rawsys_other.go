//go:build linux && !amd64

package rawsys

import "syscall"

// I386Getpid reports that there is no i386 entry point to try here.
func I386Getpid() (int32, bool) { return 0, false }

// Vfork answers ENOSYS: this architecture has no vfork system call (libc
// uses clone with CLONE_VFORK, which Clone covers).
func Vfork() syscall.Errno { return syscall.ENOSYS }

// I386GetpidNr is getpid's number in the i386 table (amd64 has that entry
// point; here it is only named, so that tests compile on every
// architecture).
const I386GetpidNr = 20

// Int80 answers -ENOSYS: only amd64 has an i386 entry point to try.
func Int80(nr, a1, a2, a3 uintptr) int32 { return -int32(syscall.ENOSYS) }

// X32Getpid answers ENOSYS: only amd64 has the x32 ABI.
func X32Getpid() (uintptr, syscall.Errno) { return 0, syscall.ENOSYS }
