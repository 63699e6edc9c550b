//go:build linux

package seccomp

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"unsafe"

	"github.com/openparallax/sandbox/internal/rawsys"
	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
)

func TestConstantsMatchUnix(t *testing.T) {
	for _, c := range []struct {
		name      string
		ours, sys uint64
	}{
		{"EPERM", errnoEPERM, uint64(unix.EPERM)},
		{"ENOSYS", errnoENOSYS, uint64(unix.ENOSYS)},
		{"ENOTTY", errnoENOTTY, uint64(unix.ENOTTY)},
		{"TIOCSRS485", 0x542f, unix.TIOCSRS485},
		{"TIOCSISO7816", 0xc0285443, unix.TIOCSISO7816},
		{"TIOCSERCONFIG", 0x5453, unix.TIOCSERCONFIG},
		{"TIOCMSET", 0x5418, unix.TIOCMSET},
		{"TIOCMBIS", 0x5416, unix.TIOCMBIS},
		{"TIOCMBIC", 0x5417, unix.TIOCMBIC},
		{"EPROTONOSUPPORT", errnoEPROTONOSUPPORT, uint64(unix.EPROTONOSUPPORT)},
		{"AF_UNIX", afUnix, unix.AF_UNIX},
		{"AF_INET", afInet, unix.AF_INET},
		{"AF_INET6", afInet6, unix.AF_INET6},
		{"SOCK_STREAM", sockStream, unix.SOCK_STREAM},
		{"SOCK_DGRAM", sockDgram, unix.SOCK_DGRAM},
		{"SOCK_NONBLOCK", sockNonblock, unix.SOCK_NONBLOCK},
		{"SOCK_CLOEXEC", sockCloexec, unix.SOCK_CLOEXEC},
		{"IPPROTO_TCP", ipprotoTCP, unix.IPPROTO_TCP},
		{"IPPROTO_UDP", ipprotoUDP, unix.IPPROTO_UDP},
		{"IPPROTO_MPTCP", ipprotoMPTCP, unix.IPPROTO_MPTCP},
		{"TIOCSTI", tiocsti, unix.TIOCSTI},
		{"TIOCLINUX", tioclinux, unix.TIOCLINUX},
		{"MSG_FASTOPEN", msgFastopen, unix.MSG_FASTOPEN},
		{"CLONE_THREAD", cloneThread, unix.CLONE_THREAD},
		{"CLONE_NEWNS", cloneNewNS, unix.CLONE_NEWNS},
		{"CLONE_NEWCGROUP", cloneNewCgroup, unix.CLONE_NEWCGROUP},
		{"CLONE_NEWUTS", cloneNewUTS, unix.CLONE_NEWUTS},
		{"CLONE_NEWIPC", cloneNewIPC, unix.CLONE_NEWIPC},
		{"CLONE_NEWUSER", cloneNewUser, unix.CLONE_NEWUSER},
		{"CLONE_NEWPID", cloneNewPID, unix.CLONE_NEWPID},
		{"CLONE_NEWNET", cloneNewNet, unix.CLONE_NEWNET},
		{"SYS_OPEN_TREE_ATTR", sysOpenTreeAttr, unix.SYS_OPEN_TREE_ATTR},
		{"SECCOMP_RET_ALLOW", uint64(retAllow), unix.SECCOMP_RET_ALLOW},
		{"SECCOMP_RET_ERRNO", uint64(retErrno), unix.SECCOMP_RET_ERRNO},
	} {
		if c.ours != c.sys {
			t.Errorf("%s: package has %#x, x/sys/unix %#x", c.name, c.ours, c.sys)
		}
	}
	if auditArchX86_64 != unix.AUDIT_ARCH_X86_64 || auditArchI386 != unix.AUDIT_ARCH_I386 || auditArchAARCH64 != unix.AUDIT_ARCH_AARCH64 {
		t.Errorf("the tests' audit arch constants differ from x/sys/unix")
	}
}

