// Package seccomp turns a small process-level [Policy] into a seccomp-bpf
// filter and loads it. It complements Landlock: Landlock decides which
// files may be opened and which TCP ports may be bound or connected to;
// the filter removes kernel interfaces Landlock does not mediate
// (ptrace, io_uring, bpf, namespaces, mounts, raw and netlink sockets, TTY
// input injection, TCP Fast Open, ...) and, depending on the Policy, process
// creation, program execution and socket creation.
//
// The filter is a deny list: any system call it does not name is allowed,
// without the filter reading any argument, so the kernel's seccomp action
// cache (Linux 5.11+) can skip the filter for it entirely. Denials are
// SECCOMP_RET_ERRNO, never kill or trap, so the caller sees an ordinary
// errno and can classify it: EPERM means "denied by the sandbox" except for
// the documented compatibility answers: ENOSYS for clone3, openat2 and (when
// exec is allowed) memfd_create without MFD_NOEXEC_SEAL, and
// EPROTONOSUPPORT for socket(..., IPPROTO_MPTCP).
//
// # Structure
//
// [Build] returns one filter, a single classic BPF program (its layout is
// described in assemble.go). Its rules, in order, with the first rule that
// matches a call deciding:
//
//	deny               EPERM  unconditional deny list (incl. vhangup, fanotify_init,
//	                          modify_ldt, memfd_secret, sched_setattr, file_setattr);
//	                          fork, vfork, execve, execveat as the Policy says;
//	                          setsid if DenySetsid; SysV IPC and POSIX message
//	                          queues unless AllowSysVIPC;
//	                          metadata calls by path (DenyPathMetadata,
//	                          DenyChownXattr); clone with a namespace flag or
//	                          CLONE_PARENT (and without CLONE_THREAD unless
//	                          AllowSpawn); open_tree_attr and the *xattrat calls
//	                          by number
//	personality        EPERM  personality(2) except harmless personas
//	ioctl              EPERM  terminal requests that act on others, network-device
//	                          requests, filesystem freeze/shutdown/label/flags requests
//	fcntl-lease        EPERM  fcntl F_SETLEASE
//	setid-mode         EPERM  S_ISUID or S_ISGID in any mode argument
//	other-process      EPERM  limits, priority, affinity, scheduling, I/O priority
//	                          and memory placement of anyone but the caller
//	utimensat-path     EPERM  utimensat with a path (DenyPathMetadata)
//	prctl-pdeathsig    EPERM  PR_SET_PDEATHSIG other than SIGKILL (DenyPdeathsigChange)
//	sendto-fastopen    EPERM  sendto with MSG_FASTOPEN
//	sendmsg-fastopen   EPERM  sendmsg with MSG_FASTOPEN
//	sendmmsg-fastopen  EPERM  sendmmsg with MSG_FASTOPEN
//	mptcp              EPROTONOSUPPORT  socket(2) with IPPROTO_MPTCP
//	socket             EPERM  socket(2) outside what the Policy grants
//	socketpair         EPERM  socketpair(2) other than AF_UNIX
//	enosys             ENOSYS clone3, openat2, and memfd_create without
//	                          MFD_NOEXEC_SEAL when AllowExec
//
// Where several rules name one system call, the first that matches
// decides: "mptcp" comes before "socket" so that IPPROTO_MPTCP gets
// EPROTONOSUPPORT, on which clients fall back to plain TCP; chmod,
// fchmodat and fchmodat2 are refused whole by "deny" under
// DenyPathMetadata and checked for set-ID bits by "setid-mode" otherwise.
//
// Two things go-seccomp-bpf cannot express are written by this package:
//
//   - Foreign architecture. go-seccomp-bpf v1.4.0 sends a system call whose
//     seccomp_data.arch differs from the filter's architecture to the
//     policy's default action, which for a deny list is ALLOW. On amd64 that
//     would let every i386 system call (int $0x80) bypass the filter. The
//     program answers EPERM instead. As a consequence a 32-bit (i386, arm)
//     program cannot run under it at all. On amd64, x32-ABI system calls
//     (numbers with bit 0x40000000 set) get ENOSYS.
//   - System calls newer than the library's tables (Linux v6.6), which it
//     cannot name: open_tree_attr (Linux 6.15), file_setattr (6.17), and
//     setxattrat and removexattrat (6.13) with the metadata rules, are
//     denied by number.
//
// # What is not enforced here
//
// Which files can be executed, opened or connected to is Landlock's job.
// Argument checks see only the registers, never memory: clone3's flags and
// the address passed to connect or sendto cannot be inspected, hence
// clone3 and openat2 are refused outright, sched_setattr too, and TCP Fast
// Open (which connects inside sendto/sendmsg without passing Landlock's
// connect hook) is refused by its flag. Which terminal, socket or file an
// ioctl's descriptor refers to cannot be seen either: the ioctl rules refuse
// their requests on every descriptor. The name of an extended attribute is
// in memory: fsetxattr(security.capability) on a file the process may
// write is left to the missing CAP_SETFCAP. Filters are built only for linux/amd64 and linux/arm64: on 386
// socket calls are multiplexed through socketcall(2), whose arguments live
// in memory, so socket creation could not be filtered.
package seccomp

