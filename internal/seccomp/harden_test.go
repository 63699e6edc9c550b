package seccomp

import (
	"math/rand/v2"
	"slices"
	"testing"

	seccompbpf "github.com/elastic/go-seccomp-bpf"
	"golang.org/x/net/bpf"
)

// The rules of issue 13 (capabilities' side doors, metadata, other
// processes, SysV IPC, terminals, CLONE_PARENT, the parent-death signal)
// and issue 14 (memfd), stated again from the kernel's point of view.

// UAPI values, typed again (see the constants at the top of seccomp_test.go).
const (
	tTIOCSCTTY      = 0x540e
	tTIOCSPGRP      = 0x5410
	tTIOCNOTTY      = 0x5422
	tTIOCVHANGUP    = 0x5437
	tTIOCCONS       = 0x541d
	tTIOCSETD       = 0x5423
	tTIOCEXCL       = 0x540c
	tTIOCNXCL       = 0x540d
	tTIOCSWINSZ     = 0x5414
	tTIOCSLCKTRMIOS = 0x5457
	tTIOCSSERIAL    = 0x541f
	tTIOCSRS485     = 0x542f
	tTIOCSISO7816   = 0xc0285443
	tTIOCSERCONFIG  = 0x5453
	tTIOCMSET       = 0x5418
	tTIOCMBIS       = 0x5416
	tTIOCMBIC       = 0x5417
	tTIOCMGET       = 0x5415
	tTIOCGRS485     = 0x542e
	tTIOCGISO7816   = 0x80285442
	tTIOCSSOFTCAR   = 0x541a
	tTIOCSBRK       = 0x5427
	tTCSETS         = 0x5402
	tTCSETSW        = 0x5403
	tTCSETSF        = 0x5404
	tTCFLSH         = 0x540b
	tTIOCGPGRP      = 0x540f
	tTIOCSIG        = 0x40045436
	tTIOCGPTPEER    = 0x5441
	tKDGKBTYPE      = 0x4b33
	tKDSKBMODE      = 0x4b45
	tVTACTIVATE     = 0x5606

	tSIOCSIFMTU   = 0x8922
	tSIOCSIFFLAGS = 0x8914
	tSIOCGIFMTU   = 0x8921
	tSIOCGIFFLAGS = 0x8913
	tSIOCADDRT    = 0x890b
	tSIOCSARP     = 0x8955
	tSIOCBRADDBR  = 0x89a0
	tSIOCETHTOOL  = 0x8946
	tSIOCGIFCONF  = 0x8912
	tSIOCGIFINDEX = 0x8933
	tSIOCGSTAMP   = 0x8906
	tSIOCSPGRP    = 0x8902
	tSIOCDEVPRIV  = 0x89f0
	tSIOCPROTOPRV = 0x89e0
	tSIOCSIWFREQ  = 0x8b04
	tSIOCGIWFREQ  = 0x8b05

	tFIFREEZE          = 0xc0045877
	tFITHAW            = 0xc0045878
	tFSIOCSHUTDOWN     = 0x8004587d
	tFSIOCSETFSLABEL   = 0x41009432
	tFSIOCGETFSLABEL   = 0x81009431
	tFSIOCSETFLAGS     = 0x40086602
	tFSIOCGETFLAGS     = 0x80086601
	tFSIOCFSSETXATTR   = 0x401c5820
	tFSIOCFSGETXATTR   = 0x801c581f
	tFICLONE           = 0x40049409
	tEXT4IOCSETFSUUID  = 0x4008662c
	tFSIOCSETFSUUID    = 0x40111501
	tFSIOC32SETFLAGS   = 0x40046602
	tFSIOCSETVERSION   = 0x40087602
	tFSIOCGETVERSION   = 0x80087601
	tCloneParent       = 0x8000
	tCloneParentSettid = 0x100000
	tOCreat            = 0x40
	tOTmpfile          = 0x410000 // O_TMPFILE = __O_TMPFILE | O_DIRECTORY
	tOTrunc            = 0x200
	tODirectory        = 0x10000
	tFSetlease         = 1024
	tFGetlease         = 1025
	tFSetfl            = 4
	tMfdCloexec        = 0x1
	tMfdAllowSealing   = 0x2
	tMfdNoexecSeal     = 0x8
	tMfdExec           = 0x10
)

