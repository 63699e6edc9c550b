package seccomp

import (
	"slices"
	"strconv"
	"strings"

	seccompbpf "github.com/elastic/go-seccomp-bpf"
)

// Linux UAPI values used by the rules. They are spelled out here because
// Build must work on every GOOS and golang.org/x/sys/unix does not build on
// Windows. They are identical on amd64 and arm64; seccomp_linux_test.go
// checks each against golang.org/x/sys/unix.
const (
	errnoEPERM           = 1
	errnoENOSYS          = 38
	errnoENOTTY          = 25
	errnoEPROTONOSUPPORT = 93

	afUnix  = 1
	afInet  = 2
	afInet6 = 10

	sockStream   = 1
	sockDgram    = 2
	sockNonblock = 0x800
	sockCloexec  = 0x80000

	ipprotoTCP   = 6
	ipprotoUDP   = 17
	ipprotoMPTCP = 262

	tiocsti   = 0x5412 // push a byte into a terminal's input queue
	tioclinux = 0x541c // Linux console subcommands, incl. selection paste

	msgFastopen = 0x20000000

	cloneParent = 0x00008000

	// Mode bits that make a program run with its file's owner or group.
	sISUID = 0o4000
	sISGID = 0o2000
	// Open flags under which open(2) and openat(2) use their mode
	// argument (build_open_flags in fs/open.c).
	oCreat   = 0x40
	oTmpfile = 0x400000 // __O_TMPFILE; O_TMPFILE adds O_DIRECTORY

	mfdNoexecSeal = 0x8 // MFD_NOEXEC_SEAL (Linux 6.3)

	fSetlease = 1024 // fcntl F_SETLEASE

	prSetPdeathsig = 1
	sigKill        = 9

	ioprioWhoProcess = 1

	// Scheduling policies that take the CPU from every other process
	// (SCHED_FIFO, SCHED_RR, SCHED_DEADLINE), compared with the flag
	// SCHED_RESET_ON_FORK masked out of sched_setscheduler's policy.
	schedFIFO        = 1
	schedRR          = 2
	schedDeadline    = 6
	schedResetOnFork = 0x40000000
	sysSetxattrat    = 463
	sysRemovexattrat = 466
	sysFileSetattr   = 469

	cloneNewNS     = 0x00020000
	cloneThread    = 0x00010000
	cloneNewCgroup = 0x02000000
	cloneNewUTS    = 0x04000000
	cloneNewIPC    = 0x08000000
	cloneNewUser   = 0x10000000
	cloneNewPID    = 0x20000000
	cloneNewNet    = 0x40000000

	// cloneNewNamespaces are the namespace flags clone(2) interprets.
	// CLONE_NEWTIME (0x80) is not among them: in clone(2) that bit belongs
	// to the exit signal (CSIGNAL); a time namespace can only be created
	// with unshare or clone3, both refused.
	cloneNewNamespaces = cloneNewNS | cloneNewCgroup | cloneNewUTS | cloneNewIPC |
		cloneNewUser | cloneNewPID | cloneNewNet

	// Personas personality(2) may still set: PER_LINUX, PER_LINUX32,
	// UNAME26, PER_LINUX32|UNAME26, and 0xffffffff, which only queries.
	// (The same list Docker's default seccomp profile allows.)
	perLinux       = 0x0
	perLinux32     = 0x8
	perUname26     = 0x20000
	perLinux32U26  = 0x20008
	personalityGet = 0xffffffff

	sysOpenTreeAttr = 467
)