import (
	"fmt"
	"runtime"
	"strings"

	"golang.org/x/net/bpf"
)

// Policy says which process-level operations are allowed. The zero value is
// the most restrictive policy: no new processes, no exec, no sockets.
//
// Whatever the Policy, the filter always denies (EPERM) the system calls
// listed in the package documentation and in [Summary], namespace creation
// through clone, TTY input injection, TCP Fast Open and MPTCP sockets.
type Policy struct {
	// AllowSpawn allows creating processes: fork, vfork, and clone without
	// CLONE_THREAD (in the low 32 bits of its flags, which are all the
	// kernel reads). When false these fail with EPERM. clone with
	// CLONE_THREAD is always allowed, because that is how the Go runtime
	// and libc create threads; CLONE_THREAD requires CLONE_SIGHAND and
	// CLONE_VM, so it cannot create a separate process. clone3 is refused
	// with ENOSYS either way (libc then falls back to clone).
	AllowSpawn bool

	// AllowExec allows execve and execveat. Which files can be executed is
	// restricted by the caller with Landlock (LANDLOCK_ACCESS_FS_EXECUTE),
	// not here. When false both fail with EPERM.
	AllowExec bool

	// AllowUnixSockets allows socket(AF_UNIX, any type, 0). Without it
	// socket(AF_UNIX, ...) fails with EPERM. socketpair(AF_UNIX, ...) is
	// always allowed: it reaches nothing outside the process.
	AllowUnixSockets bool

	// AllowTCP allows socket(AF_INET or AF_INET6, SOCK_STREAM, 0 or
	// IPPROTO_TCP), with SOCK_NONBLOCK and SOCK_CLOEXEC allowed in the type.
	// Where it may connect or bind is up to Landlock.
	AllowTCP bool

	// AllowUDP allows socket(AF_INET or AF_INET6, SOCK_DGRAM, 0 or
	// IPPROTO_UDP), with SOCK_NONBLOCK and SOCK_CLOEXEC allowed in the type.
	// Landlock does not restrict UDP destinations.
	AllowUDP bool

	// DenySetsid refuses setsid(2) with EPERM, so that the process and its
	// children cannot leave their session (sandbox.Run kills the session
	// on timeout).
	DenySetsid bool

	// DenyPathMetadata refuses, with EPERM, every system call that changes
	// a file's mode, owner, times or extended attributes by path: chmod,
	// fchmodat, fchmodat2, chown, lchown, fchownat, utime, utimes,
	// futimesat, utimensat with a path, setxattr, lsetxattr, removexattr,
	// lremovexattr, setxattrat, removexattrat and file_setattr. Landlock
	// does not mediate any of them, so they would reach files outside
	// every grant. (The AT_EMPTY_PATH forms on an O_PATH descriptor are
	// the same system calls, refused with them.) The descriptor forms
	// (fchmod, fchown, futimens, i.e. utimensat with a NULL path,
	// fsetxattr, fremovexattr) stay allowed: they need a file Landlock let
	// the process open, and refuse O_PATH descriptors (EBADF).
	DenyPathMetadata bool

	// DenyChownXattr refuses, with EPERM, changing owners by path (chown,
	// lchown, fchownat) and writing extended attributes by path (setxattr,
	// lsetxattr, removexattr, lremovexattr, setxattrat, removexattrat),
	// without refusing chmod and utimes as DenyPathMetadata does.
	DenyChownXattr bool

	// AllowSysVIPC allows System V shared memory, message queues and
	// semaphores, and POSIX message queues. Without it shmget, shmat,
	// shmctl, shmdt, msgget, msgsnd, msgrcv, msgctl, semget, semop,
	// semtimedop and semctl fail with EPERM: the IPC namespace is the
	// host's, so SHM_STAT lists and shmat maps every segment the user may
	// access, other programs' included. So do mq_open, mq_unlink,
	// mq_timedsend, mq_timedreceive, mq_notify and mq_getsetattr: Landlock
	// refuses the open of a queue (its filesystem is no granted path) but
	// not mq_open's creation before it, nor mq_unlink, so a program could
	// fill the host's queue table or remove other programs' queues.
	AllowSysVIPC bool

	// DenyPdeathsigChange refuses prctl(PR_SET_PDEATHSIG, sig) for every
	// sig but SIGKILL, so that a program started with a parent-death
	// signal (sandbox.Run) cannot clear it, nor replace it with a signal
	// it ignores or catches (anything but SIGKILL can be caught), and
	// outlive a killed caller.
	DenyPdeathsigChange bool

	// ExecNonce, with AllowExec, refuses execveat and every execve whose
	// fourth and fifth arguments (which execve does not use) are not a
	// 128-bit value the filter holds: see exec_nonce.go. The program is
	// built with a placeholder there; [PatchExecNonce] writes a per-process
	// random value into a copy of it. Without AllowExec it changes nothing.
	ExecNonce bool
}

