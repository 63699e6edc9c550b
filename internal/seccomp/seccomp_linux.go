//go:build linux

package seccomp

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Supported reports whether the running kernel supports seccomp filters that
// return an errno: it asks seccomp(SECCOMP_GET_ACTION_AVAIL) about
// SECCOMP_RET_ERRNO (Linux 4.14+, which also has SECCOMP_FILTER_FLAG_TSYNC).
// It is false if the kernel lacks seccomp or if a filter already in place
// refuses the seccomp system call.
func Supported() bool {
	action := uint32(unix.SECCOMP_RET_ERRNO)
	_, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_ACTION_AVAIL, 0, uintptr(unsafe.Pointer(&action)))
	return errno == 0
}

// Load installs filters, in order, on every thread of the process. The
// kernel stacks them: for each system call it runs all of them and applies
// the most restrictive answer.
//
// It first sets no_new_privs on the calling thread (required to install a
// filter without CAP_SYS_ADMIN, and so that execve cannot gain privileges
// the filters would then constrain), then calls
// seccomp(SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC) once per
// filter. TSYNC applies each filter to all threads of the process and
// copies no_new_privs to them; the goroutine stays on one OS thread
// throughout. Filters are inherited by threads and children created later
// and cannot be removed.
//
// On error nothing more is loaded, but filters loaded before the failing one
// stay in force: the caller should treat any error as fatal for the process
// it meant to confine. A TSYNC failure names the filter and wraps the
// errno; a thread that could not be synchronised is reported with its TID.
// Load refuses an empty list.
func Load(filters ...Filter) error {
	// no_new_privs is per thread and seccomp checks it on the calling thread.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	_, err := load(filters, unix.SECCOMP_FILTER_FLAG_TSYNC)
	return err
}

// LoadUnprivileged is Load for a process none of whose threads holds
// CAP_SYS_ADMIN in its user namespace (ApplySelf, after its capability
// drop), without pinning the calling goroutine to its OS thread.
//
// Load pins because the prctl and the seccomp call must be made by the same
// thread: a thread with CAP_SYS_ADMIN may install a filter without
// no_new_privs, and TSYNC copies no_new_privs to the other threads only
// from a calling thread that has it (kernel/seccomp.c: seccomp_sync_threads),
// so a goroutine moved to another thread between the two calls would leave
// every thread without it. Without CAP_SYS_ADMIN the kernel installs a
// filter only for a calling thread that has no_new_privs
// (seccomp_prepare_filter returns EACCES otherwise, before anything is
// installed): a success proves the calling thread had it, and TSYNC gave it
// to every thread. A goroutine that moved between the two calls gets EACCES,
// and LoadUnprivileged then makes the pinned Load.
//
// Why not always pin: in a program built without cgo, the first
// runtime.LockOSThread starts the Go runtime's template thread
// (runtime/proc.go: startTemplateThread; a cgo program starts it before
// main), 30–60 µs of ApplySelf here, and that thread then takes part in
// every later all-thread round.
func LoadUnprivileged(filters ...Filter) error {
	loaded, err := load(filters, unix.SECCOMP_FILTER_FLAG_TSYNC)
	if loaded == 0 && errors.Is(err, unix.EACCES) {
		return Load(filters...)
	}
	return err
}

// LoadCallingThreadOnly installs the filters on the calling OS thread only,
// without TSYNC: other threads stay unfiltered. It exists so that tests can
// build the broken sandbox a canary must detect; the library never uses it.
// The caller must have locked its goroutine to the OS thread.
func LoadCallingThreadOnly(filters ...Filter) error {
	_, err := load(filters, 0)
	return err
}

// setNoNewPrivs sets no_new_privs on the calling thread. A variable only so
// that a test can make one call miss, as a goroutine that moved to another
// thread would (TestLoadUnprivilegedMovedGoroutine).
var setNoNewPrivs = func() error { return unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) }

// load sets no_new_privs on the calling thread and installs filters with
// flags; it returns how many were installed before an error.
func load(filters []Filter, flags uintptr) (int, error) {
	if len(filters) == 0 {
		return 0, errors.New("seccomp: no filters to load")
	}
	progs := make([][]unix.SockFilter, len(filters))
	for i, f := range filters {
		if len(f.Program) == 0 || len(f.Program) > bpfMaxInsns {
			return 0, fmt.Errorf("seccomp: filter %d of %d (%q) has %d instructions; want 1 to %d",
				i+1, len(filters), f.Name, len(f.Program), bpfMaxInsns)
		}
		progs[i] = make([]unix.SockFilter, len(f.Program))
		for j, ins := range f.Program {
			progs[i][j] = unix.SockFilter{Code: ins.Op, Jt: ins.Jt, Jf: ins.Jf, K: ins.K}
		}
	}

	if err := setNoNewPrivs(); err != nil {
		return 0, fmt.Errorf("seccomp: prctl(PR_SET_NO_NEW_PRIVS): %w", err)
	}
	for i, f := range filters {
		fprog := unix.SockFprog{Len: uint16(len(progs[i])), Filter: &progs[i][0]}
		tid, _, errno := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags,
			uintptr(unsafe.Pointer(&fprog)))
		runtime.KeepAlive(progs[i])
		if errno != 0 {
			return i, fmt.Errorf("seccomp: loading filter %d of %d (%q): %w", i+1, len(filters), f.Name, errno)
		}
		if tid != 0 {
			// With TSYNC, a positive result is the ID of a thread that could
			// not be synchronised; the filter was not installed anywhere.
			return i, fmt.Errorf("seccomp: loading filter %d of %d (%q) with TSYNC: thread %d could not be synchronised",
				i+1, len(filters), f.Name, tid)
		}
	}
	return len(filters), nil
}