func TestTerminalIoctls(t *testing.T) {
	requireAMD64(t)
	denied := []uint64{tTIOCSTI, tTIOCLINUX, tTIOCSCTTY, tTIOCSPGRP, tTIOCNOTTY, tTIOCVHANGUP, tTIOCCONS, tTIOCSETD,
		tTIOCEXCL, tTIOCSWINSZ, tTIOCSLCKTRMIOS, tTIOCSSERIAL, tTIOCSRS485, tTIOCSISO7816, tTIOCSERCONFIG,
		tKDGKBTYPE, tKDSKBMODE, tVTACTIVATE, 0x4b00, 0x4bff, 0x5600, 0x56ff}
	allowed := []uint64{tTCGETS, tTCSETS, tTCSETSW, tTCSETSF, tTCFLSH, tTIOCGPGRP, tTIOCGWINSZ, tTIOCNXCL, tTIOCSIG,
		tTIOCGPTPEER, tFIONBIO, tTIOCMGET, tTIOCGRS485, tTIOCGISO7816, tTIOCSSOFTCAR, tTIOCSBRK,
		0x4a33, 0x4c00, 0x5500, 0x5700, 0x80044b33}
	checkIoctls(t, denied, allowed)
	// The modem-line setters: ENOTTY, a pseudo-terminal's answer (see
	// modemLineIoctls), on the 32 bits the kernel reads.
	for _, p := range allPolicies() {
		for _, req := range []uint64{tTIOCMSET, tTIOCMBIS, tTIOCMBIC} {
			for _, v := range []uint64{req, high | req, 1<<32 | req} {
				expect(t, p, call(t, "ioctl", 3, v, 0x7ffd0000), enotty, "ioctl")
			}
			expect(t, p, call(t, "ioctl", req, tTCGETS, req, req), allow, "ioctl with the request in other arguments")
		}
	}
}

func TestNetdevIoctls(t *testing.T) {
	requireAMD64(t)
	denied := []uint64{tSIOCSIFMTU, tSIOCSIFFLAGS, tSIOCADDRT, tSIOCSARP, tSIOCBRADDBR, tSIOCETHTOOL,
		tSIOCDEVPRIV, tSIOCDEVPRIV + 15, tSIOCPROTOPRV, tSIOCPROTOPRV + 15, tSIOCSIWFREQ, 0x8b00, 0x8bfe}
	allowed := []uint64{tSIOCGIFMTU, tSIOCGIFFLAGS, tSIOCGIFCONF, tSIOCGIFINDEX, tSIOCGSTAMP, tSIOCSPGRP,
		tSIOCGIWFREQ, 0x8b01, 0x8bff, 0x89df, 0x8a00, 0x80108906 /* SIOCGSTAMP_NEW */}
	checkIoctls(t, denied, allowed)
}

func TestFilesystemIoctls(t *testing.T) {
	requireAMD64(t)
	denied := []uint64{tFIFREEZE, tFITHAW, tFSIOCSHUTDOWN, tFSIOCSETFSLABEL, tFSIOCSETFLAGS, tFSIOC32SETFLAGS,
		tFSIOCFSSETXATTR, tEXT4IOCSETFSUUID, tFSIOCSETFSUUID, tFSIOCSETVERSION}
	allowed := []uint64{tFSIOCGETFSLABEL, tFSIOCGETFLAGS, tFSIOCFSGETXATTR, tFICLONE, tFSIOCGETVERSION,
		tFIFREEZE &^ 0xc0000000, tFSIOCSETFLAGS ^ 0x40000000}
	checkIoctls(t, denied, allowed)
}

// checkIoctls checks each request as the kernel reads it (the low 32
// bits, whatever the upper ones), and that the request is only read from
// argument 1.
func checkIoctls(t *testing.T, denied, allowed []uint64) {
	t.Helper()
	for _, p := range allPolicies() {
		for _, req := range denied {
			for _, v := range []uint64{req, high | req, 1<<32 | req} {
				expect(t, p, call(t, "ioctl", 3, v, 0x7ffd0000), eperm, "ioctl")
			}
			expect(t, p, call(t, "ioctl", req, tTCGETS, req, req), allow, "ioctl with the request in other arguments")
		}
		for _, req := range allowed {
			for _, v := range []uint64{req, high | req} {
				expect(t, p, call(t, "ioctl", 3, v, 0x7ffd0000), allow, "ioctl")
			}
		}
	}
}

