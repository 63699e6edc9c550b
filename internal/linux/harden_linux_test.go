//go:build linux

package linux

// Issue 13's attack classes against ApplySelf, each tried for real in a
// re-executed child that applied the sandbox, with the exact errno, as
// root and as nobody. Every request is harmless even if the sandbox failed
// to refuse it: it asks for a change that changes nothing (the same mode,
// owner, times, nice value, affinity, I/O priority), reads instead of
// writes (prlimit64 with no new limit), names an interface that does not
// exist (the kernel checks CAP_NET_ADMIN before it looks the name up),
// uses a descriptor of procfs (which has no freeze, shutdown, label or
// flags, so the kernel answers ENOTTY or EOPNOTSUPP after its permission
// check), or acts on a pseudo-terminal the child opened itself, in a
// session of its own without a controlling terminal.

import (
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/openparallax/sandbox/internal/childtest"
	"github.com/openparallax/sandbox/internal/probe"
)

// sysErr runs a raw system call and returns its errno (0 on success).
func sysErr(nr uintptr, args ...uintptr) syscall.Errno {
	var a [6]uintptr
	copy(a[:], args)
	_, _, e := unix.Syscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5])
	return e
}

func wantErrno(t *testing.T, what string, got, want syscall.Errno) {
	t.Helper()
	if got != want {
		t.Errorf("%s: errno %d (%v), want %d (%v)", what, int(got), got, int(want), want)
	} else {
		t.Logf("%s: %v as expected", what, want)
	}
}

func cstr(s string) uintptr {
	b, err := unix.BytePtrFromString(s)
	if err != nil {
		panic(err)
	}
	return uintptr(unsafe.Pointer(b))
}

// dropToNobody makes the (child) process nobody on every thread.
func dropToNobody(t *testing.T) {
	t.Helper()
	if err := syscall.Setgroups(nil); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Setgid(65534); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Setuid(65534); err != nil {
		t.Fatal(err)
	}
}

const noCaps = "0000000000000000"

// atFDCWD is AT_FDCWD (-100) as a system call argument.
var atFDCWD = ^uintptr(99)

func TestApplySelfHardening(t *testing.T) {
	if kernel().abi == 0 || !kernel().seccomp {
		t.Skip("needs Landlock and seccomp:", kernel().abiReason)
	}
	users := []string{"self"}
	if os.Geteuid() == 0 {
		users = append(users, "nobody")
	}
	for _, user := range users {
		t.Run(user, func(t *testing.T) {
			base := childtest.Dir(t)
			if !childtest.InChild(t) && user == "nobody" {
				os.Chmod(filepath.Dir(base), 0o755)
				os.Chmod(base, 0o777)
			}
			ws := filepath.Join(base, "ws")
			outside := filepath.Join(base, "outside")
			victim := filepath.Join(outside, "victim")
			if !childtest.InChild(t) {
				for _, d := range []string{ws, outside} {
					if err := os.Mkdir(d, 0o777); err != nil {
						t.Fatal(err)
					}
				}
				if err := os.WriteFile(victim, []byte("secret"), 0o600); err != nil {
					t.Fatal(err)
				}
				if user == "nobody" {
					for _, p := range []string{ws, outside, victim} {
						if err := os.Chown(p, 65534, 65534); err != nil {
							t.Fatal(err)
						}
					}
				}
			}
			childtest.Run(t, func(t *testing.T) { hardeningChild(t, user, ws, victim) })
		})
	}
}

