//go:build linux

package trampoline

import (
	"runtime"
	"syscall"
	"unsafe"
)

// System call numbers shared by every Linux architecture (the unified
// table, Linux 5.9+), and constants from the uapi headers.
const (
	sysCloseRange            = 436
	sysLandlockCreateRuleset = 444
	sysLandlockAddRule       = 445
	sysLandlockRestrictSelf  = 446

	closeRangeCloexec    = 1 << 2 // CLOSE_RANGE_CLOEXEC (Linux 5.11)
	landlockRulePath     = 1      // LANDLOCK_RULE_PATH_BENEATH
	landlockRulePort     = 2      // LANDLOCK_RULE_NET_PORT
	prSetNoNewPrivs      = 38     // PR_SET_NO_NEW_PRIVS
	prCapbsetDrop        = 24     // PR_CAPBSET_DROP
	prCapAmbient         = 47     // PR_CAP_AMBIENT
	prCapAmbientClearAll = 4      // PR_CAP_AMBIENT_CLEAR_ALL
	capSetpcap           = 8      // CAP_SETPCAP
	capsV3               = 0x20080522
	seccompSetModeFilter = 1 // SECCOMP_SET_MODE_FILTER
	oPath                = 0x200000
)

func init() {
	if _, ok := syscall.Getenv(EnvMarker); !ok {
		return
	}
	// Every step below, through execve, must run on one thread. The Go
	// runtime keeps the main goroutine locked to the main thread during
	// initialisation, so it does: checked here, not asked for again with
	// runtime.LockOSThread, which during initialisation starts the
	// runtime's template thread (one more thread to create, and for execve
	// to kill: about 0.06 ms of a spawn).
	if tid, _, _ := syscall.RawSyscall(syscall.SYS_GETTID, 0, 0, 0); int(tid) != syscall.Getpid() {
		syscall.Write(2, []byte("sandbox: trampoline: not on the main thread during initialisation\n"))
		syscall.Exit(ExitSetup)
	}
	trampoline()
}

// trampoline confines this process as the payload says and executes the
// target. It never returns.
func trampoline() {
	errFD := -1
	path := "(unknown target)"
	fail := func(f Failure) {
		if errFD >= 0 {
			b := f.Marshal()
			syscall.Write(errFD, b)
		} else {
			msg := "sandbox: cannot start " + path + ": " + f.Error() + "\n"
			syscall.Write(2, []byte(msg))
		}
		syscall.Exit(f.ExitCode())
	}

	// The payload comes from the environment, which whoever executes this
	// binary controls. That is no privilege unless the binary is
	// set-user-ID or set-group-ID: then it would run any program with
	// those privileges. Refuse.
	var ruid, euid, suid, rgid, egid, sgid uint32
	syscall.RawSyscall(syscall.SYS_GETRESUID, uintptr(unsafe.Pointer(&ruid)), uintptr(unsafe.Pointer(&euid)), uintptr(unsafe.Pointer(&suid)))
	syscall.RawSyscall(syscall.SYS_GETRESGID, uintptr(unsafe.Pointer(&rgid)), uintptr(unsafe.Pointer(&egid)), uintptr(unsafe.Pointer(&sgid)))
	if ruid != euid || rgid != egid {
		fail(Failure{Step: "trampoline", Detail: "refusing to run in a set-user-ID or set-group-ID executable"})
	}
	p, err := FromEnviron(syscall.Environ())
	if err != nil {
		fail(Failure{Step: "trampoline", Detail: "invalid invocation (" + err.Error() + ")"})
	}
	path = p.Path
	if p.ErrFD >= 0 {
		if _, _, e := syscall.RawSyscall(syscall.SYS_FCNTL, uintptr(p.ErrFD), syscall.F_SETFD, syscall.FD_CLOEXEC); e != 0 {
			fail(Failure{Step: "fcntl", Errno: e, Detail: "(failure pipe)"})
		}
		errFD = p.ErrFD
	}
	argv, e := cmdline()
	if e != 0 {
		fail(Failure{Step: "read", Errno: e, Detail: "/proc/self/cmdline"})
	}
	if len(argv) < 2 || argv[0] != Arg0 {
		fail(Failure{Step: "trampoline", Detail: "invalid invocation (argv[0] is not " + Arg0 + ": was cmd.Args replaced after WrapCommand?)"})
	}
	argv = argv[1:]

	// Join the tree's cgroup in every hierarchy; fail closed.
	for _, fd := range p.CgroupFDs {
		for {
			n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(unsafe.StringData("0"))), 1)
			if e == syscall.EINTR {
				continue
			}
			if e != 0 || n != 1 {
				fail(Failure{Step: "write", Errno: e, Detail: "cgroup.procs"})
			}
			break
		}
	}
	// The target gets exactly fds 0-2 and cmd.ExtraFiles.
	if _, _, e := syscall.RawSyscall(sysCloseRange, uintptr(p.FirstFD), ^uintptr(0), closeRangeCloexec); e != 0 {
		fail(Failure{Step: "close_range", Errno: e})
	}
	if p.Flags&FlagNamespaces != 0 {
		if f, ok := namespaceStep(p); !ok {
			fail(f)
		}
		if p.Flags&FlagProbe != 0 {
			syscall.Exit(0)
		}
	}

	if f, ok := restrict(p); !ok {
		fail(f)
	}
	// After the namespace step and the rules' paths were opened (an
	// OpenFiles limit below their number would stop them), before the
	// target.
	for _, l := range p.Rlimits {
		rl := [2]uint64{l.Cur, l.Max}
		if _, _, e := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, 0, uintptr(l.Resource), uintptr(unsafe.Pointer(&rl)), 0, 0, 0); e != 0 {
			fail(Failure{Step: "prlimit64", Errno: e})
		}
	}
	if f, ok := loadFilters(p.Filters); !ok {
		fail(f)
	}

	e = execve(p.Path, argv, p.Env, p.ExecNonce)
	fail(Failure{Step: "execve", Errno: e, Detail: p.Path})
}