func TestPolicyDependentDenials(t *testing.T) {
	requireAMD64(t)
	for _, p := range allPolicies() {
		for _, n := range sysvSyscalls {
			expect(t, p, call(t, n, 1, 2, 3, 4), map[bool]uint32{true: allow, false: eperm}[p.AllowSysVIPC], n)
		}
		for _, n := range pathModeSyscalls {
			want := allow
			if p.DenyPathMetadata {
				want = eperm
			}
			expect(t, p, call(t, n, 0xffffff9c, 0x7ffd1000, 0o644, 0), want, n)
		}
		for _, n := range chownXattrSyscalls {
			want := allow
			if p.DenyPathMetadata || p.DenyChownXattr {
				want = eperm
			}
			expect(t, p, call(t, n, 0x7ffd1000, 1000, 1000, 0), want, n)
		}
		for _, nr := range []int32{463, 466} {
			want := allow
			if p.DenyPathMetadata || p.DenyChownXattr {
				want = eperm
			}
			expect(t, p, seccompData{nr: nr, arch: auditArchX86_64, args: [6]uint64{0xffffff9c, 0x7ffd1000}}, want, "*xattrat")
		}
		expect(t, p, seccompData{nr: 469, arch: auditArchX86_64}, eperm, "file_setattr")
		expect(t, p, seccompData{nr: 468, arch: auditArchX86_64}, allow, "file_getattr")
		// Descriptor forms and reads stay allowed.
		for _, n := range []string{"fchown", "fsetxattr", "fremovexattr", "getxattr", "lgetxattr", "listxattr", "newfstatat", "statx"} {
			expect(t, p, call(t, n, 3, 0x7ffd1000, 0x7ffd2000, 0), allow, n)
		}
		expect(t, p, call(t, "fchmod", 3, 0o644), allow, "fchmod 0644")
	}
}

func TestUtimensatPath(t *testing.T) {
	requireAMD64(t)
	for _, p := range allPolicies() {
		withPath := allow
		if p.DenyPathMetadata {
			withPath = eperm
		}
		expect(t, p, call(t, "utimensat", 3, 0, 0x7ffd1000, 0), allow, "utimensat(fd, NULL) (futimens)")
		expect(t, p, call(t, "utimensat", 3, 0x7ffd1000, 0, 0), withPath, "utimensat(fd, path)")
		expect(t, p, call(t, "utimensat", 3, 1<<32, 0, 0), withPath, "utimensat(fd, pointer with upper bits only)")
		expect(t, p, call(t, "utimensat", 3, 0x7ffd1000, 0, 0x1000 /* AT_EMPTY_PATH */), withPath, "utimensat(fd, \"\", AT_EMPTY_PATH)")
	}
}

func TestSetidModes(t *testing.T) {
	requireAMD64(t)
	setid := []uint64{0o4755, 0o2755, 0o6755, 0o4000, 0o2000, high | 0o4755, 0o104755, 0o7777}
	plain := []uint64{0o755, 0o644, 0o1777, 0o777, 0o100644, high | 0o755, 0}
	for _, p := range allPolicies() {
		for _, sc := range []struct {
			name string
			arg  int
		}{{"fchmod", 1}, {"creat", 1}, {"mknod", 1}, {"mknodat", 2}, {"chmod", 1}, {"fchmodat", 2}, {"fchmodat2", 2}} {
			pathDenied := p.DenyPathMetadata && slices.Contains(pathModeSyscalls, sc.name)
			for _, m := range setid {
				args := []uint64{3, 0x7ffd1000, 0x7ffd1000, 0}
				args[sc.arg] = m
				expect(t, p, call(t, sc.name, args...), eperm, sc.name)
			}
			for _, m := range plain {
				args := []uint64{3, 0x7ffd1000, 0x7ffd1000, 0}
				args[sc.arg] = m
				want := allow
				if pathDenied {
					want = eperm
				}
				expect(t, p, call(t, sc.name, args...), want, sc.name)
			}
		}
		for _, sc := range []struct {
			name       string
			flags, mod int
		}{{"open", 1, 2}, {"openat", 2, 3}} {
			for _, tc := range []struct {
				flags, mode uint64
				want        uint32
			}{
				{tOCreat, 0o4755, eperm},
				{tOCreat | tOTrunc, 0o2755, eperm},
				{tOTmpfile, 0o4755, eperm},
				{high | tOCreat, high | 0o4000, eperm},
				{tOCreat, 0o755, allow},
				{tOTmpfile, 0o644, allow},
				{0, 0o4755, allow}, // no O_CREAT: the kernel ignores the mode
				{tODirectory, 0o6755, allow},
				{tOCreat << 32, 0o4755, allow}, // upper bits of flags are ignored by the kernel
			} {
				args := make([]uint64, 4)
				args[0], args[1] = 3, 0x7ffd1000
				args[sc.flags], args[sc.mod] = tc.flags, tc.mode
				expect(t, p, call(t, sc.name, args...), tc.want, sc.name)
			}
		}
	}
}

