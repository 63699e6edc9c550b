//go:build linux

package linux

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
	"kernel.org/pub/linux/libs/security/libcap/psx"
)

// dropCapabilities empties every capability set of every thread of the
// process: the bounding set (when the process may change it, i.e. has
// CAP_SETPCAP), the ambient set, and the permitted, effective and
// inheritable sets. Capabilities belong to threads, not processes, so
// each change is made on every thread through psx, as ApplySelf enforces
// Landlock before ABI 8.
//
// Why all of them: a root process keeps every capability otherwise, and
// each one opens a door the other layers do not watch: CAP_FOWNER and
// CAP_CHOWN reach every file's metadata, CAP_SETFCAP writes
// security.capability, CAP_LINUX_IMMUTABLE sets immutable flags,
// CAP_SYS_TTY_CONFIG hangs up terminals, CAP_SYS_NICE, CAP_SYS_RESOURCE
// and CAP_LEASE reach other processes and files. With no_new_privs set
// (seccomp's Load sets it on every thread) and an empty permitted set, no
// execve can give them back: the kernel intersects what a root execve
// would gain with the old permitted set. A process that is not root and
// lacks CAP_SETPCAP cannot shrink its bounding set; it holds no
// capability to lose, and that set alone grants nothing.
//
// What is not done: SECBIT_NOROOT and friends (no_new_privs already stops
// a root execve from gaining), and uid 0 stays uid 0: the files root owns
// are still its own, which is why metadata changes by path are refused by
// seccomp too.
func dropCapabilities() error {
	// Find the highest capability the kernel knows: PR_CAPBSET_READ says
	// EINVAL past it. (/proc/sys/kernel/cap_last_cap would be the same,
	// but Landlock may already deny it.)
	last := -1
	for c := 0; c < 64; c++ {
		if _, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0); err != nil {
			break
		}
		last = c
	}
	if last < 0 {
		return errors.New("sandbox: capabilities: PR_CAPBSET_READ refused every capability")
	}
	setpcap, err := hasEffective(unix.CAP_SETPCAP)
	if err != nil {
		return err
	}
	if setpcap {
		for c := 0; c <= last; c++ {
			in, err := unix.PrctlRetInt(unix.PR_CAPBSET_READ, uintptr(c), 0, 0, 0)
			if err != nil || in == 0 {
				continue // already out of this thread's set; psx makes every thread's the same
			}
			if _, _, e := psx.Syscall6(unix.SYS_PRCTL, unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0, 0); e != 0 {
				return fmt.Errorf("sandbox: capabilities: dropping %d from the bounding set: %w", c, e)
			}
		}
	}
	// Linux 4.3+; EINVAL before, when there is no ambient set to clear.
	if _, _, e := psx.Syscall6(unix.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0, 0); e != 0 && e != unix.EINVAL {
		return fmt.Errorf("sandbox: capabilities: clearing the ambient set: %w", e)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	_, _, e := psx.Syscall3(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0)
	runtime.KeepAlive(&hdr)
	runtime.KeepAlive(&data)
	if e != 0 {
		return fmt.Errorf("sandbox: capabilities: capset: %w", e)
	}
	return nil
}

// hasEffective reports whether the calling thread has capability c in its
// effective set.
func hasEffective(c int) (bool, error) {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false, fmt.Errorf("sandbox: capabilities: capget: %w", err)
	}
	return data[c/32].Effective&(1<<(uint(c)%32)) != 0, nil
}