// namespaceStep runs in the new namespaces the parent cloned this process
// into: the mount layer's steps, then the network step. The working
// directory is looked up again afterwards: the process entered it before
// the mounts, on the mount that was there then (now read-only, or hidden
// under a private /tmp); by its path it names what the target will see.
func namespaceStep(p *Payload) (Failure, bool) {
	var st syscall.Stat_t
	fd, e := openat(&procMntNS[0], oPath|syscall.O_CLOEXEC)
	if e == 0 {
		_, _, e = syscall.RawSyscall(syscall.SYS_FSTAT, uintptr(fd), uintptr(unsafe.Pointer(&st)), 0)
		syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(fd), 0, 0)
	}
	if e != 0 {
		return Failure{Step: "stat", Errno: e, Detail: "/proc/self/ns/mnt"}, false
	}
	if uint64(st.Dev) == p.ParentMountNS[0] && uint64(st.Ino) == p.ParentMountNS[1] {
		return Failure{Step: "namespace step", Detail: "still in the caller's mount namespace (was cmd.SysProcAttr replaced after WrapCommand?): refusing to mount"}, false
	}
	var cwd [4096]byte
	n, _, e := syscall.RawSyscall(syscall.SYS_GETCWD, uintptr(unsafe.Pointer(&cwd[0])), uintptr(len(cwd)), 0)
	haveCwd := e == 0 && n > 1 && cwd[0] == '/'
	if len(p.Mounts) > 0 && !haveCwd {
		// The working directory must be looked up again by path after
		// the mounts: kept as it is, it would stay on the mount it was
		// on, which may be the writable view of a path the mounts make
		// read-only or hide. A directory getcwd cannot name (longer
		// than PATH_MAX, or removed) cannot be: fail closed.
		if e == 0 {
			e = syscall.ENOENT
		}
		return Failure{Step: "getcwd", Errno: e, Detail: "(the working directory must be found again after the mounts)"}, false
	}
	if f, failed := ApplyMounts(p.Mounts); failed >= 0 {
		return f, false
	}
	if haveCwd {
		if _, _, e := syscall.RawSyscall(syscall.SYS_CHDIR, uintptr(unsafe.Pointer(&cwd[0])), 0, 0); e != 0 {
			return Failure{Step: "chdir", Errno: e, Detail: string(cwd[:n-1]) + " (the working directory, after the mounts)"}, false
		}
	}
	if p.Net.FD >= 0 {
		// The egress layer's step (net_linux.go): lo up, the proxy's
		// listener (and the transparent path's sockets) handed to the
		// caller.
		return netStep(p.Net)
	}
	return Failure{}, true
}

var procMntNS = []byte("/proc/self/ns/mnt\x00")

// execve executes path with the exec nonce in the fourth and fifth
// argument registers, which execve does not read, and which a filter
// built with seccomp.Policy.ExecNonce checks. syscall.Exec cannot set them.
func execve(path string, argv, env []string, nonce [2]uint64) syscall.Errno {
	cpath, err := syscall.BytePtrFromString(path)
	if err != nil {
		return syscall.EINVAL
	}
	cargv, err := syscall.SlicePtrFromStrings(argv)
	if err != nil {
		return syscall.EINVAL
	}
	cenv, err := syscall.SlicePtrFromStrings(env)
	if err != nil {
		return syscall.EINVAL
	}
	for {
		_, _, e := syscall.RawSyscall6(syscall.SYS_EXECVE, uintptr(unsafe.Pointer(cpath)),
			uintptr(unsafe.Pointer(&cargv[0])), uintptr(unsafe.Pointer(&cenv[0])),
			uintptr(nonce[0]), uintptr(nonce[1]), 0)
		if e != syscall.EINTR {
			return e
		}
	}
}

