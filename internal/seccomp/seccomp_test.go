package seccomp

import (
	"math/rand/v2"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	seccompbpf "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
)

// The test's own statement of the policy, written independently of rules.go.

// alwaysDenied are denied with EPERM under every Policy.
var alwaysDenied = []string{
	"ptrace", "process_vm_readv", "process_vm_writev", "pidfd_getfd", "process_madvise", "kcmp",
	"settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "sethostname", "setdomainname", "syslog",
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	"bpf", "perf_event_open", "userfaultfd",
	"keyctl", "add_key", "request_key",
	"open_by_handle_at", "name_to_handle_at",
	"mount", "umount2", "pivot_root", "chroot", "unshare", "setns",
	"fsopen", "fsconfig", "fsmount", "fspick", "move_mount", "open_tree", "mount_setattr",
	"kexec_load", "kexec_file_load", "init_module", "finit_module", "delete_module",
	"iopl", "ioperm", "swapon", "swapoff", "reboot", "acct", "quotactl", "quotactl_fd",
	"lookup_dcookie", "uselib",
	"vhangup", "fanotify_init", "modify_ldt", "memfd_secret", "sched_setattr",
}

// Denied under some Policy fields only, whatever the arguments.
var (
	sysvSyscalls = []string{"shmget", "shmat", "shmctl", "shmdt", "msgget", "msgsnd", "msgrcv", "msgctl",
		"semget", "semop", "semtimedop", "semctl",
		"mq_open", "mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify", "mq_getsetattr"} // unless AllowSysVIPC
	pathModeSyscalls   = []string{"chmod", "fchmodat", "fchmodat2", "utime", "utimes", "futimesat"} // DenyPathMetadata
	chownXattrSyscalls = []string{"chown", "lchown", "fchownat", "setxattr", "lsetxattr", "removexattr",
		"lremovexattr"} // DenyPathMetadata or DenyChownXattr
	// Checked on their arguments under some Policy fields only.
	policyConditional = map[string]func(Policy) bool{
		"utimensat":    func(p Policy) bool { return p.DenyPathMetadata },
		"prctl":        func(p Policy) bool { return p.DenyPdeathsigChange },
		"memfd_create": func(p Policy) bool { return p.AllowExec },
	}
)

// byNumberDenied returns the system calls p denies by number (not in
// go-seccomp-bpf's table): open_tree_attr (467) and file_setattr (469)
// always, setxattrat (463) and removexattrat (466) with the chown and
// xattr rules.
func byNumberDenied(p Policy) []int32 {
	nrs := []int32{467, 469}
	if p.DenyPathMetadata || p.DenyChownXattr {
		nrs = append(nrs, 463, 466)
	}
	return nrs
}

var (
	spawnSyscalls = []string{"fork", "vfork"}      // denied unless AllowSpawn
	execSyscalls  = []string{"execve", "execveat"} // denied unless AllowExec
	// conditional are denied for some arguments only.
	conditional = []string{"clone", "personality", "ioctl", "sendto", "sendmsg", "sendmmsg", "socket", "socketpair",
		"fcntl", "fchmod", "creat", "mknod", "mknodat", "open", "openat",
		"prlimit64", "setpriority", "ioprio_set", "sched_setaffinity", "sched_setparam", "sched_setscheduler",
		"migrate_pages", "move_pages"}
)

// Values from the Linux UAPI, typed again here so that a typo in rules.go
// does not carry over into the expectations.
const (
	tCloneVM      = 0x100
	tCloneFS      = 0x200
	tCloneFiles   = 0x400
	tCloneSighand = 0x800
	tClonePidfd   = 0x1000
	tCloneVfork   = 0x4000
	tCloneThread  = 0x10000
	tCloneSysvsem = 0x40000
	tCloneSettls  = 0x80000
	tSIGCHLD      = 17
	tCloneNewNS   = 0x20000
	tCloneNewCG   = 0x2000000
	tCloneNewUTS  = 0x4000000
	tCloneNewIPC  = 0x8000000
	tCloneNewUser = 0x10000000
	tCloneNewPID  = 0x20000000
	tCloneNewNet  = 0x40000000
	tCloneNewTime = 0x80

	// goThreadFlags are the clone flags of the Go runtime's newosproc.
	goThreadFlags = tCloneVM | tCloneFS | tCloneFiles | tCloneSighand | tCloneSysvsem | tCloneThread

	tAFUnix    = 1
	tAFInet    = 2
	tAFInet6   = 10
	tAFNetlink = 16
	tAFPacket  = 17
	tAFTIPC    = 30
	tAFVsock   = 40
	tAFXDP     = 44

	tStream    = 1
	tDgram     = 2
	tRaw       = 3
	tSeqpacket = 5
	tPacket    = 10
	tNonblock  = 0x800
	tCloexec   = 0x80000

	tTCP   = 6
	tUDP   = 17
	tMPTCP = 262

	tTIOCSTI    = 0x5412
	tTIOCLINUX  = 0x541c
	tTCGETS     = 0x5401
	tTIOCGWINSZ = 0x5413
	tFIONBIO    = 0x5421

	tMsgFastopen = 0x20000000
	tMsgNosignal = 0x4000
	tMsgDontwait = 0x40

	high = 0xffffffff_00000000
)