func TestOtherProcesses(t *testing.T) {
	requireAMD64(t)
	for _, p := range allPolicies() {
		for _, n := range []string{"prlimit64", "sched_setaffinity", "sched_setparam", "migrate_pages", "move_pages"} {
			expect(t, p, call(t, n, 0, 7, 0x7ffd1000, 0), allow, n+"(0)")
			expect(t, p, call(t, n, high, 7, 0x7ffd1000, 0), allow, n+"(upper bits, pid 0)")
			for _, pid := range []uint64{1, 4242, 0xffffffff, 1<<32 | 1} {
				expect(t, p, call(t, n, pid, 7, 0x7ffd1000, 0), eperm, n)
			}
		}
		for _, tc := range []struct {
			which, who, nice uint64
			want             uint32
		}{
			{0, 0, 10, allow}, {0, 0, 0, allow}, {0, 0, 19, allow}, {high, high, 5, allow},
			{0, 0, 0xffffffff, eperm},        // -1
			{0, 0, 0xffffffec, eperm},        // -20
			{0, 0, high | 0xfffffffb, eperm}, // -5 with upper bits
			{0, 4242, 10, eperm}, {1, 0, 10, eperm}, {2, 0, 10, eperm}, {2, 1000, 19, eperm}, {1<<32 | 2, 0, 1, eperm},
		} {
			expect(t, p, call(t, "setpriority", tc.which, tc.who, tc.nice), tc.want, "setpriority")
		}
		for _, tc := range []struct {
			which, who uint64
			want       uint32
		}{
			{1, 0, allow}, {high | 1, high, allow},
			{1, 4242, eperm}, {2, 0, eperm}, {3, 0, eperm}, {3, 1000, eperm}, {0, 0, eperm}, {0xffffffff, 0, eperm}, {5, 0, eperm},
		} {
			expect(t, p, call(t, "ioprio_set", tc.which, tc.who, 0x4004), tc.want, "ioprio_set")
		}
		for _, tc := range []struct {
			pid, policy uint64
			want        uint32
		}{
			{0, 0, allow}, {0, 3, allow}, {0, 5, allow}, {0, 0x40000000 | 3, allow}, {high, high | 5, allow},
			{0, 1, eperm}, {0, 2, eperm}, {0, 6, eperm}, {0, 0x40000000 | 1, eperm}, {0, high | 2, eperm},
			{4242, 0, eperm}, {4242, 5, eperm},
		} {
			expect(t, p, call(t, "sched_setscheduler", tc.pid, tc.policy, 0x7ffd1000), tc.want, "sched_setscheduler")
		}
		expect(t, p, call(t, "sched_setattr", 0, 0x7ffd1000, 0), eperm, "sched_setattr")
		// Reads of other processes' values stay allowed.
		for _, n := range []string{"getpriority", "sched_getaffinity", "sched_getscheduler", "ioprio_get", "sched_getattr"} {
			expect(t, p, call(t, n, 1, 4242, 0x7ffd1000), allow, n)
		}
	}
}