func TestSupported(t *testing.T) {
	// The kernel lists the actions it supports here (Linux 4.14+).
	b, err := os.ReadFile("/proc/sys/kernel/seccomp/actions_avail")
	if err != nil {
		t.Skipf("cannot cross-check Supported: %v", err)
	}
	want := strings.Contains(" "+strings.TrimSpace(string(b))+" ", " errno ")
	if got := Supported(); got != want {
		t.Errorf("Supported() = %v, but actions_avail is %q", got, b)
	}
}

// TestLoadValidates covers the checks Load makes before touching the
// process; none of these calls changes anything in the test process.
func TestLoadValidates(t *testing.T) {
	for _, fs := range [][]Filter{
		nil,
		{{Name: "empty"}},
		{{Name: "long", Program: make([]bpf.RawInstruction, bpfMaxInsns+1)}},
	} {
		if err := Load(fs...); err == nil {
			t.Errorf("Load(%d filters) succeeded", len(fs))
		}
	}
}

// The enforcement test installs the filters in a child: the same test
// binary re-executed with -test.run selecting only this test and envChild
// naming the policy. The test process itself is never confined.
// pidfdGetInfo is PIDFD_GET_INFO, _IOWR(0xFF, 11, struct pidfd_info) with
// the struct's first version (64 bytes), as linux/pidfd.h spells it
// (golang.org/x/sys/unix does not have it yet).
const pidfdGetInfo = 0xc040ff0b

const envChild = "SANDBOX_SECCOMP_TEST_CHILD"

const childOK = "seccomp-child-checks-complete"

var childPolicies = map[string]Policy{
	"zero":       {},
	"permissive": {AllowSpawn: true, AllowExec: true, AllowUnixSockets: true, AllowTCP: true, AllowUDP: true},
	"tcp":        {AllowTCP: true},
}

func TestKernelEnforcement(t *testing.T) {
	if mode := os.Getenv(envChild); mode != "" {
		enforcementChild(t, mode)
		return
	}
	if !Supported() {
		t.Skip("the kernel does not support seccomp filters with SECCOMP_RET_ERRNO")
	}
	if _, err := Build(Policy{}); err != nil {
		t.Skipf("no filters for this architecture: %v", err)
	}
	int80 := "no"
	if runtime.GOARCH == "amd64" {
		// int $0x80 without IA32 emulation kills the caller; find out in a
		// child of its own before relying on it.
		out, err := runChild("int80-probe")
		if err == nil && strings.Contains(string(out), "int80 works") {
			int80 = "yes"
		} else {
			t.Logf("i386 system calls unavailable, skipping that check: %v\n%s", err, out)
		}
	}
	for name := range childPolicies {
		t.Run(name, func(t *testing.T) {
			out, err := runChild(name, "SANDBOX_SECCOMP_TEST_INT80="+int80)
			if err != nil || !strings.Contains(string(out), childOK) {
				t.Fatalf("child %s: %v\n%s", name, err, out)
			}
			t.Logf("child %s:\n%s", name, out)
		})
	}
}

func errnoOf(err error) syscall.Errno {
	var e syscall.Errno
	if errors.As(err, &e) {
		return e
	}
	return 0
}

func runChild(mode string, env ...string) ([]byte, error) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestKernelEnforcement$", "-test.count=1", "-test.v")
	cmd.Env = append(append(os.Environ(), envChild+"="+mode), env...)
	if _, set := os.LookupEnv("GORACE"); !set {
		// Under -race, do not sleep the race detector's default second at exit.
		cmd.Env = append(cmd.Env, "GORACE=atexit_sleep_ms=0")
	}
	return cmd.CombinedOutput()
}