func TestVMBytesLayout(t *testing.T) {
	d := seccompData{nr: 39, arch: auditArchX86_64, args: [6]uint64{0x11111111_22222222, 0, 0, 0, 0, 0x33333333_44444444}}
	for _, tc := range []struct {
		off  uint32
		want uint32
	}{{0, 39}, {4, auditArchX86_64}, {16, 0x22222222}, {20, 0x11111111}, {56, 0x44444444}, {60, 0x33333333}} {
		vm, err := bpf.NewVM([]bpf.Instruction{bpf.LoadAbsolute{Off: tc.off, Size: 4}, bpf.RetA{}})
		if err != nil {
			t.Fatal(err)
		}
		got, err := vm.Run(d.vmBytes())
		if err != nil {
			t.Fatal(err)
		}
		if uint32(got) != tc.want {
			t.Errorf("ld [%d] = %#x, want %#x", tc.off, got, tc.want)
		}
	}
}

func TestBuildOneProgram(t *testing.T) {
	requireAMD64(t)
	for _, p := range allPolicies() {
		f, err := Build(p)
		if err != nil {
			t.Fatal(err)
		}
		if f.Name != "sandbox" || len(f.Program) == 0 || len(f.Program) > bpfMaxInsns {
			t.Errorf("Build(%+v): %q, %d instructions", p, f.Name, len(f.Program))
		}
	}
}

// TestDecisionDepth bounds how many instructions the program runs before it
// answers a system call, or before it first reads an argument. The kernel
// runs the program for every system call number when it loads it (to fill
// its action cache) and on every call the cache cannot answer, so this is
// the filter's cost; a linear list of the ~60 numbers the rules name would
// take up to 70.
func TestDecisionDepth(t *testing.T) {
	requireAMD64(t)
	const maxDecide, maxToArgs = 16, 24
	for _, p := range allPolicies() {
		prog := buildVM(t, p)[0].raw
		for nr := uint32(0); nr < 1024; nr++ {
			steps, _, err := constRun(prog, nr, auditArchX86_64)
			limit := maxDecide
			if err != nil { // stopped at an argument load
				limit = maxToArgs
			}
			if steps > limit {
				t.Errorf("under %+v, nr %d: %d instructions (%v), want at most %d", p, nr, steps, err, limit)
			}
		}
	}
}

// TestAbsentSyscalls checks, for every supported GOARCH, that each system
// call the rules name is either in go-seccomp-bpf's table or listed as
// absent, never both. It reads the tables directly, so it runs everywhere.
func TestAbsentSyscalls(t *testing.T) {
	tables := map[string]*arch.Info{"amd64": arch.X86_64, "arm64": arch.AARCH64}
	if len(tables) != len(absentSyscalls) {
		t.Fatalf("absentSyscalls has GOARCHes %v; the test knows %v", absentSyscalls, tables)
	}
	for goarch, info := range tables {
		absent, ok := absentSyscalls[goarch]
		if !ok {
			t.Fatalf("no absentSyscalls entry for %s", goarch)
		}
		seen := map[string]bool{}
		for _, p := range allPolicies() {
			for _, s := range filterSpecs(p) {
				for _, r := range s.rules {
					for _, n := range r.names {
						seen[n] = true
						_, inTable := info.SyscallNames[n]
						_, isAbsent := absent[n]
						if inTable == isAbsent {
							t.Errorf("%s: %q in table=%v, listed absent=%v", goarch, n, inTable, isAbsent)
						}
					}
				}
				for _, n := range s.byNumber {
					if _, ok := info.SyscallNames[n.name]; ok {
						continue
					}
					if other, ok := info.SyscallNumbers[int(n.nr)]; ok {
						t.Errorf("%s: %s's number %d is %q in the table", goarch, n.name, n.nr, other)
					}
				}
			}
		}
		for n := range absent {
			if !seen[n] {
				t.Errorf("%s: %q listed absent but no rule names it", goarch, n)
			}
		}
	}
}

func TestAlwaysDenied(t *testing.T) {
	requireAMD64(t)
	for _, p := range allPolicies() {
		for _, name := range alwaysDenied {
			for _, args := range [][]uint64{nil, {1, 2, 3, 4, 5, 6}, {high, high, high, high, high, high}} {
				expect(t, p, call(t, name, args...), eperm, name)
			}
		}
		// open_tree_attr is not in go-seccomp-bpf's table; denied by number.
		expect(t, p, seccompData{nr: 467, arch: auditArchX86_64}, eperm, "open_tree_attr")
		expect(t, p, seccompData{nr: 467, arch: auditArchX86_64, args: [6]uint64{high, 1, 2}}, eperm, "open_tree_attr")
	}
}

func TestSpawnAndExec(t *testing.T) {
	requireAMD64(t)
	for _, p := range allPolicies() {
		want := eperm
		if p.AllowSpawn {
			want = allow
		}
		for _, n := range spawnSyscalls {
			expect(t, p, call(t, n), want, n)
		}
		want = eperm
		if p.AllowExec {
			want = allow
		}
		for _, n := range execSyscalls {
			expect(t, p, call(t, n, 0x1000, 0x2000, 0x3000), want, n)
		}
	}
}

func TestSetsid(t *testing.T) {
	requireAMD64(t)
	for _, p := range allPolicies() {
		want := allow
		if p.DenySetsid {
			want = eperm
		}
		expect(t, p, call(t, "setsid"), want, "setsid")
		expect(t, p, call(t, "setsid", high, high), want, "setsid")
		// setpgid and getsid stay allowed: only a new session escapes.
		expect(t, p, call(t, "setpgid", 0, 0), allow, "setpgid")
		expect(t, p, call(t, "getsid", 0), allow, "getsid")
	}
}