func hardeningChild(t *testing.T, user, ws, victim string) {
	// A session of its own: no controlling terminal that vhangup or a
	// terminal ioctl could reach if the sandbox failed.
	if _, err := syscall.Setsid(); err != nil {
		t.Fatalf("setsid: %v", err)
	}
	// A pseudo-terminal of the child's own, opened before the sandbox.
	ptmx, ptmxErr := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	var pts int = -1
	if ptmxErr == nil {
		unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0)
		if fd, err := unix.IoctlRetInt(int(ptmx.Fd()), unix.TIOCGPTPEER); err == nil {
			pts = fd
		} else if n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN); err == nil {
			pts, _ = unix.Open("/dev/pts/"+itoa(n), unix.O_RDWR|unix.O_NOCTTY, 0)
		}
	}
	procFile, err := os.Open("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	if user == "nobody" {
		dropToNobody(t)
	}
	var st unix.Stat_t
	if err := unix.Stat(victim, &st); err != nil {
		t.Fatal(err)
	}
	parent := os.Getppid()
	parentNice, perr := unix.Getpriority(unix.PRIO_PROCESS, parent)
	var parentSet unix.CPUSet
	affErr := unix.SchedGetaffinity(parent, &parentSet)

	cfg := Config{AllowedWritePaths: []string{ws}}
	if err := New().ApplySelf(cfg); err != nil {
		t.Fatal(err)
	}

	// Capabilities: the permitted, effective, inheritable and ambient sets
	// of every thread are empty, and every thread has no_new_privs, under
	// which the bounding set (left as it was) grants nothing to an execve
	// (the root package's TestApplySelfExecGainsNoCapability executes
	// programs to show it).
	for tid, sets := range childtest.ThreadStatus(t) {
		for _, k := range []string{"CapInh", "CapPrm", "CapEff", "CapAmb"} {
			if sets[k] != noCaps {
				t.Errorf("thread %s: %s = %s, want empty", tid, k, sets[k])
			}
		}
		if sets["NoNewPrivs"] != "1" {
			t.Errorf("thread %s: NoNewPrivs = %q, want 1", tid, sets["NoNewPrivs"])
		}
	}

	// Metadata outside the grants, by path: refused. (Each asks for the
	// mode, owner and times the file already has.)
	mode := uintptr(st.Mode & 0o7777)
	wantErrno(t, "fchmodat(outside, same mode)", probe.ErrnoOf(unix.Fchmodat(unix.AT_FDCWD, victim, uint32(mode), 0)), unix.EPERM)
	wantErrno(t, "fchmodat2(outside, same mode)", sysErr(unix.SYS_FCHMODAT2, atFDCWD, cstr(victim), mode, 0), unix.EPERM)
	wantErrno(t, "fchownat(outside, same owner)", probe.ErrnoOf(unix.Fchownat(unix.AT_FDCWD, victim, int(st.Uid), int(st.Gid), 0)), unix.EPERM)
	wantErrno(t, "lchown(outside, same owner)", probe.ErrnoOf(unix.Lchown(victim, int(st.Uid), int(st.Gid))), unix.EPERM)
	times := []unix.Timespec{st.Atim, st.Mtim}
	wantErrno(t, "utimensat(outside, same times)", probe.ErrnoOf(unix.UtimesNanoAt(unix.AT_FDCWD, victim, times, 0)), unix.EPERM)
	wantErrno(t, "setxattr(outside, user.x)", probe.ErrnoOf(unix.Setxattr(victim, "user.sandbox-test", []byte("x"), 0)), unix.EPERM)
	wantErrno(t, "lsetxattr(outside, security.capability)", probe.ErrnoOf(unix.Lsetxattr(victim, "security.capability", []byte{0}, 0)), unix.EPERM)
	wantErrno(t, "removexattr(outside, user.x)", probe.ErrnoOf(unix.Removexattr(victim, "user.sandbox-test")), unix.EPERM)
	wantErrno(t, "setxattrat(outside)", sysErr(unix.SYS_SETXATTRAT, atFDCWD, cstr(victim), 0, cstr("user.x"), 0, 0), unix.EPERM)
	wantErrno(t, "removexattrat(outside)", sysErr(unix.SYS_REMOVEXATTRAT, atFDCWD, cstr(victim), 0, cstr("user.x")), unix.EPERM)
	wantErrno(t, "file_setattr(outside)", sysErr(unix.SYS_FILE_SETATTR, atFDCWD, cstr(victim), 0, 0, 0), unix.EPERM)
	// The AT_EMPTY_PATH forms on an O_PATH descriptor (which Landlock lets
	// any process open) are the same system calls.
	if opath, err := unix.Open(victim, unix.O_PATH|unix.O_CLOEXEC, 0); err != nil {
		t.Errorf("O_PATH open outside the grants: %v", err)
	} else {
		wantErrno(t, "fchownat(O_PATH, \"\", AT_EMPTY_PATH)", probe.ErrnoOf(unix.Fchownat(opath, "", int(st.Uid), int(st.Gid), unix.AT_EMPTY_PATH)), unix.EPERM)
		wantErrno(t, "fchmodat2(O_PATH, \"\", AT_EMPTY_PATH)", sysErr(unix.SYS_FCHMODAT2, uintptr(opath), cstr(""), mode, unix.AT_EMPTY_PATH), unix.EPERM)
		wantErrno(t, "utimensat(O_PATH, \"\", AT_EMPTY_PATH)", probe.ErrnoOf(unix.UtimesNanoAt(opath, "", times, unix.AT_EMPTY_PATH)), unix.EPERM)
		// The descriptor forms refuse O_PATH descriptors themselves.
		wantErrno(t, "fchmod(O_PATH)", probe.ErrnoOf(unix.Fchmod(opath, uint32(mode))), unix.EBADF)
		wantErrno(t, "fchown(O_PATH)", probe.ErrnoOf(unix.Fchown(opath, int(st.Uid), int(st.Gid))), unix.EBADF)
		unix.Close(opath)
	}
	if runtime.GOARCH == "amd64" {
		// The legacy forms, by number (chmod, chown, lchown, utimes, utime, futimesat).
		wantErrno(t, "chmod(outside)", sysErr(90, cstr(victim), mode), unix.EPERM)
		wantErrno(t, "chown(outside)", sysErr(92, cstr(victim), uintptr(st.Uid), uintptr(st.Gid)), unix.EPERM)
		wantErrno(t, "lchown(outside)", sysErr(94, cstr(victim), uintptr(st.Uid), uintptr(st.Gid)), unix.EPERM)
		wantErrno(t, "utimes(outside, NULL)", sysErr(235, cstr(victim), 0), unix.EPERM)
		wantErrno(t, "utime(outside, NULL)", sysErr(132, cstr(victim), 0), unix.EPERM)
		wantErrno(t, "futimesat(outside, NULL)", sysErr(261, atFDCWD, cstr(victim), 0), unix.EPERM)
	}
	wantErrno(t, "openat2", sysErr(unix.SYS_OPENAT2, atFDCWD, cstr(victim), 0, 0), unix.ENOSYS)

	// Inside the write path: the descriptor forms work, set-ID bits never.
	f, err := os.OpenFile(filepath.Join(ws, "file"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	wantErrno(t, "(*os.File).Chmod(0o755) in the write path", probe.ErrnoOf(f.Chmod(0o755)), 0)
	wantErrno(t, "fchmod(04755) in the write path", probe.ErrnoOf(unix.Fchmod(int(f.Fd()), 0o4755)), unix.EPERM)
	wantErrno(t, "fchmod(02755) in the write path", probe.ErrnoOf(unix.Fchmod(int(f.Fd()), 0o2755)), unix.EPERM)
	wantErrno(t, "utimensat(fd, \"\", AT_EMPTY_PATH): a path, refused even inside", probe.ErrnoOf(unix.UtimesNanoAt(int(f.Fd()), "", nil, unix.AT_EMPTY_PATH)), unix.EPERM)
	wantErrno(t, "futimens (utimensat with a NULL path)", sysErr(unix.SYS_UTIMENSAT, f.Fd(), 0, 0, 0), 0)
	// fsetxattr stays allowed: 0, or EOPNOTSUPP on a filesystem without user.* attributes.
	if e := probe.ErrnoOf(unix.Fsetxattr(int(f.Fd()), "user.sandbox-test", []byte("x"), 0)); e != 0 && e != unix.EOPNOTSUPP {
		t.Errorf("fsetxattr in the write path: %v, want success or EOPNOTSUPP", e)
	}
	f.Close()
	wantErrno(t, "open(O_CREAT, 04755)", probe.ErrnoOf(openMode(filepath.Join(ws, "suid"), unix.O_CREAT|unix.O_WRONLY, 0o4755)), unix.EPERM)
	wantErrno(t, "open(O_CREAT, 02755)", probe.ErrnoOf(openMode(filepath.Join(ws, "sgid"), unix.O_CREAT|unix.O_WRONLY, 0o2755)), unix.EPERM)
	wantErrno(t, "open(O_TMPFILE, 04755)", probe.ErrnoOf(openMode(ws, unix.O_TMPFILE|unix.O_WRONLY, 0o4755)), unix.EPERM)
	wantErrno(t, "open(O_CREAT, 0755)", probe.ErrnoOf(openMode(filepath.Join(ws, "plain"), unix.O_CREAT|unix.O_WRONLY, 0o755)), 0)
	wantErrno(t, "mknodat(FIFO, 04644)", probe.ErrnoOf(unix.Mknodat(unix.AT_FDCWD, filepath.Join(ws, "fifo"), unix.S_IFIFO|0o4644, 0)), unix.EPERM)
	wantErrno(t, "mknodat(FIFO, 0644)", probe.ErrnoOf(unix.Mknodat(unix.AT_FDCWD, filepath.Join(ws, "fifo"), unix.S_IFIFO|0o644, 0)), 0)

	// Other processes of the same user: the parent (the test process).
	var lim unix.Rlimit
	wantErrno(t, "prlimit64(parent, RLIMIT_NOFILE, NULL, &old)", probe.ErrnoOf(unix.Prlimit(parent, unix.RLIMIT_NOFILE, nil, &lim)), unix.EPERM)
	wantErrno(t, "prlimit64(0, RLIMIT_NOFILE, NULL, &old)", probe.ErrnoOf(unix.Prlimit(0, unix.RLIMIT_NOFILE, nil, &lim)), 0)
	if perr == nil {
		wantErrno(t, "setpriority(PRIO_PROCESS, parent, its own value)", probe.ErrnoOf(unix.Setpriority(unix.PRIO_PROCESS, parent, 20-parentNice)), unix.EPERM)
	}
	own, _ := unix.Getpriority(unix.PRIO_PROCESS, 0)
	wantErrno(t, "setpriority(PRIO_PROCESS, 0, its own value)", probe.ErrnoOf(unix.Setpriority(unix.PRIO_PROCESS, 0, 20-own)), 0)
	wantErrno(t, "setpriority(PRIO_USER, uid, 19)", probe.ErrnoOf(unix.Setpriority(unix.PRIO_USER, os.Getuid(), 19)), unix.EPERM)
	wantErrno(t, "setpriority(PRIO_PGRP, 0, 19)", probe.ErrnoOf(unix.Setpriority(unix.PRIO_PGRP, 0, 19)), unix.EPERM)
	wantErrno(t, "setpriority(PRIO_PROCESS, 0, -1)", probe.ErrnoOf(unix.Setpriority(unix.PRIO_PROCESS, 0, -1)), unix.EPERM)
	if affErr == nil {
		wantErrno(t, "sched_setaffinity(parent, its own set)", probe.ErrnoOf(unix.SchedSetaffinity(parent, &parentSet)), unix.EPERM)
	}
	wantErrno(t, "sched_setscheduler(parent, SCHED_OTHER)", sysErr(unix.SYS_SCHED_SETSCHEDULER, uintptr(parent), 0, uintptr(unsafe.Pointer(new(int32)))), unix.EPERM)
	prio := int32(1)
	wantErrno(t, "sched_setscheduler(0, SCHED_FIFO, 1)", sysErr(unix.SYS_SCHED_SETSCHEDULER, 0, 1, uintptr(unsafe.Pointer(&prio))), unix.EPERM)
	wantErrno(t, "sched_setparam(parent)", sysErr(unix.SYS_SCHED_SETPARAM, uintptr(parent), uintptr(unsafe.Pointer(new(int32)))), unix.EPERM)
	wantErrno(t, "sched_setattr(0)", sysErr(unix.SYS_SCHED_SETATTR, 0, 0, 0), unix.EPERM)
	ioprio, _, _ := unix.Syscall(unix.SYS_IOPRIO_GET, 1, uintptr(parent), 0)
	wantErrno(t, "ioprio_set(WHO_PROCESS, parent, its own value)", sysErr(unix.SYS_IOPRIO_SET, 1, uintptr(parent), ioprio), unix.EPERM)
	wantErrno(t, "ioprio_set(WHO_USER, uid)", sysErr(unix.SYS_IOPRIO_SET, 3, uintptr(os.Getuid()), ioprio), unix.EPERM)
	wantErrno(t, "migrate_pages(parent)", sysErr(unix.SYS_MIGRATE_PAGES, uintptr(parent), 0, 0, 0), unix.EPERM)
	wantErrno(t, "move_pages(parent, 0 pages)", sysErr(unix.SYS_MOVE_PAGES, uintptr(parent), 0, 0, 0, 0, 0), unix.EPERM)

	// SysV IPC.
	wantErrno(t, "shmget(IPC_PRIVATE)", sysErr(unix.SYS_SHMGET, 0, 4096, 0o600), unix.EPERM)
	wantErrno(t, "shmctl(0, SHM_INFO)", sysErr(unix.SYS_SHMCTL, 0, 14, uintptr(unsafe.Pointer(&[256]byte{}))), unix.EPERM)
	wantErrno(t, "msgget(IPC_PRIVATE)", sysErr(unix.SYS_MSGGET, 0, 0o600), unix.EPERM)
	wantErrno(t, "semget(IPC_PRIVATE)", sysErr(unix.SYS_SEMGET, 0, 1, 0o600), unix.EPERM)

	// Kernel interfaces.
	wantErrno(t, "vhangup (no controlling terminal)", sysErr(unix.SYS_VHANGUP), unix.EPERM)
	wantErrno(t, "fanotify_init", sysErr(unix.SYS_FANOTIFY_INIT, 0, 0), unix.EPERM)
	wantErrno(t, "memfd_secret", sysErr(unix.SYS_MEMFD_SECRET, 0), unix.EPERM)
	if runtime.GOARCH == "amd64" {
		wantErrno(t, "modify_ldt(read)", sysErr(154, 0, uintptr(unsafe.Pointer(&[16]byte{})), 16), unix.EPERM)
	}
	wantErrno(t, "fcntl(F_SETLEASE)", probe.ErrnoOf(fcntlErr(int(procFile.Fd()), unix.F_SETLEASE, unix.F_RDLCK)), unix.EPERM)
	wantErrno(t, "clone(CLONE_PARENT|CLONE_SIGHAND), EINVAL without the filter",
		sysErr(unix.SYS_CLONE, unix.CLONE_PARENT|unix.CLONE_SIGHAND|uintptr(unix.SIGCHLD), 0, 0, 0, 0), unix.EPERM)

	// Filesystem ioctls through a read-only procfs descriptor.
	for _, req := range []struct {
		name string
		nr   uint
	}{{"FIFREEZE", 0xc0045877}, {"FITHAW", 0xc0045878}, {"FS_IOC_SHUTDOWN", 0x8004587d},
		{"FS_IOC_SETFSLABEL", 0x41009432}, {"FS_IOC_SETFLAGS", unix.FS_IOC_SETFLAGS}, {"FS_IOC_FSSETXATTR", 0x401c5820}} {
		wantErrno(t, "ioctl("+req.name+") on /proc/self/status", sysErr(unix.SYS_IOCTL, procFile.Fd(), uintptr(req.nr), uintptr(unsafe.Pointer(&[512]byte{}))), unix.EPERM)
	}
	// Network device ioctls through a socketpair, on an interface that
	// does not exist.
	if pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0); err != nil {
		t.Errorf("socketpair: %v", err)
	} else {
		ifr, _ := unix.NewIfreq("sbxnoif0")
		ifr.SetUint32(1500)
		wantErrno(t, "ioctl(socketpair, SIOCSIFMTU, no such interface)", probe.ErrnoOf(unix.IoctlIfreq(pair[0], unix.SIOCSIFMTU, ifr)), unix.EPERM)
		wantErrno(t, "ioctl(socketpair, SIOCSIFFLAGS, no such interface)", probe.ErrnoOf(unix.IoctlIfreq(pair[0], unix.SIOCSIFFLAGS, ifr)), unix.EPERM)
		lo, _ := unix.NewIfreq("lo")
		wantErrno(t, "ioctl(socketpair, SIOCGIFMTU, lo)", probe.ErrnoOf(unix.IoctlIfreq(pair[0], unix.SIOCGIFMTU, lo)), 0)
		unix.Close(pair[0])
		unix.Close(pair[1])
	}

	// Terminal ioctls on the child's own pseudo-terminal.
	if pts < 0 {
		t.Logf("no pseudo-terminal (%v): terminal ioctls not tried here (the seccomp VM tests cover them)", ptmxErr)
	} else {
		ws, err := unix.IoctlGetWinsize(pts, unix.TIOCGWINSZ)
		wantErrno(t, "TIOCGWINSZ", probe.ErrnoOf(err), 0)
		if err == nil {
			wantErrno(t, "TIOCSWINSZ (same size)", probe.ErrnoOf(unix.IoctlSetWinsize(pts, unix.TIOCSWINSZ, ws)), unix.EPERM)
		}
		tio, err := unix.IoctlGetTermios(pts, unix.TCGETS)
		wantErrno(t, "TCGETS", probe.ErrnoOf(err), 0)
		if err == nil {
			wantErrno(t, "TCSETS (same settings)", probe.ErrnoOf(unix.IoctlSetTermios(pts, unix.TCSETS, tio)), 0)
		}
		for _, req := range []struct {
			name string
			nr   uint
			arg  uintptr
		}{{"TIOCSCTTY", unix.TIOCSCTTY, 0}, {"TIOCSPGRP", unix.TIOCSPGRP, uintptr(unsafe.Pointer(new(int32)))},
			{"TIOCNOTTY", unix.TIOCNOTTY, 0}, {"TIOCCONS", unix.TIOCCONS, 0}, {"TIOCSETD", unix.TIOCSETD, uintptr(unsafe.Pointer(new(int32)))},
			{"TIOCEXCL", unix.TIOCEXCL, 0}, {"TIOCVHANGUP", unix.TIOCVHANGUP, 0}, {"TIOCSTI", unix.TIOCSTI, uintptr(unsafe.Pointer(new(byte)))},
			{"KDGKBTYPE", 0x4b33, uintptr(unsafe.Pointer(new(byte)))}, {"VT_GETSTATE", 0x5603, uintptr(unsafe.Pointer(&[8]byte{}))},
			// ENOTTY on a pty without the sandbox: EPERM is the filter's.
			{"TIOCSRS485", unix.TIOCSRS485, uintptr(unsafe.Pointer(&[32]byte{}))}, {"TIOCSISO7816", unix.TIOCSISO7816, uintptr(unsafe.Pointer(&[40]byte{}))}} {
			wantErrno(t, req.name+" on the child's own pty", sysErr(unix.SYS_IOCTL, uintptr(pts), uintptr(req.nr), req.arg), unix.EPERM)
		}
		// The modem-line setters answer ENOTTY, as a pty does anyway
		// (the VM test tells the filter's answer from the pty's).
		wantErrno(t, "TIOCMBIC on the child's own pty", sysErr(unix.SYS_IOCTL, uintptr(pts), unix.TIOCMBIC, uintptr(unsafe.Pointer(new(int32)))), unix.ENOTTY)
	}
}