// Terminal ioctls that change a terminal for every process using it, not
// only for the caller. A sandboxed program can only hold a terminal it
// was given (its caller's) or /dev/tty (its controlling terminal, again
// its caller's): /dev/ptmx and /dev/pts are not default paths, so these
// are refused whatever the descriptor is. From drivers/tty/tty_io.c
// (tty_ioctl) and drivers/tty/tty_jobctrl.c:
//
//	TIOCSTI, TIOCLINUX   push input / paste a selection: run commands as the caller
//	TIOCSCTTY            take the terminal as controlling terminal (with force: steal it)
//	TIOCSPGRP            tcsetpgrp: move the foreground; the caller's shell gets SIGTTIN/SIGTTOU
//	TIOCNOTTY            give up the controlling terminal; a session leader hangs up its foreground group
//	TIOCVHANGUP          hang the terminal up for everyone (CAP_SYS_ADMIN; refused anyway)
//	TIOCCONS             redirect the system console (kernel messages) to this terminal
//	TIOCSETD             change the line discipline: the caller's terminal stops working
//	TIOCEXCL             exclusive mode: every later open(2) of the terminal fails with EBUSY
//	TIOCSWINSZ           set the window size: sends SIGWINCH to the foreground group; only the
//	                     terminal's owner (emulator, pty master) has a reason to set it
//	TIOCSLCKTRMIOS       lock termios fields for everyone (CAP_SYS_ADMIN)
//	TIOCSSERIAL          serial line configuration (divisors, IRQs; partly CAP_SYS_ADMIN)
//	TIOCSRS485           switch a serial port to RS-485 and set its RTS timing: the port's
//	                     configuration in the driver, for every later user, until changed
//	TIOCSISO7816         the same for ISO 7816 (smart card) mode
//	TIOCSERCONFIG        re-probe the UART (CAP_SYS_ADMIN; refused anyway)
//	KD* (0x4Bxx), VT_* (0x56xx)  virtual console keyboard mode, fonts, VT switching: a
//	                     program on a VT console would change the console for the machine
//
// On a pseudo-terminal, which is what a program is normally given, the
// serial requests answer ENOTTY whatever the sandbox; they matter on a
// real serial line: a caller on a serial console (a VM's ttyS0), or a
// serial device the Config grants. The modem-line setters TIOCMSET,
// TIOCMBIS and TIOCMBIC (DTR and RTS) are refused too, on such a line:
// dropping DTR hangs up the caller's console or resets the device
// attached (a microcontroller's auto-reset), for every user of the line.
// They answer ENOTTY, as a pseudo-terminal does (modemLineIoctls), not
// EPERM: programs that open serial ports set DTR and RTS at open and go on
// when the port says it has no modem lines (pyserial ignores ENOTTY and
// EINVAL there, and fails on any other errno), so a program granted a
// serial device still opens it; what it cannot do is toggle those lines
// (esptool's automatic reset into the boot loader, for one). No program
// needs them on its own terminal.
//
// Allowed, each harmful at most to the terminal's current state, which the
// caller restores: TCSETS/TCSETSW/TCSETSF/TCSETS2 and the TCSETA forms
// (raw mode, echo: what every interactive program does on its own
// terminal; from a background process the kernel stops the caller with
// SIGTTOU, it does not signal others), TIOCSSOFTCAR (the CLOCAL flag,
// which TCSETS sets as well), TCFLSH, TCXONC, TCSBRK and TIOCSBRK/TIOCCBRK
// (a break on the line; ENOTTY on a pty), TIOCNXCL, TIOCPKT, TIOCSPTLCK,
// TIOCSIG and TIOCGPTPEER (pty master side only: a pty the program opened
// itself), FIONBIO, FIOASYNC, and every query (TIOCG*, TIOCMGET,
// TIOCMIWAIT, TIOCGICOUNT, TIOCGRS485, TIOCGISO7816).
var ttyIoctls = []uint32{
	tiocsti, tioclinux,
	0x540e,     // TIOCSCTTY
	0x5410,     // TIOCSPGRP
	0x5422,     // TIOCNOTTY
	0x5437,     // TIOCVHANGUP
	0x541d,     // TIOCCONS
	0x5423,     // TIOCSETD
	0x540c,     // TIOCEXCL
	0x5414,     // TIOCSWINSZ
	0x5457,     // TIOCSLCKTRMIOS
	0x541f,     // TIOCSSERIAL
	0x542f,     // TIOCSRS485
	0xc0285443, // TIOCSISO7816: _IOWR('T', 0x43, struct serial_iso7816), 40 bytes
	0x5453,     // TIOCSERCONFIG
}

// modemLineIoctls set a serial line's modem control lines (see ttyIoctls):
// refused with ENOTTY, a pseudo-terminal's own answer.
var modemLineIoctls = []uint32{
	0x5418, // TIOCMSET
	0x5416, // TIOCMBIS
	0x5417, // TIOCMBIC
}

// netdevIoctls change network devices, routes, ARP and bridges
// (include/uapi/linux/sockios.h): every SIOCS*, SIOCADD*/SIOCDEL*, and the
// ones that both read and write (SIOCETHTOOL, SIOCWANDEV). They work
// through any socket, including a socketpair(AF_UNIX) one: sock_ioctl
// hands them to the network stack whatever the family. The kernel checks
// CAP_NET_ADMIN for each, so they matter for a root process; they are
// refused whatever the capabilities. The queries (SIOCGIF*, SIOCGSTAMP,
// SIOCATMARK, ...) and SIOCSPGRP/FIOSETOWN (the socket's own SIGIO owner,
// scoped by Landlock) stay allowed.
var netdevIoctls = []uint32{
	0x890b, 0x890c, 0x890d, // SIOCADDRT, SIOCDELRT, SIOCRTMSG
	0x8911, 0x8914, 0x8916, 0x8918, 0x891a, 0x891c, 0x891e, 0x8920, // SIOCSIFLINK, FLAGS, ADDR, DSTADDR, BRDADDR, NETMASK, METRIC, MEM
	0x8922, 0x8923, 0x8924, 0x8926, 0x8930, // SIOCSIFMTU, NAME, HWADDR, ENCAP, SLAVE
	0x8931, 0x8932, 0x8934, 0x8936, 0x8937, // SIOCADDMULTI, SIOCDELMULTI, SIOCSIFPFLAGS, SIOCDIFADDR, SIOCSIFHWBROADCAST
	0x8941, 0x8943, 0x8946, 0x8949, 0x894a, // SIOCSIFBR, SIOCSIFTXQLEN, SIOCETHTOOL, SIOCSMIIREG, SIOCWANDEV
	0x8953, 0x8955, 0x8960, 0x8962, 0x8971, // SIOCDARP, SIOCSARP, SIOCDRARP, SIOCSRARP, SIOCSIFMAP
	0x8980, 0x8981, 0x8983, // SIOCADDDLCI, SIOCDELDLCI, SIOCSIFVLAN
	0x8990, 0x8991, 0x8992, 0x8995, // SIOCBONDENSLAVE, RELEASE, SETHWADDR, CHANGEACTIVE
	0x89a0, 0x89a1, 0x89a2, 0x89a3, // SIOCBRADDBR, SIOCBRDELBR, SIOCBRADDIF, SIOCBRDELIF
	0x89b0, // SIOCSHWTSTAMP
}