type capHeader struct {
	version uint32
	pid     int32
}

type capData struct{ effective, permitted, inheritable uint32 }

// dropCaps empties every capability set of the calling thread: the
// bounding set (when CAP_SETPCAP allows it; execve by uid 0 grants it),
// the ambient set, then permitted, effective and inheritable. It checks
// with capget that nothing is left. (For uid 0 no_new_privs would also keep
// execve from granting more than the emptied permitted set.)
func dropCaps() (Failure, bool) {
	h := capHeader{version: capsV3}
	var d [2]capData
	if _, _, e := syscall.RawSyscall(syscall.SYS_CAPGET, uintptr(unsafe.Pointer(&h)), uintptr(unsafe.Pointer(&d)), 0); e != 0 {
		return Failure{Step: "capget", Errno: e}, false
	}
	if d[0].permitted&(1<<capSetpcap) != 0 {
		d[0].effective |= 1 << capSetpcap
		if _, _, e := syscall.RawSyscall(syscall.SYS_CAPSET, uintptr(unsafe.Pointer(&h)), uintptr(unsafe.Pointer(&d)), 0); e != 0 {
			return Failure{Step: "capset", Errno: e, Detail: "(CAP_SETPCAP)"}, false
		}
		for c := uintptr(0); c < 64; c++ {
			_, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prCapbsetDrop, c, 0)
			if e == syscall.EINVAL {
				break // past CAP_LAST_CAP
			}
			if e != 0 {
				return Failure{Step: "prctl(PR_CAPBSET_DROP)", Errno: e}, false
			}
		}
	}
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, prCapAmbient, prCapAmbientClearAll, 0, 0, 0, 0); e != 0 {
		return Failure{Step: "prctl(PR_CAP_AMBIENT_CLEAR_ALL)", Errno: e}, false
	}
	d = [2]capData{}
	if _, _, e := syscall.RawSyscall(syscall.SYS_CAPSET, uintptr(unsafe.Pointer(&h)), uintptr(unsafe.Pointer(&d)), 0); e != 0 {
		return Failure{Step: "capset", Errno: e}, false
	}
	if _, _, e := syscall.RawSyscall(syscall.SYS_CAPGET, uintptr(unsafe.Pointer(&h)), uintptr(unsafe.Pointer(&d)), 0); e != 0 {
		return Failure{Step: "capget", Errno: e}, false
	}
	if d != [2]capData{} {
		return Failure{Step: "capset", Detail: "(capabilities remain after dropping them all)"}, false
	}
	return Failure{}, true
}

func errnoOf(err error) syscall.Errno {
	if e, ok := err.(syscall.Errno); ok {
		return e
	}
	return syscall.EINVAL
}

// cmdline returns this process's argv as the kernel holds it.
func cmdline() ([]string, syscall.Errno) {
	fd, e := openat(unsafe.StringData("/proc/self/cmdline\x00"), syscall.O_RDONLY|syscall.O_CLOEXEC)
	if e != 0 {
		return nil, e
	}
	// fd is close-on-exec: execve closes it, one system call fewer.
	buf := make([]byte, 0, 4096)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, make([]byte, cap(buf))...)[:len(buf)]
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, errnoOf(err)
		}
		if n == 0 {
			break
		}
		buf = buf[:len(buf)+n]
	}
	n := 0
	for _, c := range buf {
		if c == 0 {
			n++
		}
	}
	argv := make([]string, 0, n)
	start := 0
	for i, c := range buf {
		if c == 0 {
			argv = append(argv, unsafe.String(unsafe.SliceData(buf[start:]), i-start))
			start = i + 1
		}
	}
	return argv, 0
}

type rulesetAttr struct {
	handledFS, handledNet, scoped uint64
}

// pathBeneathAttr is struct landlock_path_beneath_attr, which is packed
// (12 bytes); the kernel reads only those.
type pathBeneathAttr struct {
	allowed  uint64
	parentFD int32
	_        int32
}

type netPortAttr struct {
	allowed, port uint64
}