func TestCloneParent(t *testing.T) {
	requireAMD64(t)
	for _, p := range allPolicies() {
		expect(t, p, call(t, "clone", tCloneParent|tSIGCHLD), eperm, "clone(CLONE_PARENT)")
		expect(t, p, call(t, "clone", tCloneParent|goThreadFlags), eperm, "clone(CLONE_PARENT|thread)")
		expect(t, p, call(t, "clone", high|tCloneParent|tCloneVM|tCloneVfork|tSIGCHLD), eperm, "clone(CLONE_PARENT, upper bits)")
		// glibc's pthread_create sets CLONE_PARENT_SETTID, a different bit.
		expect(t, p, call(t, "clone", goThreadFlags|tCloneSettls|tCloneParentSettid|0x200000), allow, "clone(glibc thread)")
		expect(t, p, call(t, "clone", tCloneParent<<32|goThreadFlags), allow, "clone(CLONE_PARENT in the upper bits)")
	}
}

func TestFcntlLease(t *testing.T) {
	requireAMD64(t)
	for _, p := range allPolicies() {
		expect(t, p, call(t, "fcntl", 3, tFSetlease, 0), eperm, "F_SETLEASE F_RDLCK")
		expect(t, p, call(t, "fcntl", 3, high|tFSetlease, 2), eperm, "F_SETLEASE F_UNLCK, upper bits")
		expect(t, p, call(t, "fcntl", 3, tFGetlease, 0), allow, "F_GETLEASE")
		expect(t, p, call(t, "fcntl", 3, tFSetfl, 0x800), allow, "F_SETFL")
		expect(t, p, call(t, "fcntl", tFSetlease, tFSetfl, tFSetlease), allow, "F_SETLEASE in other arguments")
	}
}

func TestPdeathsig(t *testing.T) {
	requireAMD64(t)
	for _, p := range allPolicies() {
		deny := func(denied bool) uint32 {
			if denied && p.DenyPdeathsigChange {
				return eperm
			}
			return allow
		}
		expect(t, p, call(t, "prctl", 1, 0), deny(true), "PR_SET_PDEATHSIG 0")
		expect(t, p, call(t, "prctl", 1, 18), deny(true), "PR_SET_PDEATHSIG SIGCONT")
		expect(t, p, call(t, "prctl", 1, 15), deny(true), "PR_SET_PDEATHSIG SIGTERM")
		expect(t, p, call(t, "prctl", high|1, 0), deny(true), "PR_SET_PDEATHSIG 0, upper bits in option")
		expect(t, p, call(t, "prctl", 1, 1<<32|9), deny(true), "PR_SET_PDEATHSIG with upper bits (EINVAL in the kernel)")
		expect(t, p, call(t, "prctl", 1, 9), allow, "PR_SET_PDEATHSIG SIGKILL")
		expect(t, p, call(t, "prctl", 2, 0x7ffd1000), allow, "PR_GET_PDEATHSIG")
		expect(t, p, call(t, "prctl", 38, 1), allow, "PR_SET_NO_NEW_PRIVS")
		expect(t, p, call(t, "prctl", 15, 0x7ffd1000), allow, "PR_SET_NAME")
	}
}

func TestCompatibilityENOSYS(t *testing.T) {
	requireAMD64(t)
	for _, p := range allPolicies() {
		for _, args := range [][]uint64{nil, {0xffffff9c, 0x7ffd1000, 0x7ffd2000, 24}, {high, high, high, high}} {
			expect(t, p, call(t, "openat2", args...), enosys, "openat2")
		}
		for _, tc := range []struct {
			flags    uint64
			withExec uint32
		}{
			{0, enosys},
			{tMfdCloexec, enosys},
			{tMfdCloexec | tMfdAllowSealing, enosys},
			{tMfdExec | tMfdCloexec, enosys},
			{tMfdNoexecSeal << 32, enosys}, // the kernel reads unsigned int flags
			{tMfdNoexecSeal, allow},
			{tMfdNoexecSeal | tMfdCloexec | tMfdAllowSealing, allow},
			{high | tMfdNoexecSeal, allow},
		} {
			want := allow
			if p.AllowExec {
				want = tc.withExec
			}
			expect(t, p, call(t, "memfd_create", 0x7ffd1000, tc.flags), want, "memfd_create")
		}
	}
}