// Filter is one assembled seccomp program.
type Filter struct {
	// Name is a short label for messages, e.g. "sandbox".
	Name string
	// Program is the classic BPF program for seccomp(SECCOMP_SET_MODE_FILTER).
	// It is built for one architecture: the GOARCH of the process that
	// called Build.
	Program []bpf.RawInstruction
}

// Build assembles the filter for p, for the architecture of the running
// binary (runtime.GOARCH). It is pure: it works on every GOOS and touches no
// kernel interface. It returns an error for a GOARCH other than amd64 or
// arm64 (see the package documentation), or if assembly fails any of its
// structural checks.
func Build(p Policy) (Filter, error) {
	target, err := currentTarget()
	if err != nil {
		return Filter{}, err
	}
	prog, err := assemble(filterSpecs(p), target)
	if err != nil {
		return Filter{}, fmt.Errorf("seccomp: building the filter for %s: %w", runtime.GOARCH, err)
	}
	if p.AllowExec && p.ExecNonce {
		if _, err := ExecNonceSlots(prog); err != nil {
			return Filter{}, err
		}
	}
	return Filter{Name: "sandbox", Program: prog}, nil
}

// Summary returns human-readable lines describing what the filter built for
// p denies and with which errno, one line per rule, in rule order, followed
// by lines on the architecture checks. It is pure and works for every GOOS
// and GOARCH; system calls that do not exist on the running GOARCH are
// marked as such.
func Summary(p Policy) []string {
	specs := filterSpecs(p)
	absent := absentSyscalls[runtime.GOARCH]
	lines := []string{"seccomp: one filter; for each system call the first rule below that matches decides"}
	for _, s := range specs {
		for _, r := range s.rules {
			line := fmt.Sprintf("%s: %s for %s", s.name, s.errnoName, r.description())
			var missing []string
			for _, n := range r.names {
				if _, ok := absent[n]; ok {
					missing = append(missing, n)
				}
			}
			if len(missing) > 0 {
				line += fmt.Sprintf(" [%s: no such system call on linux/%s]", strings.Join(missing, ", "), runtime.GOARCH)
			}
			lines = append(lines, line)
		}
		for _, n := range s.byNumber {
			lines = append(lines, fmt.Sprintf("%s: %s for %s (number %d; %s)", s.name, s.errnoName, n.name, n.nr, n.why))
		}
	}
	return append(lines,
		"EPERM for every system call made through a foreign architecture's entry point (e.g. i386 int $0x80 on amd64), so 32-bit programs cannot run",
		"on amd64: ENOSYS for x32-ABI system calls (number | 0x40000000)",
		"all other system calls are allowed without any argument being read",
	)
}
