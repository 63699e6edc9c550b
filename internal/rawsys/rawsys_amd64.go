//go:build linux && amd64

package rawsys

import "syscall"

// Int80 makes an i386 system call through int $0x80 from this 64-bit
// process and returns the kernel's 32-bit result.
func Int80(nr, a1, a2, a3 uintptr) int32

// I386Getpid is getpid's number in the i386 table.
const I386Getpid = 20

// X32Getpid makes getpid through the x32 ABI (nr | __X32_SYSCALL_BIT).
func X32Getpid() (uintptr, syscall.Errno) {
	r1, _, e := syscall.RawSyscall(0x40000000|syscall.SYS_GETPID, 0, 0, 0)
	return r1, e
}
