package seccomp

import (
	"fmt"
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

// rule denies its system calls unconditionally (no clauses) or when any of
// its clauses holds (each clause is a conjunction of argument conditions).
// A rule with clauses names exactly one system call: see assemble.go.
type rule struct {
	names   []string
	clauses []seccompbpf.ArgumentConditions
	// low32, when set, is what clauses say in another form: the low 32
	// bits of one argument equal one of a few values. The assembler then
	// compiles a load and one compare per value (see low32Link) rather
	// than clauses, which go-seccomp-bpf can only express bit by bit.
	// clauses stay the reference: Summary and the tests read them.
	low32 *low32In
	desc  string // for Summary; names every system call in names
	why   string // for an unconditional rule: Summary's desc is names and why
}

// low32In holds when uint32(argument arg) is one of vals.
type low32In struct {
	arg  uint32
	vals []uint32
}

// low32Rule denies name when the low 32 bits of argument arg equal one of
// vals, whatever the upper 32 bits are.
func low32Rule(name string, arg uint32, desc string, vals ...uint32) rule {
	r := rule{names: []string{name}, low32: &low32In{arg: arg, vals: vals}, desc: desc}
	for _, v := range vals {
		r.clauses = append(r.clauses, low32Equals(arg, v))
	}
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
	},
}

// unconditional returns a rule denying names with a description naming them.
func unconditional(why string, names ...string) rule {
	return rule{names: names, why: why}
}

// filterSpecs is the whole policy, in order: for a system call several rules
// name, the first rule that matches its arguments decides (see assemble.go).
func filterSpecs(p Policy) []filterSpec {
	deny := filterSpec{name: "deny", errno: errnoEPERM, errnoName: "EPERM", rules: []rule{
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
	}, byNumber: []numberedSyscall{{
		name: "open_tree_attr", nr: sysOpenTreeAttr,
		why: "Linux 6.15 open_tree with mount attributes; newer than go-seccomp-bpf's table",
	}}}
	if !p.AllowSpawn {
		deny.rules = append(deny.rules, unconditional("Policy.AllowSpawn is false", "fork", "vfork"))
	}
	if !p.AllowExec {
		deny.rules = append(deny.rules, unconditional("Policy.AllowExec is false", "execve", "execveat"))
	}
	if p.DenySetsid {
		deny.rules = append(deny.rules, unconditional("Policy.DenySetsid: the process and its children stay in their session", "setsid"))
	}
	// clone is the one system call with argument conditions in "deny".
	cloneRule := rule{
		names: []string{"clone"},
		clauses: []seccompbpf.ArgumentConditions{
			{low32AnySet(argCloneFlags, cloneNewNamespaces)},
		},
		desc: "clone with any CLONE_NEW* flag (NEWNS, NEWCGROUP, NEWUTS, NEWIPC, NEWUSER, NEWPID, NEWNET) in the low 32 bits of flags",
	}
	if !p.AllowSpawn {
		cloneRule.clauses = append(cloneRule.clauses,
			seccompbpf.ArgumentConditions{low32NoneSet(argCloneFlags, cloneThread)})
		cloneRule.desc += ", or without CLONE_THREAD (a new process; Policy.AllowSpawn is false)"
	}
	deny.rules = append(deny.rules, cloneRule)

	return []filterSpec{
		deny,
		{name: "personality", errno: errnoEPERM, errnoName: "EPERM", rules: []rule{{
			names: []string{"personality"},
			clauses: []seccompbpf.ArgumentConditions{
				noneOf(argPersona, perLinux, perLinux32, perUname26, perLinux32U26, personalityGet),
			},
			desc: "personality unless persona is exactly 0x0, 0x8, 0x20000, 0x20008 or 0xffffffff (query); " +
				"blocks ADDR_NO_RANDOMIZE, READ_IMPLIES_EXEC, MMAP_PAGE_ZERO and the like",
		}}},
		{name: "ioctl-tty", errno: errnoEPERM, errnoName: "EPERM", rules: []rule{
			low32Rule("ioctl", argIoctlReq,
				"ioctl when the low 32 bits of request are TIOCSTI (0x5412) or TIOCLINUX (0x541c): injecting input into a terminal",
				tiocsti, tioclinux),
		}},
		fastOpenSpec("sendto", argSendtoFlags),
		fastOpenSpec("sendmsg", argSendmsgFlag),
		fastOpenSpec("sendmmsg", argMmsgFlags),
		// Before "socket", which refuses the same calls with EPERM: the
		// first rule that matches decides.
		{name: "mptcp", errno: errnoEPROTONOSUPPORT, errnoName: "EPROTONOSUPPORT", rules: []rule{
			low32Rule("socket", argProtocol,
				"socket when the low 32 bits of protocol are IPPROTO_MPTCP (262): Landlock does not restrict MPTCP, "+
					"and on this errno Go and other clients fall back to plain TCP",
				ipprotoMPTCP),
		}},
		socketSpec(p),
		{name: "socketpair", errno: errnoEPERM, errnoName: "EPERM", rules: []rule{{
			names:   []string{"socketpair"},
			clauses: []seccompbpf.ArgumentConditions{noneOf(argFamily, afUnix)},
			desc:    "socketpair unless family is exactly AF_UNIX (other families could only load protocol modules or reach AF_TIPC)",
		}}},
		{name: "clone3-enosys", errno: errnoENOSYS, errnoName: "ENOSYS", rules: []rule{
			unconditional("its flags are in a struct seccomp cannot read; ENOSYS makes libc fall back to clone, whose flags are checked",
				"clone3"),
		}},
	}
}

// fastOpenSpec denies MSG_FASTOPEN in the flags argument of a send call.
// With it, sendto/sendmsg connect a TCP socket without calling connect(2),
// and so without Landlock's connect check.
func fastOpenSpec(name string, flagsArg uint32) filterSpec {
	return filterSpec{name: name + "-fastopen", errno: errnoEPERM, errnoName: "EPERM", rules: []rule{{
		names:   []string{name},
		clauses: []seccompbpf.ArgumentConditions{{low32AnySet(flagsArg, msgFastopen)}},
		desc:    fmt.Sprintf("%s with MSG_FASTOPEN (0x20000000) in the low 32 bits of flags: TCP Fast Open connects without Landlock's connect check", name),
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