// fsIoctls change a whole filesystem, or a file's flags, through any
// descriptor of it, a read-only one included (the kernel checks
// capabilities or file ownership, not the descriptor's mode):
//
//	FIFREEZE, FITHAW       freeze every write to the filesystem (CAP_SYS_ADMIN)
//	FS_IOC_SHUTDOWN        (= EXT4_IOC_SHUTDOWN, XFS_IOC_GOINGDOWN, F2FS_IOC_SHUTDOWN): the filesystem
//	                       returns EIO to everyone until remounted (CAP_SYS_ADMIN)
//	FS_IOC_SETFSLABEL      rename the filesystem (CAP_SYS_ADMIN)
//	FS_IOC_SETFSUUID, EXT4_IOC_SETFSUUID  change its UUID (CAP_SYS_ADMIN)
//	FS_IOC_SETFLAGS (and its 32-bit form), FS_IOC_FSSETXATTR  chattr: immutable and
//	                       append-only (CAP_LINUX_IMMUTABLE), nodump, noatime, nocow, ... on any file
//	                       the user owns that the sandbox may merely read, outside the write paths
//	FS_IOC_SETVERSION      the inode generation of a file the user owns
//
// Programs set file flags rarely (a database asking for nocow on btrfs
// treats a failure as "not supported"), so they are refused everywhere,
// inside write paths too: seccomp cannot tell where the file is.
var fsIoctls = []uint32{
	0xc0045877, // FIFREEZE
	0xc0045878, // FITHAW
	0x8004587d, // FS_IOC_SHUTDOWN
	0x41009432, // FS_IOC_SETFSLABEL
	0x40111501, // FS_IOC_SETFSUUID
	0x4008662c, // EXT4_IOC_SETFSUUID
	0x40086602, // FS_IOC_SETFLAGS
	0x40046602, // FS_IOC32_SETFLAGS
	0x401c5820, // FS_IOC_FSSETXATTR
	0x40087602, // FS_IOC_SETVERSION
}

// maskedIoctls are ioctl request ranges, refused when the low 32 bits of
// the request, masked, equal the value.
var maskedIoctls = []masked{
	{mask: 0xffffff00, val: 0x4b00}, // KD*: console keyboard, fonts, modes
	{mask: 0xffffff00, val: 0x5600}, // VT_*: virtual terminal switching and setup
	{mask: 0xffffffe0, val: 0x89e0}, // SIOCPROTOPRIVATE, SIOCDEVPRIVATE: protocol and driver private (tunnels, SLIP, bonding...)
	{mask: 0xffffff01, val: 0x8b00}, // SIOCSIW*: wireless extensions, setters (even numbers of 0x8b00-0x8bff)
	pidfsIoctls,
}

// pidfsIoctls are the ioctls of pidfs (linux/pidfd.h, type 0xFF) on a
// pidfd: PIDFD_GET_*_NAMESPACE (numbers 1-10, Linux 6.11) hand out a
// descriptor of another process's namespace, and PIDFD_GET_INFO (11,
// Linux 6.13) its ppid, every uid and gid, and cgroup. pidfd_open needs no
// permission over the process, so without a PID namespace (ApplySelf, and
// WrapCommand, whose program keeps the host's PIDs) these would describe
// every process on the host. Matched on type and number only, whatever the
// direction and size bits: PIDFD_GET_INFO's size is its struct's, which
// grows with each version, and the kernel accepts any (pidfs_ioctl_valid
// checks type and number). The whole block of numbers 0x00-0x0f is refused,
// so that the ioctls pidfs adds next are too (a driver's own ioctl with
// type 0xFF and such a number, if one exists, is refused as well). What
// stays:
// pidfd_open itself, waiting on a pidfd, and /proc/<pid>/status, which
// says the same of a process whose /proc entry is visible (see
// docs/platforms.md, the table's row "stays visible").
var pidfsIoctls = masked{mask: 0x0000fff0, val: 0xff00}

// System call argument positions (the same on amd64 and arm64).
const (
	argPersona     = 0 // personality(persona)
	argIoctlReq    = 1 // ioctl(fd, request, ...)
	argSendtoFlags = 3 // sendto(fd, buf, len, flags, addr, addrlen)
	argSendmsgFlag = 2 // sendmsg(fd, msg, flags)
	argMmsgFlags   = 3 // sendmmsg(fd, msgvec, vlen, flags)
	argCloneFlags  = 0 // clone(flags, ...) on both amd64 and arm64
	argFamily      = 0 // socket(family, type, protocol), socketpair(family, ...)
	argType        = 1
	argProtocol    = 2
	argFcntlCmd    = 1 // fcntl(fd, cmd, arg)
	argMemfdFlags  = 1 // memfd_create(name, flags)
	argPrctlOption = 0 // prctl(option, arg2, ...)
	argPrctlArg2   = 1
	// utimensat(dirfd, pathname, times, flags)
	argUtimensatPath = 1
)

// filterSpec is a named group of rules that share one errno. The names
// ("deny", "socket", ...) label the rules in Summary and in errors.
type filterSpec struct {
	name      string
	errno     uint16
	errnoName string
	rules     []rule
	byNumber  []numberedSyscall
}

// rule denies its system calls unconditionally (neither clauses nor low32)
// or when any of its clauses holds (each clause is a conjunction of
// argument conditions), or, for a low32 rule, when low32 holds. A rule
// with conditions names exactly one system call: see assemble.go.
type rule struct {
	names   []string
	clauses []seccompbpf.ArgumentConditions // nil in a low32 rule
	// low32, when set, is the rule's condition: the low 32 bits of one
	// argument equal one of a few values. The assembler compiles a load
	// and one compare per value (see low32Link); conditions spells it as
	// the go-seccomp-bpf clauses it stands for, bit by bit, for the tests
	// that check the one against the other. Build does not make those
	// clauses: they were the largest share of its allocations (a
	// condition per bit of some 60 ioctl requests), and it never reads
	// them.
	low32 *low32In
	desc  string // for Summary; names every system call in names
	why   string // for an unconditional rule: Summary's desc is names and why
}