func openMode(path string, flags int, mode uint32) error {
	fd, err := unix.Open(path, flags|unix.O_CLOEXEC, mode)
	if err == nil {
		unix.Close(fd)
	}
	return err
}

func fcntlErr(fd, cmd, arg int) error {
	_, err := unix.FcntlInt(uintptr(fd), cmd, arg)
	return err
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

// TestApplySelfMemfd: with an exec allowlist a memfd must not be
// executable: memfd_create without MFD_NOEXEC_SEAL answers ENOSYS; without
// one (execve refused outright) memfds are left alone.
func TestApplySelfMemfd(t *testing.T) {
	if kernel().abi == 0 || !kernel().seccomp {
		t.Skip("needs Landlock and seccomp:", kernel().abiReason)
	}
	for _, withExec := range []bool{false, true} {
		t.Run(map[bool]string{false: "no-exec", true: "exec-allowlist"}[withExec], func(t *testing.T) {
			childtest.Run(t, func(t *testing.T) {
				cfg := Config{}
				if withExec {
					exe, err := os.Executable()
					if err != nil {
						t.Fatal(err)
					}
					cfg.AllowedExecPaths = []string{exe}
				}
				// MFD_NOEXEC_SEAL is Linux 6.3+; before, the kernel says EINVAL.
				sealWant := syscall.Errno(0)
				if fd, err := unix.MemfdCreate("sbx", unix.MFD_CLOEXEC|unix.MFD_NOEXEC_SEAL); err != nil {
					sealWant = probe.ErrnoOf(err)
				} else {
					unix.Close(fd)
				}
				if err := New().ApplySelf(cfg); err != nil {
					t.Fatal(err)
				}
				want := syscall.Errno(0)
				if withExec {
					want = unix.ENOSYS
				}
				fd, err := unix.MemfdCreate("sandbox-test", unix.MFD_CLOEXEC)
				if err == nil {
					unix.Close(fd)
				}
				wantErrno(t, "memfd_create(MFD_CLOEXEC)", probe.ErrnoOf(err), want)
				fd, err = unix.MemfdCreate("sandbox-test", unix.MFD_CLOEXEC|unix.MFD_NOEXEC_SEAL)
				if err == nil {
					wantErrno(t, "fchmod(sealed memfd, 0755)", probe.ErrnoOf(unix.Fchmod(fd, 0o755)), unix.EPERM)
					unix.Close(fd)
				}
				wantErrno(t, "memfd_create(MFD_CLOEXEC|MFD_NOEXEC_SEAL) (as without the sandbox)", probe.ErrnoOf(err), sealWant)
			})
		})
	}
}