// restrict applies the payload's Landlock ruleset to the calling thread.
func restrict(p *Payload) (Failure, bool) {
	attr := rulesetAttr{p.HandledFS, p.HandledNet, p.Scoped}
	r, _, e := syscall.RawSyscall(sysLandlockCreateRuleset, uintptr(unsafe.Pointer(&attr)), unsafe.Sizeof(attr), 0)
	if e != 0 {
		return Failure{Step: "landlock_create_ruleset", Errno: e}, false
	}
	ruleset := int(r)
	// ruleset is close-on-exec (the kernel makes it so), and so is every
	// descriptor opened below: execve closes them all, for free, one
	// system call per descriptor fewer.

	// The paths as C strings, in one allocation: a cold heap costs a page
	// fault for every size class it first serves.
	size := 0
	for _, rule := range p.Rules {
		size += len(rule.Path) + 1
	}
	cpaths := make([]byte, 0, size)
	for _, rule := range p.Rules {
		path := len(cpaths)
		cpaths = append(append(cpaths, rule.Path...), 0)
		fd, e := openat(&cpaths[path], oPath|syscall.O_CLOEXEC)
		if e == syscall.ENOENT || e == syscall.ENOTDIR {
			continue // gone since WrapCommand: no access, never more
		}
		if e != 0 {
			return Failure{Step: "open", Errno: e, Detail: rule.Path}, false
		}
		var st syscall.Stat_t
		if _, _, e := syscall.RawSyscall(syscall.SYS_FSTAT, uintptr(fd), uintptr(unsafe.Pointer(&st)), 0); e != 0 {
			return Failure{Step: "fstat", Errno: e, Detail: rule.Path}, false
		}
		if (rule.Dev != 0 || rule.Ino != 0) && (uint64(st.Dev) != rule.Dev || uint64(st.Ino) != rule.Ino) {
			continue // not the object WrapCommand resolved: no access, never more
		}
		access := rule.File
		if st.Mode&syscall.S_IFMT == syscall.S_IFDIR {
			access = rule.Dir
		}
		if access == 0 {
			continue // not what WrapCommand granted (see PathRule)
		}
		a := pathBeneathAttr{allowed: access, parentFD: int32(fd)}
		_, _, e = syscall.RawSyscall6(sysLandlockAddRule, uintptr(ruleset), landlockRulePath, uintptr(unsafe.Pointer(&a)), 0, 0, 0)
		if e != 0 {
			return Failure{Step: "landlock_add_rule", Errno: e, Detail: rule.Path}, false
		}
	}
	for _, port := range p.Ports {
		a := netPortAttr{allowed: port.Access, port: port.Port}
		_, _, e := syscall.RawSyscall6(sysLandlockAddRule, uintptr(ruleset), landlockRulePort, uintptr(unsafe.Pointer(&a)), 0, 0, 0)
		if e != 0 {
			return Failure{Step: "landlock_add_rule", Errno: e, Detail: "port " + itoa(int(port.Port))}, false
		}
	}
	if f, ok := dropCaps(); !ok {
		return f, false
	}
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0, 0, 0, 0); e != 0 {
		return Failure{Step: "prctl(PR_SET_NO_NEW_PRIVS)", Errno: e}, false
	}
	if _, _, e := syscall.RawSyscall(sysLandlockRestrictSelf, uintptr(ruleset), 0, 0); e != 0 {
		return Failure{Step: "landlock_restrict_self", Errno: e}, false
	}
	return Failure{}, true
}

type sockFprog struct {
	len    uint16
	filter *SockFilter
}

// loadFilters installs the seccomp programs on the calling thread, in
// order. no_new_privs is already set by restrict.
func loadFilters(filters [][]SockFilter) (Failure, bool) {
	if sysSeccomp < 0 {
		return Failure{Step: "seccomp", Detail: "not supported on " + runtime.GOARCH}, false
	}
	for i, f := range filters {
		if len(f) == 0 || len(f) > 4096 {
			return Failure{Step: "seccomp", Detail: "filter " + itoa(i) + " has a bad length"}, false
		}
		prog := sockFprog{len: uint16(len(f)), filter: &f[0]}
		nr := sysSeccomp
		_, _, e := syscall.RawSyscall(uintptr(nr), seccompSetModeFilter, 0, uintptr(unsafe.Pointer(&prog)))
		runtime.KeepAlive(f)
		if e != 0 {
			return Failure{Step: "seccomp(SECCOMP_SET_MODE_FILTER)", Errno: e, Detail: "filter " + itoa(i)}, false
		}
	}
	return Failure{}, true
}

// atFDCWD is AT_FDCWD, as the unsigned word a system call takes.
const atFDCWD = ^uintptr(99)

// openat opens the NUL-terminated path, without the allocation and the
// scheduler hand-off of syscall.Open: nothing else runs in a trampoline.
func openat(path *byte, flags int) (int, syscall.Errno) {
	for {
		r, _, e := syscall.RawSyscall6(syscall.SYS_OPENAT, atFDCWD, uintptr(unsafe.Pointer(path)), uintptr(flags), 0, 0, 0)
		if e != syscall.EINTR {
			return int(r), e
		}
	}
}