// conditional reports whether the rule looks at arguments.
func (r rule) conditional() bool { return len(r.clauses) > 0 || r.low32 != nil }

// conditions returns the rule's clauses; for a low32 rule, what low32
// says, one clause per value and then one per range, as go-seccomp-bpf
// would compare them (low32Equals, low32MaskedEquals).
func (r rule) conditions() []seccompbpf.ArgumentConditions {
	m := r.low32
	if m == nil {
		return r.clauses
	}
	out := make([]seccompbpf.ArgumentConditions, 0, len(m.vals)+len(m.masked))
	for _, v := range m.vals {
		out = append(out, low32Equals(m.arg, v))
	}
	for _, r := range m.masked {
		out = append(out, low32MaskedEquals(m.arg, r.mask, r.val))
	}
	return out
}

// low32In holds when uint32(argument arg) is one of vals, or when
// uint32(argument arg)&m.mask == m.val for one of masked.
type low32In struct {
	arg    uint32
	vals   []uint32
	masked []masked
}

// masked is a range of values: those whose bits under mask equal val.
type masked struct{ mask, val uint32 }

// low32Rule denies name when the low 32 bits of argument arg equal one of
// vals, whatever the upper 32 bits are.
func low32Rule(name string, arg uint32, desc string, vals ...uint32) rule {
	if len(vals) == 0 {
		panic("seccomp: low32Rule without a value never holds")
	}
	return rule{names: []string{name}, low32: &low32In{arg: arg, vals: vals}, desc: desc}
}

// low32MaskedRule is low32Rule with ranges: it also denies name when the
// low 32 bits of argument arg, masked, equal one of ranges.
func low32MaskedRule(name string, arg uint32, desc string, vals []uint32, ranges []masked) rule {
	for _, m := range ranges {
		if m.val&^m.mask != 0 {
			panic("seccomp: low32MaskedRule with a value outside its mask never holds")
		}
	}
	r := low32Rule(name, arg, desc, vals...)
	r.low32.masked = ranges
	return r
}

// description is the rule's line in Summary.
func (r rule) description() string {
	if r.desc != "" {
		return r.desc
	}
	return strings.Join(r.names, ", ") + " (" + r.why + ")"
}

// numberedSyscall is a system call denied by number because go-seccomp-bpf's
// tables (Linux v6.6) do not know its name.
type numberedSyscall struct {
	name string
	// nr is the same on amd64 and arm64: since Linux 5.1 new system calls
	// get one number on every architecture (alpha excepted).
	nr  uint32
	why string
}

// absentSyscalls lists, per GOARCH, the always-denied system calls that do
// not exist on that architecture. Build skips exactly these when they are
// missing from the table and fails on any other unknown name.
var absentSyscalls = map[string]map[string]string{
	"amd64": {},
	"arm64": {
		"fork":   "arm64 has no fork; libc and Go use clone",
		"vfork":  "arm64 has no vfork; libc uses clone(CLONE_VM|CLONE_VFORK)",
		"iopl":   "x86-only (I/O port privilege level)",
		"ioperm": "x86-only (I/O port permissions)",
		"uselib": "not in the asm-generic system call table",
		// The asm-generic table has only the *at forms of these; libc
		// implements the old names with them.
		"open":       "asm-generic has only openat",
		"creat":      "asm-generic has only openat",
		"mknod":      "asm-generic has only mknodat",
		"chmod":      "asm-generic has only fchmodat",
		"chown":      "asm-generic has only fchownat",
		"lchown":     "asm-generic has only fchownat",
		"utime":      "asm-generic has only utimensat",
		"utimes":     "asm-generic has only utimensat",
		"futimesat":  "asm-generic has only utimensat",
		"modify_ldt": "x86-only (local descriptor table)",
	},
}

// unconditional returns a rule denying names with a description naming them.
func unconditional(why string, names ...string) rule {
	return rule{names: names, why: why}
}