func TestClone(t *testing.T) {
	requireAMD64(t)
	namespaces := []uint64{tCloneNewNS, tCloneNewCG, tCloneNewUTS, tCloneNewIPC, tCloneNewUser, tCloneNewPID, tCloneNewNet}
	flags := []uint64{
		goThreadFlags,
		goThreadFlags | tCloneSettls,
		goThreadFlags | high,              // upper bits are ignored by the kernel
		tSIGCHLD,                          // fork
		tCloneVM | tCloneVfork | tSIGCHLD, // posix_spawn / os/exec
		tCloneVM | tCloneVfork | tClonePidfd | tSIGCHLD,
		tSIGCHLD | high,
		tCloneThread | 0x80000000_00000000,
		high | tCloneNewUser,     // a namespace flag with upper bits
		tCloneNewTime | tSIGCHLD, // 0x80 is part of the exit signal in clone(2)
		0,
	}
	for _, ns := range namespaces {
		flags = append(flags, ns|tSIGCHLD, ns|goThreadFlags, ns|high)
	}
	for _, p := range allPolicies() {
		for _, f := range flags {
			low := uint32(f)
			want := allow
			switch {
			case low&(tCloneNewNS|tCloneNewCG|tCloneNewUTS|tCloneNewIPC|tCloneNewUser|tCloneNewPID|tCloneNewNet) != 0:
				want = eperm
			case !p.AllowSpawn && low&tCloneThread == 0:
				want = eperm
			}
			expect(t, p, call(t, "clone", f, 0, 0, 0, 0), want, "clone")
		}
		// The flags are argument 0: the same value elsewhere changes nothing.
		expect(t, p, call(t, "clone", goThreadFlags, tCloneNewUser, tCloneNewUser, tCloneNewUser, tCloneNewUser, tCloneNewUser), allow, "clone")
		for _, args := range [][]uint64{nil, {0x1000, 64}, {high, high}} {
			expect(t, p, call(t, "clone3", args...), enosys, "clone3")
		}
	}
}

// socketOracle is the socket(2) part of the Policy as documented, written
// directly from the Policy field comments.
func socketOracle(p Policy, family, typ, proto uint64) uint32 {
	if uint32(proto) == tMPTCP {
		return eprotonosupport
	}
	base := typ &^ (tNonblock | tCloexec)
	switch {
	case p.AllowUnixSockets && family == tAFUnix && proto == 0:
		return allow
	case (family == tAFInet || family == tAFInet6) && p.AllowTCP && base == tStream && (proto == 0 || proto == tTCP):
		return allow
	case (family == tAFInet || family == tAFInet6) && p.AllowUDP && base == tDgram && (proto == 0 || proto == tUDP):
		return allow
	}
	return eperm
}

func TestSocket(t *testing.T) {
	requireAMD64(t)
	families := []uint64{0, tAFUnix, tAFInet, tAFInet6, 3, tAFNetlink, tAFPacket, tAFTIPC, tAFVsock, tAFXDP,
		1<<32 | tAFInet, 1<<32 | tAFUnix, high | tAFInet6, 0xffffffff}
	types := []uint64{0, tStream, tDgram, tRaw, tSeqpacket, tPacket,
		tStream | tNonblock, tStream | tCloexec, tStream | tNonblock | tCloexec,
		tDgram | tNonblock, tDgram | tCloexec, tDgram | tNonblock | tCloexec,
		tRaw | tCloexec, tSeqpacket | tNonblock | tCloexec,
		tStream | tDgram, tStream | 0x100, tNonblock, tCloexec, 1<<32 | tStream, high | tDgram | tCloexec}
	protos := []uint64{0, 1, tTCP, tUDP, 132, 136, 255, tMPTCP, 1 << 32, 1<<32 | tTCP, 1<<32 | tUDP, 1<<32 | tMPTCP, high | tMPTCP, 0xffffffff}
	for _, p := range allPolicies() {
		if p.AllowSpawn || p.AllowExec {
			continue // they do not affect socket(2); keep the grid affordable
		}
		for _, fam := range families {
			for _, typ := range types {
				for _, proto := range protos {
					expect(t, p, call(t, "socket", fam, typ, proto), socketOracle(p, fam, typ, proto), "socket")
				}
			}
		}
	}

	// The cases the policy is about, spelled out.
	none, all := Policy{}, Policy{AllowUnixSockets: true, AllowTCP: true, AllowUDP: true}
	tcp, udp, unix := Policy{AllowTCP: true}, Policy{AllowUDP: true}, Policy{AllowUnixSockets: true}
	for _, tc := range []struct {
		p                  Policy
		family, typ, proto uint64
		want               uint32
	}{
		{none, tAFUnix, tStream, 0, eperm},
		{none, tAFInet, tStream, 0, eperm},
		{none, tAFInet, tStream, tMPTCP, eprotonosupport},
		{tcp, tAFInet, tStream | tNonblock | tCloexec, 0, allow},
		{tcp, tAFInet6, tStream, tTCP, allow},
		{tcp, tAFInet, tStream | tNonblock | tCloexec, tMPTCP, eprotonosupport},
		{tcp, tAFInet6, tStream, tMPTCP, eprotonosupport},
		{tcp, tAFInet, tStream, 1<<32 | tTCP, eperm},
		{tcp, 1<<32 | tAFInet, tStream, 0, eperm},
		{tcp, tAFInet, 1<<32 | tStream, 0, eperm},
		{tcp, tAFInet, tDgram, 0, eperm},
		{tcp, tAFInet, tStream, tUDP, eperm},
		{tcp, tAFInet, tRaw, 0, eperm},
		{tcp, tAFUnix, tStream, 0, eperm},
		{udp, tAFInet, tDgram | tCloexec, 0, allow},
		{udp, tAFInet6, tDgram, tUDP, allow},
		{udp, tAFInet, tDgram, 1, eperm},   // ICMP "ping" socket
		{udp, tAFInet, tDgram, 136, eperm}, // UDP-Lite
		{udp, tAFInet, tStream, 0, eperm},
		{all, tAFInet, tDgram, tTCP, eperm},
		{all, tAFInet, tStream, tUDP, eperm},
		{all, tAFInet, tRaw, 255, eperm},
		{all, tAFInet, tSeqpacket, 0, eperm},
		{all, tAFPacket, tRaw, 0x300, eperm},
		{all, tAFNetlink, tRaw, 0, eperm},
		{all, tAFVsock, tStream, 0, eperm},
		{all, 1<<32 | tAFInet, tStream, 0, eperm},
		{all, 1<<32 | tAFUnix, tStream, 0, eperm},
		{unix, tAFUnix, tStream, 0, allow},
		{unix, tAFUnix, tSeqpacket | tCloexec, 0, allow},
		{unix, tAFUnix, tDgram, tAFUnix, eperm},
		{unix, tAFUnix, tStream, 1 << 32, eperm},
		{unix, tAFInet, tStream, 0, eperm},
	} {
		expect(t, tc.p, call(t, "socket", tc.family, tc.typ, tc.proto), tc.want, "socket")
	}
}

