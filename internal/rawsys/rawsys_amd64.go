//go:build linux && amd64

package rawsys

import "syscall"

// Int80 makes an i386 system call through int $0x80 from this 64-bit
// process and returns the kernel's 32-bit result.
func Int80(nr, a1, a2, a3 uintptr) int32

// I386GetpidNr is getpid's number in the i386 table.
const I386GetpidNr = 20

// X32Getpid makes getpid through the x32 ABI (nr | __X32_SYSCALL_BIT).
func X32Getpid() (uintptr, syscall.Errno) {
	r1, _, e := syscall.RawSyscall(0x40000000|syscall.SYS_GETPID, 0, 0, 0)
	return r1, e
}

// I386Getpid makes getpid through int $0x80 and returns eax (the pid or
// -errno); the bool is false on architectures without an i386 entry.
func I386Getpid() (int32, bool) { return Int80(I386GetpidNr, 0, 0, 0), true }

// Vfork tries vfork(2). A child created by it shares this memory, so it
// exits at once without running Go code. 0 when a child was created.
//
//go:nosplit
//go:norace
func Vfork() syscall.Errno {
	r1, _, e := syscall.RawSyscall(syscall.SYS_VFORK, 0, 0, 0)
	// Not forked(): a vfork child runs on the parent's own stack until it
	// exits, and a call here would overwrite the frame the parent resumes
	// in (seen: the parent got a garbage errno back). Inline only.
	if e != 0 {
		return e
	}
	if r1 == 0 {
		exitChild()
	}
	reap(r1)
	return 0
}