// TestBitsLink compares bitsLink with go-seccomp-bpf's own assembly of the
// same clauses on random clause sets and inputs chosen to hit their masks.
func TestBitsLink(t *testing.T) {
	requireAMD64(t)
	rng := rand.New(rand.NewPCG(11, 12))
	const action = retErrno | errnoEPERM
	randMask := func() uint32 {
		switch rng.IntN(4) {
		case 0:
			return 1 << rng.IntN(32)
		case 1:
			return 0xffffffff
		default:
			if m := rng.Uint32() & rng.Uint32(); m != 0 {
				return m
			}
			return 0x80000000
		}
	}
	for range 300 {
		var clauses []seccompbpf.ArgumentConditions
		var masks []uint32
		for range 1 + rng.IntN(4) {
			var c seccompbpf.ArgumentConditions
			for range 1 + rng.IntN(4) {
				m := randMask()
				masks = append(masks, m)
				if rng.IntN(2) == 0 {
					c = append(c, low32AnySet(uint32(rng.IntN(6)), m))
				} else {
					c = append(c, low32NoneSet(uint32(rng.IntN(6)), m))
				}
			}
			clauses = append(clauses, c)
		}
		if !lowBitsOnly(clauses) {
			t.Fatalf("lowBitsOnly(%v) = false", clauses)
		}
		link, err := bitsLink(clauses, action, nil)
		if err != nil {
			t.Fatal(err)
		}
		vm, err := bpf.NewVM(link)
		if err != nil {
			t.Fatalf("bitsLink(%v): %v", clauses, err)
		}
		group := seccompbpf.SyscallGroup{Action: seccompbpf.Action(action)}
		for _, c := range clauses {
			group.NamesWithCondtions = append(group.NamesWithCondtions, seccompbpf.NameWithConditions{Name: "ioctl", Conditions: c})
		}
		lib := assembleLibrary(t, group)
		for range 200 {
			d := call(t, "ioctl")
			for i := range d.args {
				switch rng.IntN(3) {
				case 0:
					d.args[i] = rng.Uint64()
				case 1:
					d.args[i] = rng.Uint64() &^ 0xffffffff // upper bits only
				default:
					d.args[i] = rng.Uint64()&^0xffffffff | uint64(masks[rng.IntN(len(masks))]&rng.Uint32())
				}
			}
			got, err := vm.Run(d.vmBytes())
			if err != nil {
				t.Fatal(err)
			}
			if want := lib.run(t, d); uint32(got) != want {
				t.Fatalf("clauses %v on %v: bitsLink %s, library %s", clauses, d, retName(uint32(got)), retName(want))
			}
		}
	}
	// What bitsLink must not take: 64-bit compares and upper-word masks.
	for _, c := range [][]seccompbpf.ArgumentConditions{
		{{argEqual(0, 1)}}, {{argNotEqual(1, 0)}}, {{low32AnySet(0, 1), {Argument: 1, Operation: seccompbpf.BitsSet, Value: 1 << 32}}}, nil,
	} {
		if lowBitsOnly(c) {
			t.Errorf("lowBitsOnly(%v) = true", c)
		}
	}
}

// TestPidfsIoctls: the pidfs ioctls (type 0xFF, numbers 1-11) are refused
// whatever their direction and size bits (PIDFD_GET_INFO's size grows with
// its struct) and whatever the upper 32 bits; type 0xFF with a number past
// the block, and the neighbouring types, are not.
func TestPidfsIoctls(t *testing.T) {
	requireAMD64(t)
	const (
		getInfoV0 = 0xc040ff0b // _IOWR(0xFF, 11, struct pidfd_info), PIDFD_INFO_SIZE_VER0 (64 bytes)
		getInfoV1 = 0xc048ff0b // the same, 72 bytes
		getPidNS  = 0xff05     // PIDFD_GET_PID_NAMESPACE: _IO(0xFF, 5)
	)
	denied := []uint64{getInfoV0, getInfoV1, 0x8040ff0b, 0x4040ff0b, 0xff0b, getPidNS,
		0xff01, 0xff02, 0xff03, 0xff04, 0xff06, 0xff07, 0xff08, 0xff09, 0xff0a, 0xff00, 0xff0f}
	allowed := []uint64{0xff10, 0xc040ff1b, 0xfe0b, 0xc040fe0b, 0x1ff0b &^ 0xff00 /* type 0 */, tFSIOCGETVERSION}
	checkIoctls(t, denied, allowed)
}