func TestSocketpair(t *testing.T) {
	requireAMD64(t)
	for _, p := range allPolicies() {
		for _, tc := range []struct {
			family uint64
			want   uint32
		}{
			{tAFUnix, allow}, {tAFInet, eperm}, {tAFTIPC, eperm}, {tAFNetlink, eperm}, {1<<32 | tAFUnix, eperm}, {0, eperm},
		} {
			expect(t, p, call(t, "socketpair", tc.family, tStream|tCloexec, 0, 0x1000), tc.want, "socketpair")
		}
	}
}

func TestIoctl(t *testing.T) {
	requireAMD64(t)
	for _, p := range allPolicies() {
		for _, tc := range []struct {
			req  uint64
			want uint32
		}{
			{tTIOCSTI, eperm},
			{high | tTIOCSTI, eperm},
			{1<<32 | tTIOCSTI, eperm},
			{tTIOCLINUX, eperm},
			{high | tTIOCLINUX, eperm},
			{tTCGETS, allow},
			{tTIOCGWINSZ, allow},
			{tFIONBIO, allow},
			{tTIOCSTI | 0x10000, allow},
			{tTIOCSTI &^ 0x2, eperm}, // TIOCSPGRP
			{tTIOCSTI | tTIOCLINUX, allow},
			{high, allow},
			{0, allow},
		} {
			expect(t, p, call(t, "ioctl", 0, tc.req, 0x7ffd0000), tc.want, "ioctl")
		}
		// The request is argument 1 only.
		expect(t, p, call(t, "ioctl", tTIOCSTI, tTCGETS, tTIOCSTI), allow, "ioctl")
	}
}

func TestSendFastOpen(t *testing.T) {
	requireAMD64(t)
	for _, p := range allPolicies() {
		for _, sc := range []struct {
			name string
			arg  int
		}{{"sendto", 3}, {"sendmsg", 2}, {"sendmmsg", 3}} {
			for _, tc := range []struct {
				flags uint64
				want  uint32
			}{
				{tMsgFastopen, eperm},
				{tMsgFastopen | tMsgNosignal | tMsgDontwait, eperm},
				{high | tMsgFastopen, eperm},
				{0xffffffff, eperm},
				{0, allow},
				{tMsgNosignal | tMsgDontwait, allow},
				{0xffffffff &^ tMsgFastopen, allow},
				{high, allow},
				{tMsgFastopen << 32, allow}, // upper bits are ignored by the kernel
			} {
				args := make([]uint64, 6)
				args[sc.arg] = tc.flags
				expect(t, p, call(t, sc.name, args...), tc.want, sc.name)
			}
			// MSG_FASTOPEN in any other argument is not a flag.
			args := []uint64{tMsgFastopen, tMsgFastopen, tMsgFastopen, tMsgFastopen, tMsgFastopen, tMsgFastopen}
			args[sc.arg] = 0
			expect(t, p, call(t, sc.name, args...), allow, sc.name)
		}
	}
}

func TestPersonality(t *testing.T) {
	requireAMD64(t)
	for _, p := range allPolicies() {
		for _, tc := range []struct {
			persona uint64
			want    uint32
		}{
			{0, allow}, {0x8, allow}, {0x20000, allow}, {0x20008, allow}, {0xffffffff, allow},
			{0x0040000, eperm},       // ADDR_NO_RANDOMIZE
			{0x0400000, eperm},       // READ_IMPLIES_EXEC
			{0x0100000, eperm},       // MMAP_PAGE_ZERO
			{0x0200000 | 0x8, eperm}, // ADDR_COMPAT_LAYOUT
			{1 << 32, eperm},         // exact values only
			{0xffffffff_ffffffff, eperm},
		} {
			expect(t, p, call(t, "personality", tc.persona), tc.want, "personality")
		}
	}
}