// filterSpecs is the whole policy, in order: for a system call several rules
// name, the first rule that matches its arguments decides (see assemble.go).
func filterSpecs(p Policy) []filterSpec {
	// Room for every rule a Policy adds (rules and specs below), so that
	// neither slice is copied as it grows.
	deny := filterSpec{name: "deny", errno: errnoEPERM, errnoName: "EPERM", rules: append(make([]rule, 0, 24),
		unconditional("access to other processes' memory and file descriptors",
			"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "process_madvise", "kcmp"),
		unconditional("io_uring performs I/O that seccomp cannot see",
			"io_uring_setup", "io_uring_enter", "io_uring_register"),
		unconditional("large kernel attack surface agents do not need",
			"bpf", "perf_event_open", "userfaultfd"),
		unconditional("kernel keyrings",
			"keyctl", "add_key", "request_key"),
		// name_to_handle_at has no use without open_by_handle_at, and it
		// resolves paths with no Landlock check of its own.
		unconditional("open_by_handle_at opens files without a path lookup; name_to_handle_at only serves it",
			"name_to_handle_at", "open_by_handle_at"),
		unconditional("mounts, root changes and namespaces",
			"mount", "umount2", "pivot_root", "chroot", "unshare", "setns",
			"fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree", "mount_setattr"),
		unconditional("loading kernel code",
			"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module"),
		// Each needs a capability root has; none is namespaced here, so a
		// sandboxed root process would change the whole machine.
		unconditional("the system clock, host name and kernel log, which a sandboxed root process would change or read for the whole machine",
			"settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "sethostname", "setdomainname", "syslog"),
		unconditional("system administration and legacy interfaces",
			"iopl", "ioperm", "swapon", "swapoff", "reboot", "acct", "quotactl", "quotactl_fd",
			"lookup_dcookie", "uselib"),
		// vhangup hangs up the caller's terminal (CAP_SYS_TTY_CONFIG);
		// fanotify watches, and with permission events blocks, file
		// access on whole mounts (CAP_SYS_ADMIN; without it, inotify-like
		// name events on granted files only, which inotify gives anyway);
		// modify_ldt installs 16-bit and call-gate segments, an old source
		// of kernel bugs no agent needs; memfd_secret memory is hidden from
		// the kernel itself, and counts against no one's memory but locked
		// memory.
		unconditional("the caller's terminal, whole-mount file watches, x86 segment tables and memory hidden from the kernel",
			"vhangup", "fanotify_init", "modify_ldt", "memfd_secret"),
		// sched_setattr carries its policy in memory, where seccomp
		// cannot see a real-time or deadline class.
		unconditional("its scheduling policy (real-time, deadline) is in a struct seccomp cannot read; sched_setscheduler is checked instead",
			"sched_setattr"),
	), byNumber: []numberedSyscall{{
		name: "open_tree_attr", nr: sysOpenTreeAttr,
		why: "Linux 6.15 open_tree with mount attributes; newer than go-seccomp-bpf's table",
	}, {
		name: "file_setattr", nr: sysFileSetattr,
		why: "Linux 6.17 chattr by path (FS_IOC_FSSETXATTR without a descriptor); newer than go-seccomp-bpf's table",
	}}}
	if !p.AllowSpawn {
		deny.rules = append(deny.rules, unconditional("Policy.AllowSpawn is false", "fork", "vfork"))
	}
	if !p.AllowExec {
		deny.rules = append(deny.rules, unconditional("Policy.AllowExec is false", "execve", "execveat"))
	}
	if p.AllowExec && p.ExecNonce {
		deny.rules = append(deny.rules, execNonceRules()...)
	}
	if p.DenySetsid {
		deny.rules = append(deny.rules, unconditional("Policy.DenySetsid: the process and its children stay in their session", "setsid"))
	}
	if !p.AllowSysVIPC {
		deny.rules = append(deny.rules, unconditional("System V IPC lives in the host's IPC namespace (Policy.AllowSysVIPC is false)",
			"shmget", "shmat", "shmctl", "shmdt", "msgget", "msgsnd", "msgrcv", "msgctl", "semget", "semop", "semtimedop", "semctl"),
			// The IPC namespace's mqueue filesystem is reached by no
			// path, and Landlock checks only the open of a queue:
			// mq_open(O_CREAT) makes the queue before its open is
			// refused, mq_unlink removes any queue the user may.
			unconditional("POSIX message queues live in the host's IPC namespace, where Landlock does not check their creation or removal (Policy.AllowSysVIPC is false)",
				"mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr"))
	}
	if p.DenyPathMetadata {
		deny.rules = append(deny.rules, unconditional("Policy.DenyPathMetadata: Landlock does not check mode or time changes by path",
			"chmod", "fchmodat", "fchmodat2", "utime", "utimes", "futimesat"))
	}
	if p.DenyPathMetadata || p.DenyChownXattr {
		deny.rules = append(deny.rules, unconditional("Landlock does not check owner or extended attribute changes by path",
			"chown", "lchown", "fchownat", "setxattr", "lsetxattr", "removexattr", "lremovexattr"))
		deny.byNumber = append(deny.byNumber,
			numberedSyscall{name: "setxattrat", nr: sysSetxattrat, why: "Linux 6.13 setxattr relative to a directory; newer than go-seccomp-bpf's table"},
			numberedSyscall{name: "removexattrat", nr: sysRemovexattrat, why: "Linux 6.13 removexattr relative to a directory; newer than go-seccomp-bpf's table"})
	}
	// clone is the one system call with argument conditions in "deny".
	cloneRule := rule{
		names: []string{"clone"},
		clauses: []seccompbpf.ArgumentConditions{
			{low32AnySet(argCloneFlags, cloneNewNamespaces|cloneParent)},
		},
		desc: "clone with any CLONE_NEW* flag (NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET) or CLONE_PARENT " +
			"(a child of the caller's parent, which the caller would have to reap) in the low 32 bits of flags",
	}
	if !p.AllowSpawn {
		cloneRule.clauses = append(cloneRule.clauses,
			seccompbpf.ArgumentConditions{low32NoneSet(argCloneFlags, cloneThread)})
		cloneRule.desc += ", or without CLONE_THREAD (a new process; Policy.AllowSpawn is false)"
	}
	deny.rules = append(deny.rules, cloneRule)

	specs := append(make([]filterSpec, 0, 16),
		deny,
		filterSpec{name: "personality", errno: errnoEPERM, errnoName: "EPERM", rules: []rule{{
			names: []string{"personality"},
			clauses: []seccompbpf.ArgumentConditions{
				noneOf(argPersona, perLinux, perLinux32, perUname26, perLinux32U26, personalityGet),
			},
			desc: "personality unless persona is exactly 0x0, 0x8, 0x20000, 0x20008 or 0xffffffff (query); " +
				"blocks ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC, MMAP_PAGE_ZERO and the like",
		}}},
		filterSpec{name: "ioctl", errno: errnoEPERM, errnoName: "EPERM", rules: []rule{
			low32MaskedRule("ioctl", argIoctlReq,
				"ioctl when the low 32 bits of request are a terminal request that acts on others "+
					"(TIOCSTI, TIOCLINUX, TIOCSCTTY, TIOCSPGRP, TIOCNOTTY, TIOCVHANGUP, TIOCCONS, TIOCSETD, TIOCEXCL, TIOCSWINSZ, "+
					"TIOCSLCKTRMIOS, TIOCSSERIAL, TIOCSRS485, TIOCSISO7816, TIOCSERCONFIG, KD*, VT_*), a network device request (SIOCS*, SIOCADD*/SIOCDEL* "+
					"routes, ARP, multicast, bridges, bonding, SIOCETHTOOL, SIOCWANDEV, the private ranges, wireless setters) "+
					"a filesystem-wide or file flag request (FIFREEZE, FITHAW, FS_IOC_SHUTDOWN, FS_IOC_SETFSLABEL, "+
					"FS_IOC_SETFSUUID, FS_IOC_SETFLAGS, FS_IOC_FSSETXATTR, FS_IOC_SETVERSION), "+
					"or a pidfs request (type 0xFF, numbers 0x00-0x0f: PIDFD_GET_INFO, PIDFD_GET_*_NAMESPACE), whatever the descriptor",
				slices.Concat(ttyIoctls, netdevIoctls, fsIoctls), maskedIoctls),
		}},
		filterSpec{name: "ioctl-modem-lines", errno: errnoENOTTY, errnoName: "ENOTTY", rules: []rule{
			low32Rule("ioctl", argIoctlReq,
				"ioctl when the low 32 bits of request set a serial line's modem lines (TIOCMSET, TIOCMBIS, TIOCMBIC: DTR, RTS), "+
					"answered as a pseudo-terminal answers",
				modemLineIoctls...),
		}},
		filterSpec{name: "fcntl-lease", errno: errnoEPERM, errnoName: "EPERM", rules: []rule{
			low32Rule("fcntl", argFcntlCmd,
				"fcntl F_SETLEASE (1024): a lease on a file the sandbox may only read blocks other processes' opens for writing",
				fSetlease),
		}},
		setidSpec(),
		filterSpec{name: "other-process", errno: errnoEPERM, errnoName: "EPERM", rules: otherProcessRules()},
	)
	if p.DenyPathMetadata {
		specs = append(specs, filterSpec{name: "utimensat-path", errno: errnoEPERM, errnoName: "EPERM", rules: []rule{{
			names:   []string{"utimensat"},
			clauses: []seccompbpf.ArgumentConditions{{argNotEqual(argUtimensatPath, 0)}},
			desc:    "utimensat with a path (any of the 64 bits of the pointer set); utimensat(fd, NULL, ...), which is futimens, stays allowed",
		}}})
	}
	if p.DenyPdeathsigChange {
		specs = append(specs, filterSpec{name: "prctl-pdeathsig", errno: errnoEPERM, errnoName: "EPERM", rules: []rule{{
			names: []string{"prctl"},
			clauses: []seccompbpf.ArgumentConditions{
				append(low32Equals(argPrctlOption, prSetPdeathsig), argNotEqual(argPrctlArg2, sigKill)),
			},
			desc: "prctl(PR_SET_PDEATHSIG, sig) unless sig is exactly SIGKILL (Policy.DenyPdeathsigChange): " +
				"the parent-death signal cannot be cleared or made catchable",
		}}})
	}
	specs = append(specs,
		fastOpenSpec("sendto", argSendtoFlags),
		fastOpenSpec("sendmsg", argSendmsgFlag),
		fastOpenSpec("sendmmsg", argMmsgFlags),
		// Before "socket", which refuses the same calls with EPERM: the
		// first rule that matches decides.
		filterSpec{name: "mptcp", errno: errnoEPROTONOSUPPORT, errnoName: "EPROTONOSUPPORT", rules: []rule{
			low32Rule("socket", argProtocol,
				"socket when the low 32 bits of protocol are IPPROTO_MPTCP (262): Landlock does not restrict MPTCP, "+
					"and on this errno Go and other clients fall back to plain TCP",
				ipprotoMPTCP),
		}},
		socketSpec(p),
		filterSpec{name: "socketpair", errno: errnoEPERM, errnoName: "EPERM", rules: []rule{{
			names:   []string{"socketpair"},
			clauses: []seccompbpf.ArgumentConditions{noneOf(argFamily, afUnix)},
			desc:    "socketpair unless family is exactly AF_UNIX (other families could only load protocol modules or reach AF_TIPC)",
		}}},
		enosysSpec(p),
	)
	return specs
}

// setidSpec refuses the set-user-ID and set-group-ID bits in every mode
// argument that can give a file its mode, inside write paths too: a file
// made set-user-ID by a sandboxed root process would be a root program for
// every local user. mode_t arguments are read by the kernel as umode_t
// (16 bits), open's flags as int: both are within the low 32 bits.
func setidSpec() filterSpec {
	setid := uint32(sISUID | sISGID)
	mode := func(name string, arg uint32) rule {
		return rule{names: []string{name}, clauses: []seccompbpf.ArgumentConditions{{low32AnySet(arg, setid)}},
			desc: name + " with S_ISUID or S_ISGID in its mode (argument " + strconv.Itoa(int(arg)) + ")"}
	}
	open := func(name string, flags, modeArg uint32) rule {
		return rule{names: []string{name}, clauses: []seccompbpf.ArgumentConditions{{
			low32AnySet(flags, oCreat|oTmpfile), low32AnySet(modeArg, setid),
		}}, desc: name + " with O_CREAT or O_TMPFILE and S_ISUID or S_ISGID in its mode"}
	}
	return filterSpec{name: "setid-mode", errno: errnoEPERM, errnoName: "EPERM", rules: []rule{
		mode("chmod", 1), mode("fchmod", 1), mode("fchmodat", 2), mode("fchmodat2", 2),
		mode("creat", 1), mode("mknod", 1), mode("mknodat", 2),
		open("open", 1, 2), open("openat", 2, 3),
	}}
}

// otherProcessRules refuse the calls that change another process's
// limits, priority, CPU set, scheduling or memory placement: they are
// allowed only on the caller itself, pid (or who) 0, compared on the 32
// bits the kernel reads (pid_t and int). The kernel lets a process do all
// of them to every process of its user (prlimit64 on the parent with
// RLIMIT_CPU has the kernel kill it); Landlock has no hook for them. A
// thread ID is refused too, so pthread_setaffinity_np and per-thread nice
// values fail with EPERM.
func otherProcessRules() []rule {
	notSelf := func(name string, arg uint32) rule {
		return rule{names: []string{name}, clauses: []seccompbpf.ArgumentConditions{{low32AnySet(arg, 0xffffffff)}},
			desc: name + " unless its pid (argument " + strconv.Itoa(int(arg)) + ") is 0, the caller"}
	}
	setpriority := rule{names: []string{"setpriority"}, clauses: []seccompbpf.ArgumentConditions{
		{low32AnySet(0, 0xffffffff)}, // which != PRIO_PROCESS
		{low32AnySet(1, 0xffffffff)}, // who != 0
		{low32AnySet(2, 0x80000000)}, // a negative nice value
	}, desc: "setpriority unless which is PRIO_PROCESS and who is 0 (PRIO_PGRP and PRIO_USER reach other processes), " +
		"or with a negative nice value"}
	ioprio := rule{names: []string{"ioprio_set"},
		clauses: append(low32NotEqual(0, ioprioWhoProcess), seccompbpf.ArgumentConditions{low32AnySet(1, 0xffffffff)}),
		desc:    "ioprio_set unless which is IOPRIO_WHO_PROCESS and who is 0"}
	sched := rule{names: []string{"sched_setscheduler"}, clauses: []seccompbpf.ArgumentConditions{
		{low32AnySet(0, 0xffffffff)},
		low32MaskedEquals(1, ^uint32(schedResetOnFork), schedFIFO),
		low32MaskedEquals(1, ^uint32(schedResetOnFork), schedRR),
		low32MaskedEquals(1, ^uint32(schedResetOnFork), schedDeadline),
	}, desc: "sched_setscheduler unless pid is 0, or with SCHED_FIFO, SCHED_RR or SCHED_DEADLINE (with or without SCHED_RESET_ON_FORK)"}
	return []rule{
		notSelf("prlimit64", 0), setpriority, ioprio,
		notSelf("sched_setaffinity", 0), notSelf("sched_setparam", 0), sched,
		notSelf("migrate_pages", 0), notSelf("move_pages", 0),
	}
}

// enosysSpec holds the compatibility answers: calls refused with the
// errno a kernel without them gives, on which programs fall back to
// something the filter can check.
func enosysSpec(p Policy) filterSpec {
	spec := filterSpec{name: "enosys", errno: errnoENOSYS, errnoName: "ENOSYS", rules: []rule{
		unconditional("its flags are in a struct seccomp cannot read; ENOSYS makes libc fall back to clone, whose flags are checked",
			"clone3"),
		unconditional("its mode is in a struct seccomp cannot read; on ENOSYS callers (systemd, Rust's cap-std and rustix users) use openat, whose mode is checked",
			"openat2"),
	}}
	// The memfd rule, seen from a real caller: OpenJDK's Z garbage
	// collector (17.0.15 of Debian 12, and 25.0.3) keeps the Java heap in
	// memfd_create("java_heap", MFD_CLOEXEC), with neither
	// MFD_NOEXEC_SEAL nor MFD_EXEC. On Linux 6.3+ with vm.memfd_noexec=0
	// (the default) that memfd is created with mode 0777, executable,
	// so a kernel new enough to seal does not make the rule unnecessary:
	// it answers this call ENOSYS on every kernel. The JVM then logs
	// "Failed to create memfd file (Function not supported)" and puts the
	// heap in a file it creates with O_TMPFILE in a tmpfs mount point
	// (/dev/shm first), which Landlock checks: it runs with
	// allow_shared_memory and refuses to start without it (EACCES).
	// HotSpot falls back on any errno (strace-injected EPERM, EACCES and
	// EINVAL give the same fallback); ENOSYS is chosen for the callers
	// that test for it, see desc. TestRunMemfdFallbackZGC runs it.
	if p.AllowExec {
		spec.rules = append(spec.rules, rule{
			names:   []string{"memfd_create"},
			clauses: []seccompbpf.ArgumentConditions{{low32NoneSet(argMemfdFlags, mfdNoexecSeal)}},
			desc: "memfd_create without MFD_NOEXEC_SEAL (0x8) when exec is allowed: Landlock does not check execute on a memfd, " +
				"so an executable one would run any code; ENOSYS is what libc stubs and kernels before 3.17 answer, on which " +
				"programs fall back to a file in /dev/shm, /tmp or $XDG_RUNTIME_DIR (Landlock-checked)",
		})
	}
	return spec
}

// fastOpenSpec denies MSG_FASTOPEN in the flags argument of a send call.
// With it, sendto/sendmsg connect a TCP socket without calling connect(2),
// and so without Landlock's connect check.
func fastOpenSpec(name string, flagsArg uint32) filterSpec {
	return filterSpec{name: name + "-fastopen", errno: errnoEPERM, errnoName: "EPERM", rules: []rule{{
		names:   []string{name},
		clauses: []seccompbpf.ArgumentConditions{{low32AnySet(flagsArg, msgFastopen)}},
		desc:    name + " with MSG_FASTOPEN (0x20000000) in the low 32 bits of flags: TCP Fast Open connects without Landlock's connect check",
	}}}
}

// sockTypes returns base with every combination of SOCK_NONBLOCK and
// SOCK_CLOEXEC, as exact 64-bit values.
func sockTypes(base uint64) []uint64 {
	return []uint64{base, base | sockNonblock, base | sockCloexec, base | sockNonblock | sockCloexec}
}

// socketSpec builds the "socket" filter: deny every socket(2) call outside
// the set the Policy grants,
//
//	U: family == AF_UNIX, any type, protocol == 0          (AllowUnixSockets)
//	T: family in {AF_INET, AF_INET6}, type in sockTypes(SOCK_STREAM),
//	   protocol in {0, IPPROTO_TCP}                          (AllowTCP)
//	D: family in {AF_INET, AF_INET6}, type in sockTypes(SOCK_DGRAM),
//	   protocol in {0, IPPROTO_UDP}                          (AllowUDP)
//
// with all values compared as exact 64-bit values, so that an argument with
// any of its upper 32 bits set (which the kernel would ignore) is denied.
// The library can only deny when one of several conjunctions holds, so the
// complement of U ∪ T ∪ D is written as these clauses:
//
//	C1: family is none of the granted families
//	C2: family == AF_UNIX and protocol != 0                     (if U)
//	C3: family == F and type is none of the granted types       (if T or D, per F)
//	C4: family == F and type&SOCK_STREAM != 0 and protocol
//	    is neither 0 nor IPPROTO_TCP                            (if T, per F)
//	C5: family == F and type&SOCK_DGRAM != 0 and protocol
//	    is neither 0 nor IPPROTO_UDP                            (if D, per F)
//
// Each clause implies the call is not granted. Conversely a call not granted
// either has a family outside the granted ones (C1), or is AF_UNIX with a
// protocol other than 0 (C2), or is inet with a type outside the granted
// ones (C3), or is inet with a granted type and a protocol that does not fit
// it: a granted stream type has bit SOCK_STREAM (0x1) set and never bit
// SOCK_DGRAM (0x2), a granted datagram type the reverse, because the flag
// bits are 0x800 and 0x80000, so C4 or C5 holds. C4 and C5 test a single bit
// only where C3 has already excluded every type but the granted ones.
func socketSpec(p Policy) filterSpec {
	spec := filterSpec{name: "socket", errno: errnoEPERM, errnoName: "EPERM"}
	var families []uint64
	var granted []string
	if p.AllowUnixSockets {
		families = append(families, afUnix)
		granted = append(granted, "AF_UNIX (any type, protocol 0)")
	}
	inet := p.AllowTCP || p.AllowUDP
	if inet {
		families = append(families, afInet, afInet6)
	}
	if p.AllowTCP {
		granted = append(granted, "AF_INET/AF_INET6 SOCK_STREAM[|SOCK_NONBLOCK|SOCK_CLOEXEC] with protocol 0 or IPPROTO_TCP")
	}
	if p.AllowUDP {
		granted = append(granted, "AF_INET/AF_INET6 SOCK_DGRAM[|SOCK_NONBLOCK|SOCK_CLOEXEC] with protocol 0 or IPPROTO_UDP")
	}
	if len(families) == 0 {
		spec.rules = []rule{unconditional("no socket family is granted by the Policy", "socket")}
		return spec
	}

	clauses := []seccompbpf.ArgumentConditions{noneOf(argFamily, families...)} // C1
	if p.AllowUnixSockets {
		clauses = append(clauses, seccompbpf.ArgumentConditions{ // C2
			argEqual(argFamily, afUnix), argNotEqual(argProtocol, 0),
		})
	}
	if inet {
		var types []uint64
		if p.AllowTCP {
			types = append(types, sockTypes(sockStream)...)
		}
		if p.AllowUDP {
			types = append(types, sockTypes(sockDgram)...)
		}
		for _, fam := range []uint64{afInet, afInet6} {
			clauses = append(clauses, append(seccompbpf.ArgumentConditions{argEqual(argFamily, fam)}, noneOf(argType, types...)...)) // C3
			if p.AllowTCP {
				clauses = append(clauses, seccompbpf.ArgumentConditions{ // C4
					argEqual(argFamily, fam), low32AnySet(argType, sockStream),
					argNotEqual(argProtocol, 0), argNotEqual(argProtocol, ipprotoTCP),
				})
			}
			if p.AllowUDP {
				clauses = append(clauses, seccompbpf.ArgumentConditions{ // C5
					argEqual(argFamily, fam), low32AnySet(argType, sockDgram),
					argNotEqual(argProtocol, 0), argNotEqual(argProtocol, ipprotoUDP),
				})
			}
		}
	}
	spec.rules = []rule{{
		names:   []string{"socket"},
		clauses: clauses,
		desc: "every socket call except " + strings.Join(granted, "; ") +
			" (arguments compared as full 64-bit values; netlink, packet, raw, vsock and all other families are refused)",
	}}
	return spec
}