// enforcementChild runs in the child process only.
func enforcementChild(t *testing.T, mode string) {
	if mode == "int80-probe" {
		if got, want := i386Getpid(t), int32(os.Getpid()); got != want {
			t.Fatalf("int $0x80 getpid = %d, want %d", got, want)
		}
		fmt.Println("int80 works")
		return
	}
	p, ok := childPolicies[mode]
	if !ok {
		t.Fatalf("unknown child mode %q", mode)
	}
	pid := os.Getpid()

	// A program the kernel rejects: Load names the filter and wraps the errno.
	bad := []Filter{{Name: "bad-opcode", Program: []bpf.RawInstruction{{Op: 0xffff}}}}
	if err := Load(bad...); !errors.Is(err, unix.EINVAL) || !strings.Contains(err.Error(), `"bad-opcode"`) {
		t.Fatalf("Load(invalid program) = %v, want EINVAL naming the filter", err)
	}

	filter, err := Build(p)
	if err != nil {
		t.Fatal(err)
	}
	threadsBefore := map[int]bool{}
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		tid, err := strconv.Atoi(task.Name())
		if err != nil {
			t.Fatal(err)
		}
		threadsBefore[tid] = true
	}
	// MFD_NOEXEC_SEAL is Linux 6.3+; before, the kernel says EINVAL.
	sealWant := syscall.Errno(0)
	if fd, err := unix.MemfdCreate("sbx", unix.MFD_CLOEXEC|unix.MFD_NOEXEC_SEAL); err != nil {
		sealWant = errnoOf(err)
	} else {
		unix.Close(fd)
	}
	// PIDFD_GET_INFO (Linux 6.13) on the parent, without the filter: 0
	// where the kernel has it, ENOTTY before; never EPERM, so that the
	// filter's EPERM below is the filter's.
	parentFD, err := unix.PidfdOpen(os.Getppid(), 0)
	if err != nil {
		t.Fatalf("pidfd_open(parent): %v", err)
	}
	var pidfdInfo [128]byte
	pidfdIoctl := func(req uint64) syscall.Errno {
		_, _, e := unix.RawSyscall(unix.SYS_IOCTL, uintptr(parentFD), uintptr(req), uintptr(unsafe.Pointer(&pidfdInfo[0])))
		return e
	}
	if e := pidfdIoctl(pidfdGetInfo); e == unix.EPERM {
		t.Errorf("PIDFD_GET_INFO without the filter: EPERM; the check below could not tell the filter's refusal")
	} else {
		t.Logf("PIDFD_GET_INFO on the parent without the filter: errno %d (%v)", int(e), e)
	}
	if err := Load(filter); err != nil {
		t.Fatalf("Load: %v", err)
	}
	if v, err := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0); err != nil || v != 1 {
		t.Errorf("no_new_privs = %d, %v", v, err)
	}
	if v, err := unix.PrctlRetInt(unix.PR_GET_SECCOMP, 0, 0, 0, 0); err != nil || v != 2 {
		t.Errorf("PR_GET_SECCOMP = %d, %v; want 2 (filter mode)", v, err)
	}

	check := func(what string, got, want syscall.Errno) {
		t.Helper()
		if got != want {
			t.Errorf("%s: errno %d (%v), want %d (%v)", what, int(got), got, int(want), want)
		} else {
			t.Logf("%s: errno %d (%v) as expected", what, int(got), got)
		}
	}
	ifDenied := func(denied bool, otherwise syscall.Errno) syscall.Errno {
		if denied {
			return unix.EPERM
		}
		return otherwise
	}

	// A session of its own: no controlling terminal for vhangup or a
	// terminal ioctl to reach if a rule were missing.
	if _, err := syscall.Setsid(); err != nil {
		t.Fatalf("setsid: %v", err)
	}

	// Allowed without arguments being read.
	if r, _, e := unix.RawSyscall(unix.SYS_GETPID, 0, 0, 0); e != 0 || int(r) != pid {
		t.Errorf("getpid = %d, %v; want %d", r, e, pid)
	}

	// The Go runtime creates threads with clone(CLONE_THREAD|...). A
	// goroutine that locks its OS thread and returns without unlocking takes
	// the thread with it, so each round needs threads the runtime does not
	// have yet; at least one must be newer than the filters.
	newThreads := 0
	for range 3 {
		var ready, done sync.WaitGroup
		release := make(chan struct{})
		tids := make(chan int, 4)
		for range 4 {
			ready.Add(1)
			done.Add(1)
			go func() {
				defer done.Done()
				runtime.LockOSThread()
				tids <- unix.Gettid()
				ready.Done()
				<-release
			}()
		}
		ready.Wait()
		close(release)
		done.Wait()
		close(tids)
		for tid := range tids {
			if !threadsBefore[tid] {
				newThreads++
			}
		}
	}
	if newThreads == 0 {
		t.Errorf("no thread was created after the filters were loaded")
	} else {
		t.Logf("%d threads created under the filters", newThreads)
	}

	// Sockets.
	sock := func(family, typ, proto uint64) syscall.Errno {
		fd, _, e := unix.RawSyscall(unix.SYS_SOCKET, uintptr(family), uintptr(typ), uintptr(proto))
		if e == 0 {
			unix.Close(int(fd))
		}
		return e
	}
	check("socket(AF_PACKET, SOCK_RAW)", sock(unix.AF_PACKET, unix.SOCK_RAW, 0x0300), unix.EPERM)
	check("socket(AF_NETLINK, SOCK_RAW, NETLINK_ROUTE)", sock(unix.AF_NETLINK, unix.SOCK_RAW, 0), unix.EPERM)
	check("socket(AF_INET, SOCK_RAW, IPPROTO_ICMP)", sock(unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP), unix.EPERM)
	check("socket(AF_VSOCK, SOCK_STREAM)", sock(unix.AF_VSOCK, unix.SOCK_STREAM, 0), unix.EPERM)
	check("socket(AF_INET, SOCK_STREAM, IPPROTO_MPTCP)", sock(unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_MPTCP), unix.EPROTONOSUPPORT)
	check("socket(AF_INET, SOCK_STREAM|SOCK_NONBLOCK|SOCK_CLOEXEC, IPPROTO_MPTCP)",
		sock(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, unix.IPPROTO_MPTCP), unix.EPROTONOSUPPORT)
	check("socket(AF_INET, SOCK_STREAM, 1<<32|IPPROTO_MPTCP)", sock(unix.AF_INET, unix.SOCK_STREAM, 1<<32|unix.IPPROTO_MPTCP), unix.EPROTONOSUPPORT)
	check("socket(AF_INET, SOCK_STREAM, 0)", sock(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0), ifDenied(!p.AllowTCP, 0))
	check("socket(1<<32|AF_INET, SOCK_STREAM, 0)", sock(1<<32|unix.AF_INET, unix.SOCK_STREAM, 0), unix.EPERM)
	check("socket(AF_INET, SOCK_STREAM, 1<<32|IPPROTO_TCP)", sock(unix.AF_INET, unix.SOCK_STREAM, 1<<32|unix.IPPROTO_TCP), unix.EPERM)
	check("socket(AF_INET, SOCK_DGRAM, 0)", sock(unix.AF_INET, unix.SOCK_DGRAM, 0), ifDenied(!p.AllowUDP, 0))
	check("socket(AF_UNIX, SOCK_SEQPACKET, 0)", sock(unix.AF_UNIX, unix.SOCK_SEQPACKET, 0), ifDenied(!p.AllowUnixSockets, 0))

	var pair [2]int32
	if _, _, e := unix.RawSyscall6(unix.SYS_SOCKETPAIR, unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0, uintptr(unsafe.Pointer(&pair)), 0, 0); e != 0 {
		t.Fatalf("socketpair(AF_UNIX): %v", e)
	}
	_, _, e := unix.RawSyscall6(unix.SYS_SOCKETPAIR, unix.AF_INET, unix.SOCK_STREAM, 0, uintptr(unsafe.Pointer(new([2]int32))), 0, 0)
	check("socketpair(AF_INET)", e, unix.EPERM) // EOPNOTSUPP without the filter

	// TCP Fast Open flags on a send. On a unix socket the flag is otherwise
	// ignored, so without the filter these would succeed.
	buf := []byte{'x'}
	send := func(flags uint64) syscall.Errno {
		_, _, e := unix.RawSyscall6(unix.SYS_SENDTO, uintptr(pair[0]), uintptr(unsafe.Pointer(&buf[0])), 1, uintptr(flags), 0, 0)
		return e
	}
	check("sendto(MSG_FASTOPEN)", send(unix.MSG_FASTOPEN), unix.EPERM)
	check("sendto(MSG_FASTOPEN|high bits)", send(0xffffffff_00000000|unix.MSG_FASTOPEN), unix.EPERM)
	check("sendto(0)", send(0), 0)
	check("sendto(high bits only)", send(0xffffffff_00000000), 0)

	// ioctl on /dev/null: without the filter both answer ENOTTY.
	null, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	ioctl := func(req uint64) syscall.Errno {
		_, _, e := unix.RawSyscall(unix.SYS_IOCTL, null.Fd(), uintptr(req), uintptr(unsafe.Pointer(&buf[0])))
		return e
	}
	check("ioctl(TIOCSTI)", ioctl(unix.TIOCSTI), unix.EPERM)
	check("ioctl(TIOCSTI|high bits)", ioctl(0xffffffff_00000000|unix.TIOCSTI), unix.EPERM)
	check("ioctl(TIOCLINUX)", ioctl(unix.TIOCLINUX), unix.EPERM)
	check("ioctl(TCGETS)", ioctl(unix.TCGETS), unix.ENOTTY)

	// pidfs ioctls on a pidfd of the parent (outside this process), on the
	// 32 bits the kernel reads; an unrelated ioctl still answers.
	check("ioctl(pidfd, PIDFD_GET_INFO)", pidfdIoctl(pidfdGetInfo), unix.EPERM)
	check("ioctl(pidfd, PIDFD_GET_INFO|high bits)", pidfdIoctl(0xffffffff_00000000|pidfdGetInfo), unix.EPERM)
	check("ioctl(pidfd, PIDFD_GET_INFO, 72-byte struct)", pidfdIoctl(pidfdGetInfo+8<<16), unix.EPERM)
	check("ioctl(pidfd, PIDFD_GET_PID_NAMESPACE)", pidfdIoctl(0xff05), unix.EPERM)
	check("ioctl(pidfd, PIDFD_GET_USER_NAMESPACE)", pidfdIoctl(0xff09), unix.EPERM)
	var pp [2]int
	if err := unix.Pipe2(pp[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	_, err = unix.IoctlGetInt(pp[0], unix.TIOCINQ) // FIONREAD
	check("ioctl(pipe, FIONREAD)", errnoOf(err), 0)

	// Namespaces, clone3, personality, and a few unconditional denials, with
	// arguments that would merely fail without the filter.
	_, _, e = unix.RawSyscall(unix.SYS_UNSHARE, unix.CLONE_NEWUSER, 0, 0)
	check("unshare(CLONE_NEWUSER)", e, unix.EPERM)
	_, _, e = unix.RawSyscall(unix.SYS_CLONE3, 0, 0, 0)
	check("clone3(NULL, 0)", e, unix.ENOSYS) // EINVAL without the filter
	_, _, e = unix.RawSyscall(unix.SYS_PERSONALITY, 0x0040000, 0, 0)
	check("personality(ADDR_NO_RANDOMIZE)", e, unix.EPERM)
	_, _, e = unix.RawSyscall(unix.SYS_PERSONALITY, 0xffffffff, 0, 0)
	check("personality(0xffffffff)", e, 0)
	_, _, e = unix.RawSyscall(unix.SYS_IO_URING_SETUP, 0, 0, 0)
	check("io_uring_setup(0, NULL)", e, unix.EPERM)
	_, _, e = unix.RawSyscall(unix.SYS_BPF, ^uintptr(0), 0, 0)
	check("bpf(-1)", e, unix.EPERM)
	_, _, e = unix.RawSyscall(unix.SYS_PTRACE, unix.PTRACE_PEEKDATA, 1, 0)
	check("ptrace(PEEKDATA, 1)", e, unix.EPERM)
	_, _, e = unix.RawSyscall6(unix.SYS_OPEN_TREE_ATTR, ^uintptr(0), 0, 0, 0, 0, 0)
	check("open_tree_attr(-1, NULL)", e, unix.EPERM)

	// Issue 13 and 14 rules, each with arguments that fail without the
	// filter with another errno (or succeed harmlessly), so that only the
	// filter answers EPERM; the comments give the answer without it.
	raw := func(nr uintptr, a ...uintptr) syscall.Errno {
		var v [6]uintptr
		copy(v[:], a)
		r, _, e := unix.Syscall6(nr, v[0], v[1], v[2], v[3], v[4], v[5])
		if e == 0 && (nr == unix.SYS_FANOTIFY_INIT || nr == unix.SYS_MEMFD_SECRET || nr == unix.SYS_MEMFD_CREATE) {
			unix.Close(int(r))
		}
		return e
	}
	proc, err := os.Open("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	defer proc.Close()
	check("vhangup (no controlling terminal: 0)", raw(unix.SYS_VHANGUP), unix.EPERM)
	check("fanotify_init(FAN_CLASS_NOTIF) (a descriptor)", raw(unix.SYS_FANOTIFY_INIT, 0, 0), unix.EPERM)
	check("memfd_secret(0) (a descriptor or ENOSYS)", raw(unix.SYS_MEMFD_SECRET, 0), unix.EPERM)
	check("sched_setattr(0, NULL) (EINVAL)", raw(unix.SYS_SCHED_SETATTR, 0, 0, 0), unix.EPERM)
	check("fcntl(/proc file, F_SETLEASE) (EINVAL or EACCES)", raw(unix.SYS_FCNTL, proc.Fd(), unix.F_SETLEASE, unix.F_RDLCK), unix.EPERM)
	for _, req := range []uintptr{0xc0045877 /* FIFREEZE */, 0x8004587d /* FS_IOC_SHUTDOWN */, 0x41009432 /* FS_IOC_SETFSLABEL */, unix.FS_IOC_SETFLAGS} {
		// procfs has none of them: EOPNOTSUPP or ENOTTY after the
		// capability check (EPERM for a process without CAP_SYS_ADMIN).
		check(fmt.Sprintf("ioctl(/proc file, %#x)", req), raw(unix.SYS_IOCTL, proc.Fd(), req, uintptr(unsafe.Pointer(&[512]byte{}))), unix.EPERM)
	}
	ifr, _ := unix.NewIfreq("sbxnoif0")
	check("ioctl(socketpair, SIOCSIFMTU, no such interface) (ENODEV as root)", errnoOf(unix.IoctlIfreq(int(pair[0]), unix.SIOCSIFMTU, ifr)), unix.EPERM)
	check("ioctl(socketpair, SIOCGIFMTU, no such interface)", errnoOf(unix.IoctlIfreq(int(pair[0]), unix.SIOCGIFMTU, ifr)), unix.ENODEV)
	for _, req := range []uintptr{unix.TIOCSCTTY, unix.TIOCSPGRP, unix.TIOCNOTTY, unix.TIOCCONS, unix.TIOCSETD, unix.TIOCEXCL, unix.TIOCSWINSZ, 0x4b33, 0x5603} {
		check(fmt.Sprintf("ioctl(/dev/null, %#x) (ENOTTY)", req), ioctl(uint64(req)), unix.EPERM)
	}
	check("ioctl(/dev/null, TCSETS) (ENOTTY)", ioctl(unix.TCSETS), unix.ENOTTY)
	check("clone(CLONE_PARENT|CLONE_SIGHAND) (EINVAL)", raw(unix.SYS_CLONE, unix.CLONE_PARENT|unix.CLONE_SIGHAND|uintptr(unix.SIGCHLD)), unix.EPERM)
	check("prlimit64(parent, RLIMIT_NOFILE, NULL, &old) (0)", raw(unix.SYS_PRLIMIT64, uintptr(os.Getppid()), unix.RLIMIT_NOFILE, 0, uintptr(unsafe.Pointer(&unix.Rlimit{}))), unix.EPERM)
	check("prlimit64(0, RLIMIT_NOFILE, NULL, &old)", raw(unix.SYS_PRLIMIT64, 0, unix.RLIMIT_NOFILE, 0, uintptr(unsafe.Pointer(&unix.Rlimit{}))), 0)
	check("shmget(IPC_PRIVATE, 0) (EINVAL)", raw(unix.SYS_SHMGET, 0, 0, 0o600), unix.EPERM)
	check("openat2(AT_FDCWD, \"/\", NULL, 0) (EFAULT or EINVAL)", raw(unix.SYS_OPENAT2, ^uintptr(99), uintptr(unsafe.Pointer(&[]byte("/\x00")[0])), 0, 0), unix.ENOSYS)
	if tmp, err := os.CreateTemp("", "seccomp-setid"); err != nil {
		t.Error(err)
	} else {
		check("fchmod(own temporary file, 04644) (0)", raw(unix.SYS_FCHMOD, tmp.Fd(), 0o4644), unix.EPERM)
		check("fchmod(own temporary file, 0644)", raw(unix.SYS_FCHMOD, tmp.Fd(), 0o644), 0)
		tmp.Close()
		os.Remove(tmp.Name())
	}
	if runtime.GOARCH == "amd64" {
		check("modify_ldt(0, buf, 16) (0)", raw(154, 0, uintptr(unsafe.Pointer(&[16]byte{})), 16), unix.EPERM)
	}
	name := uintptr(unsafe.Pointer(&[]byte("sbx\x00")[0]))
	check("memfd_create(MFD_CLOEXEC)", raw(unix.SYS_MEMFD_CREATE, name, unix.MFD_CLOEXEC), map[bool]syscall.Errno{true: unix.ENOSYS, false: 0}[p.AllowExec])
	check("memfd_create(MFD_CLOEXEC|MFD_NOEXEC_SEAL) (as without the filter)", raw(unix.SYS_MEMFD_CREATE, name, unix.MFD_CLOEXEC|unix.MFD_NOEXEC_SEAL), sealWant)

	// Process creation and exec. A raw clone(SIGCHLD) that unexpectedly
	// succeeds exits at once in the child.
	check("clone(SIGCHLD)", rawsys.Fork(), ifDenied(!p.AllowSpawn, 0))
	check("execve(nonexistent)", rawsys.Execve("/nonexistent/seccomp-test"), ifDenied(!p.AllowExec, unix.ENOENT))

	if p.AllowSpawn && p.AllowExec {
		if path, err := exec.LookPath("true"); err == nil {
			if err := exec.Command(path).Run(); err != nil {
				t.Errorf("os/exec %s: %v", path, err)
			}
		}
	}
	if p.AllowTCP {
		// Go's net package may try MPTCP first; on EPROTONOSUPPORT it falls
		// back to plain TCP.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatalf("net.Listen: %v", err)
		}
		defer ln.Close()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatalf("net.Dial: %v", err)
		}
		c.Close()
	}

	if os.Getenv("SANDBOX_SECCOMP_TEST_INT80") == "yes" {
		// An i386 system call from this amd64 process: the kernel reports
		// AUDIT_ARCH_I386, and every filter answers EPERM.
		if got := i386Getpid(t); got != -int32(unix.EPERM) {
			t.Errorf("int $0x80 getpid = %d, want -EPERM", got)
		} else {
			t.Logf("int $0x80 getpid: -EPERM as expected")
		}
	}
	fmt.Println(childOK)
}

// i386Getpid makes getpid through the i386 entry point (int $0x80).
func i386Getpid(t *testing.T) int32 {
	r, ok := rawsys.I386Getpid()
	if !ok {
		t.Fatalf("no i386 entry point on %s", runtime.GOARCH)
	}
	return r
}