// TestAllowedWithoutArgumentLoads checks that every system call no rule
// names is allowed by every filter without the filter loading anything but
// nr and arch: the kernel's action cache then skips the filters for it.
func TestAllowedWithoutArgumentLoads(t *testing.T) {
	requireAMD64(t)
	filtered := map[string]bool{"clone3": true, "openat2": true, "setsid": true}
	for n := range policyConditional {
		filtered[n] = true
	}
	for _, list := range [][]string{alwaysDenied, spawnSyscalls, execSyscalls, conditional, sysvSyscalls, pathModeSyscalls, chownXattrSyscalls} {
		for _, n := range list {
			filtered[n] = true
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for _, p := range allPolicies() {
		fs := buildVM(t, p)
		for nr, name := range arch.X86_64.SyscallNumbers {
			if filtered[name] || (p.AllowSpawn && slices.Contains(spawnSyscalls, name)) || (p.AllowExec && slices.Contains(execSyscalls, name)) {
				continue
			}
			for _, f := range fs {
				ok, err := constAllow(f.raw, uint32(nr), auditArchX86_64)
				if !ok {
					t.Errorf("filter %s under %+v: %s (%d) is not allowed from nr and arch alone: %v", f.name, p, name, nr, err)
				}
			}
			d := seccompData{nr: int32(nr), arch: auditArchX86_64}
			for i := range d.args {
				d.args[i] = rng.Uint64()
			}
			expect(t, p, d, allow, name)
		}
	}
	// The check can fail: the program looks at the arguments of these
	// system calls, so it is not constant for them. (Under Policy{} socket
	// is denied without looking at arguments, hence AllowTCP.)
	prog := buildVM(t, Policy{AllowTCP: true})[0].raw
	for _, name := range conditional {
		ok, err := constAllow(prog, uint32(call(t, name).nr), auditArchX86_64)
		if ok || err == nil || !strings.Contains(err.Error(), "load from offset") {
			t.Errorf("%s: constAllow = %v, %v; want an argument load", name, ok, err)
		}
	}
	// getpid, explicitly: every filter allows it, from nr and arch alone.
	for _, p := range allPolicies() {
		for _, f := range buildVM(t, p) {
			if ok, err := constAllow(f.raw, uint32(call(t, "getpid").nr), auditArchX86_64); !ok {
				t.Errorf("filter %s: getpid: %v", f.name, err)
			}
		}
	}
}

func TestCommonSyscallsAllowed(t *testing.T) {
	requireAMD64(t)
	for _, p := range allPolicies() {
		for _, name := range []string{"getpid", "read", "write", "openat", "mmap", "close", "futex", "epoll_pwait",
			"connect", "bind", "recvfrom", "getrandom", "rt_sigreturn", "exit_group", "prctl", "seccomp"} {
			expect(t, p, call(t, name, 3, 0x7ffd1000, 4096, high, tMsgFastopen, tCloneNewUser), allow, name)
		}
	}
}

func TestForeignArchitecture(t *testing.T) {
	requireAMD64(t)
	// i386 numbers: restart_syscall, exit, execve, getpid, ptrace, socketcall,
	// clone, socket, clone3, open_tree_attr, and x86_64's getpid/ptrace.
	nrs := []int32{0, 1, 11, 20, 26, 102, 120, 359, 435, 467, 39, 101, -1}
	for _, p := range allPolicies() {
		fs := buildVM(t, p)
		for _, a := range []uint32{auditArchI386, auditArchAARCH64, 0} {
			for _, nr := range nrs {
				d := seccompData{nr: nr, arch: a, args: [6]uint64{goThreadFlags, tTIOCSTI, tMPTCP, tMsgFastopen}}
				for _, f := range fs {
					if got := f.run(t, d); got != eperm {
						t.Errorf("filter %s alone, %v: %s, want EPERM", f.name, d, retName(got))
					}
					if ok, _ := constAllow(f.raw, uint32(nr), a); ok {
						t.Errorf("filter %s: constant-allowed for arch %#x nr %d", f.name, a, nr)
					}
				}
				expect(t, p, d, eperm, "foreign arch")
			}
		}
	}
}

func TestX32(t *testing.T) {
	requireAMD64(t)
	// x32 numbers: getpid (39), socket (41), clone3, open_tree_attr, x32
	// execve (520) and ptrace (521); and -1.
	nrs := []uint32{x32Bit | 39, x32Bit | 41, x32Bit | 435, x32Bit | 467, x32Bit | 520, x32Bit | 521, 0xffffffff}
	for _, p := range allPolicies() {
		fs := buildVM(t, p)
		for _, nr := range nrs {
			d := seccompData{nr: int32(nr), arch: auditArchX86_64}
			for _, f := range fs {
				if got := f.run(t, d); got != enosys {
					t.Errorf("filter %s alone, x32 nr %#x: %s, want ENOSYS", f.name, nr, retName(got))
				}
			}
			expect(t, p, d, enosys, "x32")
		}
	}
}

// TestEveryRuleReachable checks that each group of rules decides some
// native system call: none is dead behind another check.
func TestEveryRuleReachable(t *testing.T) {
	requireAMD64(t)
	witness := map[string]struct {
		d    seccompData
		want uint32
	}{
		"deny":              {call(t, "ptrace"), eperm},
		"personality":       {call(t, "personality", 0x0040000), eperm},
		"ioctl":             {call(t, "ioctl", 0, high|tTIOCLINUX), eperm},
		"fcntl-lease":       {call(t, "fcntl", 3, 1024, 1), eperm},
		"ioctl-modem-lines": {call(t, "ioctl", 3, high|tTIOCMBIC, 0x7ffd0000), enotty},
		"setid-mode":        {call(t, "fchmod", 3, 0o4755), eperm},
		"other-process":     {call(t, "prlimit64", 1, 0, 0x1000, 0), eperm},
		"utimensat-path":    {call(t, "utimensat", 3, 0x7ffd1000, 0, 0), eperm},
		"prctl-pdeathsig":   {call(t, "prctl", 1, 0), eperm},
		"sendto-fastopen":   {call(t, "sendto", 3, 0, 1, tMsgFastopen), eperm},
		"sendmsg-fastopen":  {call(t, "sendmsg", 3, 0, tMsgFastopen), eperm},
		"sendmmsg-fastopen": {call(t, "sendmmsg", 3, 0, 1, tMsgFastopen), eperm},
		"mptcp":             {call(t, "socket", tAFInet, tStream, tMPTCP), eprotonosupport},
		"socket":            {call(t, "socket", tAFPacket, tRaw, 0), eperm},
		"socketpair":        {call(t, "socketpair", tAFInet, tStream, 0), eperm},
		"enosys":            {call(t, "clone3"), enosys},
	}
	for _, p := range allPolicies() {
		for _, s := range filterSpecs(p) {
			w, ok := witness[s.name]
			if !ok {
				t.Fatalf("no witness for rules %s", s.name)
			}
			expect(t, p, w.d, w.want, s.name+" witness")
		}
	}
	// The clone clauses of "deny", under both spawn settings.
	for _, p := range []Policy{{}, {AllowSpawn: true}} {
		expect(t, p, call(t, "clone", tCloneNewNet|goThreadFlags), eperm, "clone(CLONE_NEWNET)")
		want := eperm
		if p.AllowSpawn {
			want = allow
		}
		expect(t, p, call(t, "clone", tSIGCHLD), want, "clone(SIGCHLD)")
	}
}

// TestMatchesRulesOneByOne checks the linking against a plainer reading of
// the rules: every group of rules assembled by go-seccomp-bpf as a program
// of its own, the first group that denies a call deciding. The linked
// program must give the same answer for every native system call number
// and a spread of arguments, including the values the rules test for.
func TestMatchesRulesOneByOne(t *testing.T) {
	requireAMD64(t)
	tg, err := currentTarget()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	special := []uint64{0, 1, 2, 3, 6, 8, 9, 10, 17, 1024, 0o4755, 0o2755, 0o755, 0x40, 0x400000, 0x40000001, tMPTCP,
		0x540e, 0x5414, 0x8922, 0x8914, 0x89f3, 0x8b04, 0x8b05, 0x4b3a, 0x5606, 0xc0045877, 0x8004587d, 0x40086602,
		tStream | tCloexec, tDgram | tNonblock, tTIOCSTI, tTIOCLINUX,
		tMsgFastopen, tSIGCHLD, goThreadFlags, tCloneNewUser | tSIGCHLD, 0x0040000, 0xffffffff, high, high | tMPTCP, high | tTIOCSTI}
	var argSets [][6]uint64
	for range 24 {
		var a [6]uint64
		for i := range a {
			if rng.IntN(3) == 0 {
				a[i] = rng.Uint64()
			} else {
				a[i] = special[rng.IntN(len(special))]
			}
		}
		argSets = append(argSets, a)
	}
	argSets = append(argSets, [6]uint64{tAFInet, tStream, tMPTCP}, [6]uint64{tAFInet6, tStream | tCloexec, 0},
		[6]uint64{tAFUnix, tStream, 0}, [6]uint64{tAFInet, tDgram, tUDP}, [6]uint64{3, tTIOCSTI, 0, tMsgFastopen})

	for _, p := range allPolicies() {
		var groups []vmFilter
		for _, spec := range filterSpecs(p) {
			group := seccompbpf.SyscallGroup{Action: seccompbpf.Action(retErrno | uint32(spec.errno))}
			for _, r := range spec.rules {
				for _, n := range r.names {
					if _, ok := tg.info.SyscallNames[n]; !ok {
						continue
					}
					if !r.conditional() {
						group.Names = append(group.Names, n)
					}
					for _, c := range r.conditions() {
						group.NamesWithCondtions = append(group.NamesWithCondtions, seccompbpf.NameWithConditions{Name: n, Conditions: c})
					}
				}
			}
			groups = append(groups, assembleLibrary(t, group))
		}
		linked := buildVM(t, p)[0]
		for nr := range 500 {
			for _, args := range argSets {
				d := seccompData{nr: int32(nr), arch: auditArchX86_64, args: args}
				want := allow
				for _, g := range groups {
					if r := g.run(t, d); r != allow {
						want = r
						break
					}
				}
				if slices.Contains(byNumberDenied(p), int32(nr)) {
					want = eperm // by number: not in the library's table
				}
				if got := linked.run(t, d); got != want {
					t.Fatalf("under %+v, %v: linked program %s, rules one by one %s", p, d, retName(got), retName(want))
				}
			}
		}
	}
}

func TestLow32Equals(t *testing.T) {
	requireAMD64(t)
	rng := rand.New(rand.NewPCG(3, 4))
	for _, v := range []uint32{0, 1, tTIOCSTI, tTIOCLINUX, tMPTCP, 0x80000000, 0xfffffffe, 0xffffffff} {
		f := assembleLibrary(t, seccompbpf.SyscallGroup{
			NamesWithCondtions: []seccompbpf.NameWithConditions{{Name: "ioctl", Conditions: low32Equals(1, v)}},
			Action:             seccompbpf.ActionErrno,
		})
		inputs := []uint64{uint64(v), high | uint64(v), 1<<32 | uint64(v), uint64(v) << 32, uint64(^v), high | uint64(^v)}
		for bit := range 64 {
			inputs = append(inputs, uint64(v)^1<<bit)
		}
		for range 2000 {
			x := rng.Uint64()
			inputs = append(inputs, x, x&^0xffffffff|uint64(v))
		}
		for _, x := range inputs {
			want := allow
			if uint32(x) == v {
				want = eperm
			}
			if got := f.run(t, call(t, "ioctl", 0, x)); got != want {
				t.Errorf("low32Equals(%#x) on %#x: %s, want %s", v, x, retName(got), retName(want))
			}
		}
	}
}

// TestLow32Link runs the compact link on its own: it must answer exactly
// when the low 32 bits of its argument are one of its values, whatever the
// upper bits and the other arguments are. (TestMatchesRulesOneByOne checks
// it again inside every program, against the clauses it replaces.)
func TestLow32Link(t *testing.T) {
	requireAMD64(t)
	rng := rand.New(rand.NewPCG(9, 10))
	const action = retErrno | errnoEPERM
	for _, tc := range []struct {
		arg  uint32
		vals []uint32
	}{{1, []uint32{tTIOCSTI, tTIOCLINUX}}, {2, []uint32{tMPTCP}}, {0, []uint32{0}}, {5, []uint32{0xffffffff, 1, 0x80000000}}} {
		link, err := low32Link(&low32In{arg: tc.arg, vals: tc.vals}, action, nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := len(tc.vals) + 3; len(link) != want {
			t.Errorf("low32Link(%v): %d instructions, want %d", tc.vals, len(link), want)
		}
		vm, err := bpf.NewVM(link)
		if err != nil {
			t.Fatal(err)
		}
		var inputs []uint64
		for _, v := range tc.vals {
			inputs = append(inputs, uint64(v), high|uint64(v), uint64(v)<<32, uint64(v)^1, uint64(v)^1<<31)
		}
		for range 1000 {
			inputs = append(inputs, rng.Uint64(), rng.Uint64()&^0xffffffff|uint64(tc.vals[rng.IntN(len(tc.vals))]))
		}
		for _, x := range inputs {
			d := seccompData{nr: 16, arch: auditArchX86_64}
			for i := range d.args {
				d.args[i] = rng.Uint64()
			}
			d.args[tc.arg] = x
			got, err := vm.Run(d.vmBytes())
			if err != nil {
				t.Fatal(err)
			}
			want := allow
			if slices.Contains(tc.vals, uint32(x)) {
				want = action
			}
			if uint32(got) != want {
				t.Errorf("low32Link(arg %d, %#x) on %#x: %s, want %s", tc.arg, tc.vals, x, retName(uint32(got)), retName(want))
			}
		}
	}
}

func TestLow32BitHelpers(t *testing.T) {
	requireAMD64(t)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, mask := range []uint32{1, tMsgFastopen, tCloneThread, 0xffffffff, 0x80000001} {
		anySet := assembleLibrary(t, seccompbpf.SyscallGroup{
			NamesWithCondtions: []seccompbpf.NameWithConditions{{Name: "sendto", Conditions: seccompbpf.ArgumentConditions{low32AnySet(3, mask)}}},
			Action:             seccompbpf.ActionErrno,
		})
		noneSet := assembleLibrary(t, seccompbpf.SyscallGroup{
			NamesWithCondtions: []seccompbpf.NameWithConditions{{Name: "sendto", Conditions: seccompbpf.ArgumentConditions{low32NoneSet(3, mask)}}},
			Action:             seccompbpf.ActionErrno,
		})
		inputs := []uint64{0, high, uint64(mask), uint64(mask) << 32, high | uint64(mask)}
		for range 2000 {
			inputs = append(inputs, rng.Uint64())
		}
		for _, x := range inputs {
			d := call(t, "sendto", 0, 0, 0, x)
			wantAny, wantNone := allow, eperm
			if uint32(x)&mask != 0 {
				wantAny, wantNone = eperm, allow
			}
			if got := anySet.run(t, d); got != wantAny {
				t.Errorf("low32AnySet(%#x) on %#x: %s", mask, x, retName(got))
			}
			if got := noneSet.run(t, d); got != wantNone {
				t.Errorf("low32NoneSet(%#x) on %#x: %s", mask, x, retName(got))
			}
		}
	}
}

// TestGoSeccompBPFForeignArchGoesToDefault pins the library behaviour the
// prelude works around: for a foreign seccomp_data.arch, go-seccomp-bpf
// v1.4.0 returns the policy's DefaultAction (ALLOW for a deny list). If a
// new version changes this, the prelude is still correct but the package
// documentation should be revised.
func TestGoSeccompBPFForeignArchGoesToDefault(t *testing.T) {
	requireAMD64(t)
	f := assembleLibrary(t, seccompbpf.SyscallGroup{Names: []string{"ptrace", "getpid"}, Action: seccompbpf.ActionErrno})
	if got := f.run(t, call(t, "getpid")); got != eperm {
		t.Fatalf("native getpid: %s", retName(got))
	}
	if got := f.run(t, seccompData{nr: 20, arch: auditArchI386}); got != allow {
		t.Errorf("i386 getpid through the bare library: %s; the library now denies foreign architectures", retName(got))
	}
}

// TestGoSeccompBPFStaleAccumulator pins the library behaviour behind "one
// system call with argument conditions per filter": after a conditional
// system call, the next system call number is compared with an argument
// word. Here ioctl(fd, 44) is taken for sendto (number 44) and judged by
// sendto's condition on its fourth argument.
func TestGoSeccompBPFStaleAccumulator(t *testing.T) {
	requireAMD64(t)
	f := assembleLibrary(t, seccompbpf.SyscallGroup{
		NamesWithCondtions: []seccompbpf.NameWithConditions{
			{Name: "ioctl", Conditions: seccompbpf.ArgumentConditions{argEqual(1, tTIOCSTI)}},
			{Name: "sendto", Conditions: seccompbpf.ArgumentConditions{low32AnySet(3, tMsgFastopen)}},
		},
		Action: seccompbpf.ActionErrno,
	})
	sendtoNr := uint64(call(t, "sendto").nr)
	if got := f.run(t, call(t, "ioctl", 0, sendtoNr, 0, tMsgFastopen)); got != eperm {
		t.Errorf("ioctl(fd, %d, 0, MSG_FASTOPEN) through a two-syscall group: %s; the library now reloads nr", sendtoNr, retName(got))
	}
}

func TestAssembleRejects(t *testing.T) {
	requireAMD64(t)
	tg, err := currentTarget()
	if err != nil {
		t.Fatal(err)
	}
	cond := []seccompbpf.ArgumentConditions{{argEqual(0, 1)}}
	for name, spec := range map[string]filterSpec{
		"conditional rule, two names": {rules: []rule{{names: []string{"ioctl", "sendto"}, clauses: cond}}},
		"unknown name":                {rules: []rule{{names: []string{"ptrace", "no_such_syscall"}}}},
		"absent elsewhere only":       {rules: []rule{{names: []string{"ptrace", "open_tree_attr"}}}},
		"number in use":               {rules: []rule{{names: []string{"ptrace"}}}, byNumber: []numberedSyscall{{name: "no_such_syscall", nr: 39}}},
		"empty":                       {},
	} {
		if _, err := assemble([]filterSpec{spec}, tg); err == nil {
			t.Errorf("%s: assembled", name)
		}
	}
	// An absent name is skipped only where it is listed as absent.
	tg.absent = map[string]string{"no_such_syscall": "test"}
	if _, err := assemble([]filterSpec{{errno: errnoEPERM, rules: []rule{{names: []string{"ptrace", "no_such_syscall"}}}}}, tg); err != nil {
		t.Errorf("listed absent name: %v", err)
	}
}

func TestSummary(t *testing.T) {
	word := func(lines []string, w string) bool {
		re := regexp.MustCompile(`\b` + regexp.QuoteMeta(w) + `\b`)
		return slices.ContainsFunc(lines, re.MatchString)
	}
	for _, p := range allPolicies() {
		lines := Summary(p)
		mustHave := append(slices.Clone(alwaysDenied), "open_tree_attr", "clone", "clone3", "personality", "ioctl",
			"TIOCSTI", "TIOCLINUX", "sendto", "sendmsg", "sendmmsg", "MSG_FASTOPEN", "socket", "socketpair",
			"IPPROTO_MPTCP", "EPERM", "ENOSYS", "EPROTONOSUPPORT", "x32", "int $0x80",
			"openat2", "CLONE_PARENT", "TIOCSCTTY", "TIOCSWINSZ", "SIOCETHTOOL", "FIFREEZE", "FS_IOC_SETFLAGS", "F_SETLEASE",
			"S_ISUID", "prlimit64", "setpriority", "ioprio_set", "sched_setscheduler", "file_setattr")
		if p.AllowExec {
			mustHave = append(mustHave, "memfd_create", "MFD_NOEXEC_SEAL")
		}
		if !p.AllowSysVIPC {
			mustHave = append(mustHave, sysvSyscalls...)
		}
		if p.DenyPathMetadata {
			mustHave = append(mustHave, pathModeSyscalls...)
			mustHave = append(mustHave, "utimensat")
		}
		if p.DenyPathMetadata || p.DenyChownXattr {
			mustHave = append(mustHave, chownXattrSyscalls...)
			mustHave = append(mustHave, "setxattrat", "removexattrat")
		}
		if p.DenyPdeathsigChange {
			mustHave = append(mustHave, "PR_SET_PDEATHSIG")
		}
		if !p.AllowSpawn {
			mustHave = append(mustHave, spawnSyscalls...)
			mustHave = append(mustHave, "CLONE_THREAD")
		}
		if !p.AllowExec {
			mustHave = append(mustHave, execSyscalls...)
		}
		for _, w := range mustHave {
			if !word(lines, w) {
				t.Errorf("Summary(%+v) does not mention %s:\n%s", p, w, strings.Join(lines, "\n"))
			}
		}
		mustNot := []string{}
		if p.AllowSpawn {
			mustNot = append(mustNot, "fork", "vfork", "CLONE_THREAD")
		}
		if p.AllowExec {
			mustNot = append(mustNot, "execve", "execveat")
		}
		for _, w := range mustNot {
			if word(lines, w) {
				t.Errorf("Summary(%+v) mentions %s, which it allows", p, w)
			}
		}
		if (p.AllowTCP || p.AllowUDP || p.AllowUnixSockets) != word(lines, "except") {
			t.Errorf("Summary(%+v): socket exceptions do not match the policy:\n%s", p, strings.Join(lines, "\n"))
		}
	}
	if runtime.GOARCH == "arm64" && !word(Summary(Policy{}), "no such system call on linux/arm64") {
		t.Errorf("Summary on arm64 does not mark fork and vfork as absent")
	}
}

func TestBuildUnsupportedArch(t *testing.T) {
	if _, ok := absentSyscalls[runtime.GOARCH]; ok {
		if _, err := Build(Policy{}); err != nil {
			t.Fatalf("Build on %s: %v", runtime.GOARCH, err)
		}
		return
	}
	if f, err := Build(Policy{}); err == nil {
		t.Fatalf("Build on %s returned %d instructions, want an error", runtime.GOARCH, len(f.Program))
	}
}
