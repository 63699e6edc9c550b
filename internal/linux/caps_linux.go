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

// dropCapabilities empties the permitted, effective, inheritable and
// ambient sets of every thread of the process, in one all-thread round:
// capabilities belong to threads, not processes, so the capset is made by
// every thread through psx, as ApplySelf enforces Landlock before ABI 8.
// One capset with all three sets empty also empties the ambient set: the
// kernel keeps only the ambient bits that stay both permitted and
// inheritable (security/commoncap.c, cap_capset), so no separate
// PR_CAP_AMBIENT_CLEAR_ALL round is needed.
//
// Why all of them: a root process keeps every capability otherwise, and
// each one opens a door the other layers do not watch: CAP_FOWNER and
// CAP_CHOWN reach every file's metadata, CAP_SETFCAP writes
// security.capability, CAP_LINUX_IMMUTABLE sets immutable flags,
// CAP_SYS_TTY_CONFIG hangs up terminals, CAP_SYS_NICE, CAP_SYS_RESOURCE
// and CAP_LEASE reach other processes and files.
//
// Why not the bounding set: with no_new_privs set and the permitted set
// empty it grants nothing, so emptying it (one PR_CAPBSET_DROP per
// capability, each an all-thread round: 41 on Linux 6.18, most of
// ApplySelf's time as root) would change nothing. The bounding set only
// caps what an execve may add to the permitted set, and what capset may add
// to the inheritable set with CAP_SETPCAP. Under no_new_privs the kernel
// limits the permitted set an execve produces to the old permitted set, for
// a root execve, a set-user-ID program and a file-capability program alike,
// and keeps the effective user ID (security/commoncap.c,
// cap_bprm_creds_from_file: LSM_UNSAFE_NO_NEW_PRIVS;
// Documentation/userspace-api/no_new_privs.rst), and the effective and
// ambient sets an execve produces are subsets of the permitted one. Without
// CAP_SETPCAP, capset cannot raise a set beyond the old permitted set
// (cap_capset), and a change of user ID to 0 makes effective only what is
// permitted (cap_emulate_setxuid). An empty permitted set is therefore
// final: nothing the process or any program it executes does can make it
// non-empty. no_new_privs is set on every thread by the seccomp filter's
// TSYNC load right after this runs (and cannot be unset), and
// checkNoNewPrivs checks it on the calling thread before ApplySelf goes
// on, so that this reasoning never stands without it; if the load fails,
// ApplySelf reports ErrPartiallyApplied and the process must exit. The
// drop comes first so that no thread holds CAP_SYS_ADMIN at the load (see
// applyLinux). The canary's capabilities probe checks both on every
// thread, and TestApplySelfExecGainsNoCapability executes a root, a
// set-user-ID-root and a file-capability program after ApplySelf as root.
//
// What is not done: SECBIT_NOROOT and friends (no_new_privs already stops
// a root execve from gaining), and uid 0 stays uid 0: the files root owns
// are still its own, which is why metadata changes by path are refused by
// seccomp too.
func dropCapabilities() error {
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

// checkNoNewPrivs checks that the calling thread has no_new_privs, which
// the seccomp filter's TSYNC load gave every thread: without it the
// emptied permitted set could be refilled by executing a program.
func checkNoNewPrivs() error {
	nnp, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)
	if err != nil {
		return fmt.Errorf("sandbox: PR_GET_NO_NEW_PRIVS: %w", err)
	}
	if nnp != 1 {
		return errors.New("sandbox: no_new_privs is not set after the seccomp filter's load: an emptied permitted set could be refilled by executing a program")
	}
	return nil
}
