//go:build linux

package sandbox_test

// Enforcement tests. Every test applies the sandbox inside a re-executed
// child (internal/childtest) and then attempts the operation, checking the
// exact errno: EACCES or EPERM from Landlock or seccomp, never ENOENT,
// ECONNREFUSED or a DAC refusal passed off as a sandbox denial. Where the
// kernel could answer EPERM on its own, the same call is made before the
// sandbox is applied and must not answer EPERM there.

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/openparallax/sandbox"
	"github.com/openparallax/sandbox/internal/childtest"
	"github.com/openparallax/sandbox/internal/rawsys"
)

// apply applies cfg in the child, skipping (with the reason) when the
// mechanism is missing on this kernel.
func apply(t *testing.T, cfg sandbox.Config) {
	t.Helper()
	err := sandbox.New().ApplySelf(cfg)
	if errors.Is(err, sandbox.ErrUnavailable) {
		t.Skipf("sandbox unavailable on this kernel: %v", err)
	}
	if err != nil {
		t.Fatalf("ApplySelf: %v", err)
	}
}

// requireABI skips when the kernel's Landlock ABI is below abi.
func requireABI(t *testing.T, abi int, what string) {
	t.Helper()
	if v := sandbox.Probe().Version; v < abi {
		t.Skipf("%s needs Landlock ABI %d; this kernel has ABI %d", what, abi, v)
	}
}

func wantErrno(t *testing.T, what string, err error, want ...syscall.Errno) {
	t.Helper()
	got := rawsys.Errno(err)
	for _, w := range want {
		if got == w {
			return
		}
	}
	t.Errorf("%s: got %v (errno %d %v), want %v", what, err, int(got), got, want)
}

func wantOK(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Errorf("%s: %v (must still work in the sandbox)", what, err)
	}
}

// fsFixture is a workspace, a read-only directory and an outside directory
// holding a secret that ordinary permissions let anyone read.
type fsFixture struct {
	ws, ro, outside, secret string
}

func newFSFixture(t *testing.T) fsFixture {
	base := childtest.Dir(t)
	f := fsFixture{
		ws:      filepath.Join(base, "ws"),
		ro:      filepath.Join(base, "ro"),
		outside: filepath.Join(base, "outside"),
	}
	f.secret = filepath.Join(f.outside, "secret")
	if childtest.InChild(t) {
		return f
	}
	for _, d := range []string{f.ws, f.ro, f.outside} {
		if err := os.Mkdir(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{f.secret, filepath.Join(f.ws, "file"), filepath.Join(f.ro, "file")} {
		if err := os.WriteFile(p, []byte("data\n"), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func (f fsFixture) cfg() sandbox.Config {
	return sandbox.Config{AllowedWritePaths: []string{f.ws}, AllowedReadPaths: []string{f.ro}}
}

func TestFilesystem(t *testing.T) {
	f := newFSFixture(t)
	childtest.Run(t, func(t *testing.T) {
		outsideFD, err := unix.Open(f.outside, unix.O_DIRECTORY|unix.O_RDONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		passwd := readable("/etc/passwd")
		apply(t, f.cfg())

		// Positive controls.
		_, err = os.ReadFile(filepath.Join(f.ws, "file"))
		wantOK(t, "read in workspace", err)
		wantOK(t, "write in workspace", os.WriteFile(filepath.Join(f.ws, "new"), []byte("x"), 0o600))
		wantOK(t, "mkdir in workspace", os.Mkdir(filepath.Join(f.ws, "dir"), 0o700))
		wantOK(t, "rename in workspace", os.Rename(filepath.Join(f.ws, "new"), filepath.Join(f.ws, "dir", "moved")))
		wantOK(t, "truncate in workspace", os.Truncate(filepath.Join(f.ws, "dir", "moved"), 0))
		wantOK(t, "remove in workspace", os.Remove(filepath.Join(f.ws, "dir", "moved")))
		wantOK(t, "symlink in workspace", os.Symlink(f.secret, filepath.Join(f.ws, "escape")))
		_, err = os.ReadFile(filepath.Join(f.ro, "file"))
		wantOK(t, "read in read-only dir", err)
		_, err = os.ReadDir(f.ro)
		wantOK(t, "list read-only dir", err)

		// Denials.
		_, err = os.ReadFile(f.secret)
		wantErrno(t, "read outside", err, syscall.EACCES)
		_, err = os.ReadDir(f.outside)
		wantErrno(t, "list outside", err, syscall.EACCES)
		wantErrno(t, "create outside", os.WriteFile(filepath.Join(f.outside, "new"), nil, 0o600), syscall.EACCES)
		wantErrno(t, "write in read-only dir", os.WriteFile(filepath.Join(f.ro, "file"), []byte("x"), 0o600), syscall.EACCES)
		wantErrno(t, "create in read-only dir", os.WriteFile(filepath.Join(f.ro, "new"), nil, 0o600), syscall.EACCES)
		_, err = os.ReadFile(filepath.Join(f.ws, "escape"))
		wantErrno(t, "read through symlink escape", err, syscall.EACCES)
		_, err = os.ReadFile("/proc/self/root" + f.secret)
		wantErrno(t, "read via /proc/self/root", err, syscall.EACCES)
		_, err = os.ReadFile("/proc/" + strconv.Itoa(os.Getpid()) + "/root" + f.secret)
		wantErrno(t, "read via /proc/<pid>/root", err, syscall.EACCES)
		_, err = unix.Openat(outsideFD, "secret", unix.O_RDONLY, 0)
		wantErrno(t, "openat from a directory fd opened before the sandbox", err, syscall.EACCES)
		// Moving a file out of the workspace: Landlock answers EXDEV when
		// only the reparenting (refer) right is missing, EACCES otherwise.
		wantErrno(t, "rename out of workspace", os.Rename(filepath.Join(f.ws, "file"), filepath.Join(f.outside, "file")), syscall.EACCES, syscall.EXDEV)
		wantErrno(t, "link out of workspace", os.Link(filepath.Join(f.ws, "file"), filepath.Join(f.outside, "file")), syscall.EACCES, syscall.EXDEV)
		wantErrno(t, "rename into workspace", os.Rename(f.secret, filepath.Join(f.ws, "stolen")), syscall.EACCES, syscall.EXDEV)
		wantErrno(t, "remove outside", os.Remove(f.secret), syscall.EACCES)
		if passwd {
			_, err = os.ReadFile("/etc/passwd")
			wantErrno(t, "read /etc/passwd", err, syscall.EACCES)
		} else {
			t.Log("read /etc/passwd not checked: this machine has no readable /etc/passwd (the secret fixture covers reads)")
		}
		if sandbox.Probe().Version >= 3 {
			wantErrno(t, "truncate outside", os.Truncate(f.secret, 0), syscall.EACCES)
		} else {
			t.Logf("truncate outside not checked: needs Landlock ABI 3, kernel has %d", sandbox.Probe().Version)
		}
	})
}

func TestPositiveControls(t *testing.T) {
	childtest.Run(t, func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go acceptAll(ln)
		port := ln.Addr().(*net.TCPAddr).Port
		// The system CA bundle must stay readable, where there is one: a
		// minimal guest (no ca-certificates) has none to lose. Not asked
		// through x509, which loads the pool only once.
		haveCAs := ""
		for _, b := range caBundles {
			if readable(b) {
				haveCAs = b
				break
			}
		}
		apply(t, sandbox.Config{AllowedTCPConnect: []string{"127.0.0.1:" + strconv.Itoa(port)}})

		var wg sync.WaitGroup
		var sum [64]int
		for i := range sum {
			wg.Go(func() {
				runtime.LockOSThread() // forces new OS threads after the filter
				for j := range 1000 {
					sum[i] += j
				}
			})
		}
		wg.Wait()
		if sum[63] != 499500 {
			t.Error("goroutines did not run")
		}
		addrs, err := net.DefaultResolver.LookupHost(context.Background(), "localhost")
		if err != nil || len(addrs) == 0 {
			t.Errorf("resolve localhost: %v %v", addrs, err)
		}
		if haveCAs != "" {
			pool, err := x509.SystemCertPool()
			if err != nil || pool.Equal(x509.NewCertPool()) {
				t.Errorf("system CA pool (%s): empty or %v", haveCAs, err)
			}
		} else {
			t.Logf("system CA pool not checked: this machine has none of %v", caBundles)
		}
		buf := make([]byte, 32)
		r, err := os.Open("/dev/urandom")
		if err == nil {
			_, err = io.ReadFull(r, buf)
			r.Close()
		}
		wantOK(t, "read /dev/urandom", err)
		wantOK(t, "write /dev/null", os.WriteFile("/dev/null", []byte("x"), 0))
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), time.Second)
		wantOK(t, "connect to granted port", err)
		if c != nil {
			c.Close()
		}
		_, err = os.Getwd()
		wantOK(t, "getwd", err)
		_, err = os.ReadFile("/proc/self/status")
		wantOK(t, "read /proc/self/status", err)
	})
}

// caBundles are the CA bundle files crypto/x509 reads on Linux.
var caBundles = []string{
	"/etc/ssl/certs/ca-certificates.crt",
	"/etc/pki/tls/certs/ca-bundle.crt",
	"/etc/ssl/ca-bundle.pem",
	"/etc/pki/tls/cacert.pem",
	"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
	"/etc/ssl/cert.pem",
}

func acceptAll(ln net.Listener) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		c.Close()
	}
}

// spawnAttempts are the ways to create a process or replace the image.
var spawnAttempts = []struct {
	name string
	try  func() syscall.Errno
	want syscall.Errno
}{
	{"fork", rawsys.Fork, syscall.EPERM},
	{"clone", func() syscall.Errno { return rawsys.Clone(0) }, syscall.EPERM},
	{"clone-high-bits", rawsys.CloneHighBits, syscall.EPERM},
	{"clone-vfork-flag", func() syscall.Errno { return rawsys.Clone(unix.CLONE_VFORK) }, syscall.EPERM},
	{"clone3", rawsys.Clone3, syscall.ENOSYS},
	{"execve", func() syscall.Errno { return rawsys.Execve("/bin/true") }, syscall.EPERM},
	{"execveat", func() syscall.Errno { return rawsys.Execveat("/bin/true") }, syscall.EPERM},
	{"vfork", rawsys.Vfork, syscall.EPERM},
}

func TestProcessSpawnDenied(t *testing.T) {
	childtest.Run(t, func(t *testing.T) {
		// A thread that exists before the sandbox: TSYNC must cover it.
		type req struct {
			try  func() syscall.Errno
			resp chan syscall.Errno
		}
		reqs := make(chan req)
		go func() {
			runtime.LockOSThread()
			for r := range reqs {
				r.resp <- r.try()
			}
		}()
		onThread := func(f func() syscall.Errno) syscall.Errno {
			r := req{f, make(chan syscall.Errno)}
			reqs <- r
			return <-r.resp
		}
		onThread(func() syscall.Errno { return 0 }) // thread is up
		apply(t, sandbox.Config{})
		runtime.LockOSThread() // the main thread of this test
		for _, a := range spawnAttempts {
			if got := a.try(); got != a.want {
				t.Errorf("%s from the calling thread: errno %d (%v), want %v", a.name, got, got, a.want)
			}
			if got := onThread(a.try); got != a.want {
				t.Errorf("%s from a second OS thread: errno %d (%v), want %v", a.name, got, got, a.want)
			}
		}
		cmd := exec.Command("/bin/true")
		wantErrno(t, "os/exec", cmd.Run(), syscall.EPERM)
		// Threads still work.
		done := make(chan bool)
		go func() { runtime.LockOSThread(); done <- true }()
		<-done
	})
}

func TestProcessSpawnAllowed(t *testing.T) {
	childtest.Run(t, func(t *testing.T) {
		trueFI, err := os.Stat("/bin/true")
		if err != nil {
			t.Skipf("needs /bin/true to grant and run: %v", err)
		}
		// /bin/false must be another file: in a busybox system both are
		// links to one binary, and granting one grants the other.
		falseFI, err := os.Stat("/bin/false")
		falseIsOther := err == nil && !os.SameFile(trueFI, falseFI)
		apply(t, sandbox.Config{AllowProcessSpawn: true, AllowedExecPaths: []string{"/bin/true"}})
		if e := rawsys.Fork(); e != 0 {
			t.Errorf("fork with spawn allowed: %v", e)
		}
		if e := rawsys.Clone(unix.CLONE_NEWUSER); e != syscall.EPERM {
			t.Errorf("clone(CLONE_NEWUSER) with spawn allowed: errno %d (%v), want EPERM", e, e)
		}
		if e := rawsys.Clone3(); e != syscall.ENOSYS {
			t.Errorf("clone3: errno %d, want ENOSYS", e)
		}
		wantOK(t, "exec /bin/true from the allowlist", exec.Command("/bin/true").Run())
		if falseIsOther {
			err = exec.Command("/bin/false").Run()
			wantErrno(t, "exec /bin/false outside the allowlist", err, syscall.EACCES)
		} else {
			t.Log("exec outside the allowlist not checked: /bin/false is missing or the same file as /bin/true")
		}
	})
}

func TestForeignArchitectures(t *testing.T) {
	if runtime.GOARCH != "amd64" {
		t.Skip("i386 and x32 entry points exist only on amd64")
	}
	// int $0x80 kills the caller where IA32 emulation is off
	// (ia32_emulation=0, CONFIG_IA32_EMULATION=n): find out in a process
	// of its own first.
	int80 := childtest.Share(t, func() string {
		cmd := exec.Command(os.Args[0], "-test.run=^TestInt80Helper$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), envInt80Helper+"=1")
		out, err := cmd.CombinedOutput()
		if err == nil && strings.Contains(string(out), int80Works) {
			return "yes"
		}
		return fmt.Sprintf("IA32 emulation is off here (int $0x80 in a probe process: %v)", err)
	})
	childtest.Run(t, func(t *testing.T) {
		i386 := int80 == "yes" && rawsys.Int80(rawsys.I386GetpidNr, 0, 0, 0) == int32(os.Getpid())
		_, x32err := rawsys.X32Getpid()
		apply(t, sandbox.Config{})
		if i386 {
			if r := rawsys.Int80(rawsys.I386GetpidNr, 0, 0, 0); r != -int32(syscall.EPERM) {
				t.Errorf("int $0x80 getpid after sandbox = %d, want -EPERM", r)
			}
		} else {
			t.Logf("int $0x80 not checked against the kernel: %s; the BPF VM test covers the filter", int80)
		}
		if x32err == 0 {
			if _, e := rawsys.X32Getpid(); e != syscall.ENOSYS {
				t.Errorf("x32 getpid after sandbox: errno %v, want ENOSYS", e)
			}
		} else {
			t.Logf("x32 not checked against the kernel: this kernel has no x32 ABI (%v); the BPF VM test covers the filter", x32err)
		}
	})
}

const (
	envInt80Helper = "SANDBOX_TEST_INT80_HELPER"
	int80Works     = "int $0x80 works"
)

// TestInt80Helper is the probe process of TestForeignArchitectures: it
// makes one i386 system call, which kills it where IA32 emulation is off.
func TestInt80Helper(t *testing.T) {
	if os.Getenv(envInt80Helper) == "" || runtime.GOARCH != "amd64" {
		t.Skip("only run by TestForeignArchitectures, as its probe process")
	}
	if got, want := rawsys.Int80(rawsys.I386GetpidNr, 0, 0, 0), int32(os.Getpid()); got != want {
		t.Fatalf("int $0x80 getpid = %d, want %d", got, want)
	}
	fmt.Println(int80Works)
}

// dangerous are syscalls the filter always denies, each with arguments that
// are harmless if the call were allowed.
var dangerous = []struct {
	name string
	call func() syscall.Errno
}{
	{"ptrace", sys(unix.SYS_PTRACE, unix.PTRACE_GETREGS, 1, 0)},
	{"process_vm_readv", sys6(unix.SYS_PROCESS_VM_READV, uintptr(os.Getpid()), 0, 0, 0, 0, 0)},
	{"process_vm_writev", sys6(unix.SYS_PROCESS_VM_WRITEV, uintptr(os.Getpid()), 0, 0, 0, 0, 0)},
	{"io_uring_setup", sys(unix.SYS_IO_URING_SETUP, 0, 0, 0)},
	{"io_uring_enter", sys6(unix.SYS_IO_URING_ENTER, ^uintptr(0), 0, 0, 0, 0, 0)},
	{"io_uring_register", sys6(unix.SYS_IO_URING_REGISTER, ^uintptr(0), 0, 0, 0, 0, 0)},
	{"bpf", sys(unix.SYS_BPF, 0xffff, 0, 0)},
	{"perf_event_open", sys6(unix.SYS_PERF_EVENT_OPEN, 0, 0, ^uintptr(0), ^uintptr(0), 0, 0)},
	{"userfaultfd", sys(unix.SYS_USERFAULTFD, 0xffff, 0, 0)},
	{"keyctl", sys(unix.SYS_KEYCTL, 0xffff, 0, 0)},
	{"add_key", sys6(unix.SYS_ADD_KEY, 0, 0, 0, 0, 0, 0)},
	{"request_key", sys(unix.SYS_REQUEST_KEY, 0, 0, 0)},
	{"open_by_handle_at", sys(unix.SYS_OPEN_BY_HANDLE_AT, ^uintptr(0), 0, 0)},
	{"mount", sys6(unix.SYS_MOUNT, 0, 0, 0, 0, 0, 0)},
	{"umount2", sysPath(unix.SYS_UMOUNT2, "/nonexistent-sandbox-test")},
	{"pivot_root", sys(unix.SYS_PIVOT_ROOT, 0, 0, 0)},
	{"chroot", sysPath(unix.SYS_CHROOT, "/nonexistent-sandbox-test")},
	{"unshare", sys(unix.SYS_UNSHARE, 0, 0, 0)},
	{"setns", sys(unix.SYS_SETNS, ^uintptr(0), 0, 0)},
	{"kexec_load", sys6(unix.SYS_KEXEC_LOAD, 0, 0, 0, 0xffffffff, 0, 0)},
	{"init_module", sys(unix.SYS_INIT_MODULE, 0, 0, 0)},
	{"finit_module", sys(unix.SYS_FINIT_MODULE, ^uintptr(0), 0, 0)},
	{"delete_module", sysPath(unix.SYS_DELETE_MODULE, "nonexistent_sandbox_test")},
	{"fsopen", sys(unix.SYS_FSOPEN, 0, 0, 0)},
	{"open_tree", sys(unix.SYS_OPEN_TREE, ^uintptr(0), 0, 0)},
	{"move_mount", sys6(unix.SYS_MOVE_MOUNT, ^uintptr(0), 0, ^uintptr(0), 0, 0, 0)},
	{"pidfd_getfd", sys(unix.SYS_PIDFD_GETFD, ^uintptr(0), 0, 0)},
	{"kcmp", sys6(unix.SYS_KCMP, ^uintptr(0), ^uintptr(0), 0, 0, 0, 0)},
	// Arguments the kernel rejects before changing anything (a bad
	// pointer, an over-long name, an unknown action), so that the call is
	// harmless even as root without the sandbox.
	{"settimeofday", sys(unix.SYS_SETTIMEOFDAY, 1, 0, 0)},
	{"clock_settime", sys(unix.SYS_CLOCK_SETTIME, unix.CLOCK_REALTIME, 1, 0)},
	{"clock_adjtime", sys(unix.SYS_CLOCK_ADJTIME, unix.CLOCK_REALTIME, 1, 0)},
	{"adjtimex", sys(unix.SYS_ADJTIMEX, 1, 0, 0)},
	{"sethostname", sys(unix.SYS_SETHOSTNAME, 1, 1<<20, 0)},
	{"setdomainname", sys(unix.SYS_SETDOMAINNAME, 1, 1<<20, 0)},
	{"syslog", sys(unix.SYS_SYSLOG, 0xffff, 0, 0)},
}

func sys(nr, a1, a2, a3 uintptr) func() syscall.Errno {
	return func() syscall.Errno { _, _, e := syscall.RawSyscall(nr, a1, a2, a3); return e }
}

func sys6(nr, a1, a2, a3, a4, a5, a6 uintptr) func() syscall.Errno {
	return func() syscall.Errno { _, _, e := syscall.RawSyscall6(nr, a1, a2, a3, a4, a5, a6); return e }
}

func sysPath(nr uintptr, path string) func() syscall.Errno {
	return func() syscall.Errno {
		p, _ := syscall.BytePtrFromString(path)
		_, _, e := syscall.RawSyscall(nr, uintptr(unsafe.Pointer(p)), 0, 0)
		return e
	}
}

func TestDangerousSyscallsDenied(t *testing.T) {
	childtest.Run(t, func(t *testing.T) {
		before := make([]syscall.Errno, len(dangerous))
		for i, d := range dangerous {
			before[i] = d.call()
		}
		apply(t, sandbox.Config{})
		for i, d := range dangerous {
			after := d.call()
			switch {
			case before[i] == syscall.EPERM:
				t.Logf("%s: not distinguishable here, the kernel answers EPERM without the sandbox too", d.name)
			case after != syscall.EPERM:
				t.Errorf("%s: errno %d (%v) after sandbox, want EPERM (before: %v)", d.name, after, after, before[i])
			}
		}
	})
}

// socketCase is a socket(2) call and the errno the sandbox must answer.
type socketCase struct {
	name               string
	family, typ, proto uintptr
	want               syscall.Errno
}

const mptcp = 262

func TestSockets(t *testing.T) {
	highFamily := uintptr(1)<<32 | unix.AF_INET
	denied := []socketCase{
		{"udp", unix.AF_INET, unix.SOCK_DGRAM, 0, syscall.EPERM},
		{"udp6", unix.AF_INET6, unix.SOCK_DGRAM | unix.SOCK_CLOEXEC, 0, syscall.EPERM},
		{"raw", unix.AF_INET, unix.SOCK_RAW, unix.IPPROTO_ICMP, syscall.EPERM},
		{"packet", unix.AF_PACKET, unix.SOCK_RAW, 0, syscall.EPERM},
		{"netlink", unix.AF_NETLINK, unix.SOCK_RAW, 0, syscall.EPERM},
		{"vsock", unix.AF_VSOCK, unix.SOCK_STREAM, 0, syscall.EPERM},
		{"unix", unix.AF_UNIX, unix.SOCK_STREAM, 0, syscall.EPERM},
		{"mptcp", unix.AF_INET, unix.SOCK_STREAM, mptcp, syscall.EPROTONOSUPPORT},
		{"mptcp6", unix.AF_INET6, unix.SOCK_STREAM | unix.SOCK_NONBLOCK, mptcp, syscall.EPROTONOSUPPORT},
		{"high-bits-family", highFamily, unix.SOCK_STREAM, 0, syscall.EPERM},
		{"sctp", unix.AF_INET, unix.SOCK_STREAM, unix.IPPROTO_SCTP, syscall.EPERM},
		{"seqpacket", unix.AF_INET, unix.SOCK_SEQPACKET, 0, syscall.EPERM},
	}
	childtest.Run(t, func(t *testing.T) {
		apply(t, sandbox.Config{AllowedTCPConnect: []string{"*:1"}})
		for _, c := range denied {
			fd, _, e := syscall.RawSyscall(syscall.SYS_SOCKET, c.family, c.typ, c.proto)
			if e == 0 {
				syscall.Close(int(fd))
			}
			if e != c.want {
				t.Errorf("socket %s: errno %d (%v), want %v", c.name, e, e, c.want)
			}
		}
		for _, c := range []socketCase{
			{"tcp", unix.AF_INET, unix.SOCK_STREAM, 0, 0},
			{"tcp6", unix.AF_INET6, unix.SOCK_STREAM | unix.SOCK_NONBLOCK | unix.SOCK_CLOEXEC, unix.IPPROTO_TCP, 0},
		} {
			fd, _, e := syscall.RawSyscall(syscall.SYS_SOCKET, c.family, c.typ, c.proto)
			if e != 0 {
				t.Errorf("socket %s must be allowed: %v", c.name, e)
			} else {
				syscall.Close(int(fd))
			}
		}
		fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		wantOK(t, "socketpair", err)
		if err == nil {
			unix.Close(fds[0])
			unix.Close(fds[1])
		}
	})
}

func TestNoSocketsWithoutNetworkGrants(t *testing.T) {
	childtest.Run(t, func(t *testing.T) {
		apply(t, sandbox.Config{})
		_, err := net.DialTimeout("tcp", "127.0.0.1:1", time.Second)
		wantErrno(t, "dial with no TCP granted", err, syscall.EPERM, syscall.EACCES)
		_, err = net.Listen("tcp", "127.0.0.1:0")
		wantErrno(t, "listen with no TCP granted", err, syscall.EPERM, syscall.EACCES)
	})
}

func TestTCP(t *testing.T) {
	childtest.Run(t, func(t *testing.T) {
		requireABI(t, 4, "TCP port rules")
		allowed, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		other, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		go acceptAll(allowed)
		go acceptAll(other)
		freeBind := freePort(t)
		deniedBind := freePort(t)
		ap := allowed.Addr().(*net.TCPAddr).Port
		op := other.Addr().(*net.TCPAddr).Port
		apply(t, sandbox.Config{
			AllowedTCPConnect: []string{"127.0.0.1:" + strconv.Itoa(ap)},
			AllowedTCPBind:    []uint16{uint16(freeBind)},
		})

		for _, mp := range []bool{false, true} {
			d := net.Dialer{Timeout: time.Second}
			d.SetMultipathTCP(mp)
			name := fmt.Sprintf("(multipath %v)", mp)
			c, err := d.Dial("tcp", "127.0.0.1:"+strconv.Itoa(ap))
			wantOK(t, "connect to granted port "+name, err)
			if c != nil {
				c.Close()
			}
			_, err = d.Dial("tcp", "127.0.0.1:"+strconv.Itoa(op))
			wantErrno(t, "connect to a listening, not granted port "+name, err, syscall.EACCES)
			_, err = d.Dial("tcp", "127.0.0.1:1")
			wantErrno(t, "connect to a closed, not granted port "+name, err, syscall.EACCES)
		}
		// Go's listeners use Multipath TCP by default: the default path
		// must fall back to TCP, where the bind rules apply.
		var lc net.ListenConfig
		if !lc.MultipathTCP() {
			t.Log("note: this Go's listeners do not default to MPTCP; forcing it below")
		}
		for _, mp := range []bool{false, true} {
			lc.SetMultipathTCP(mp)
			name := fmt.Sprintf("(multipath %v)", mp)
			ln, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:"+strconv.Itoa(freeBind))
			wantOK(t, "listen on granted port "+name, err)
			if ln != nil {
				ln.Close()
			}
			_, err = lc.Listen(context.Background(), "tcp", "127.0.0.1:"+strconv.Itoa(deniedBind))
			wantErrno(t, "listen on a not granted port "+name, err, syscall.EACCES)
		}
		// TCP Fast Open would connect without Landlock's connect check.
		fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(fd)
		sa := &unix.SockaddrInet4{Port: op, Addr: [4]byte{127, 0, 0, 1}}
		err = unix.Sendto(fd, []byte("x"), unix.MSG_FASTOPEN, sa)
		wantErrno(t, "sendto MSG_FASTOPEN", err, syscall.EPERM)
		_, _, e := syscall.RawSyscall6(syscall.SYS_SENDTO, uintptr(fd), 0, 0, uintptr(1)<<32|unix.MSG_FASTOPEN, 0, 0)
		if e != syscall.EPERM {
			t.Errorf("sendto MSG_FASTOPEN with high bits: errno %d (%v), want EPERM", e, e)
		}
	})
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func TestScoping(t *testing.T) {
	childtest.Run(t, func(t *testing.T) {
		requireABI(t, 6, "abstract unix socket and signal scoping")
		name := fmt.Sprintf("@sandbox-test-%d", os.Getpid())
		ln, err := net.Listen("unix", name)
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		go acceptAll(ln)
		ppid := os.Getppid()
		if err := syscall.Kill(ppid, 0); err != nil {
			t.Fatalf("kill(ppid, 0) before sandbox: %v", err)
		}
		apply(t, sandbox.Config{AllowUnixSockets: true})
		_, err = net.Dial("unix", name)
		wantErrno(t, "connect to abstract socket outside the sandbox", err, syscall.EPERM)
		wantErrno(t, "kill(ppid, 0)", syscall.Kill(ppid, 0), syscall.EPERM)
		wantOK(t, "kill(self, 0)", syscall.Kill(os.Getpid(), 0))
	})
}

func TestTerminalInjection(t *testing.T) {
	childtest.Run(t, func(t *testing.T) {
		master, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY, 0)
		if err != nil {
			t.Skipf("no pty here: %v", err)
		}
		defer unix.Close(master)
		if err := unix.IoctlSetPointerInt(master, unix.TIOCSPTLCK, 0); err != nil {
			t.Fatal(err)
		}
		tty, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(master), unix.TIOCGPTPEER, unix.O_RDWR|unix.O_NOCTTY)
		if e != 0 {
			t.Skipf("TIOCGPTPEER: %v", e)
		}
		c := byte('x')
		sti := func(req uintptr) syscall.Errno {
			_, _, e := syscall.Syscall(syscall.SYS_IOCTL, tty, req, uintptr(unsafe.Pointer(&c)))
			return e
		}
		before := sti(unix.TIOCSTI)
		apply(t, sandbox.Config{})
		if before == syscall.EPERM {
			t.Log("TIOCSTI answers EPERM without the sandbox too (not root, or legacy_tiocsti off); checking the answer is still EPERM")
		}
		for _, req := range []uintptr{unix.TIOCSTI, uintptr(0xffffffff)<<32 | unix.TIOCSTI, unix.TIOCLINUX} {
			if e := sti(req); e != syscall.EPERM {
				t.Errorf("ioctl %#x: errno %d (%v), want EPERM", req, e, e)
			}
		}
		if _, err := unix.IoctlGetTermios(int(tty), unix.TCGETS); err != nil {
			t.Errorf("TCGETS on a pty must still work: %v", err)
		}
	})
}

func TestStrictAndUnavailable(t *testing.T) {
	childtest.Run(t, func(t *testing.T) {
		if !readable("/etc/passwd") {
			t.Skip("uses /etc/passwd to tell applied from not applied; this machine has no readable one (TestKernelStrict covers the same with its own files)")
		}
		plan, err := sandbox.PlanFor(sandbox.Config{AllowedTCPConnect: []string{"example.com:443"}, Strict: true})
		if err != nil {
			t.Fatal(err)
		}
		if !plan.Available {
			err := sandbox.New().ApplySelf(sandbox.Config{})
			if !errors.Is(err, sandbox.ErrUnavailable) {
				t.Fatalf("ApplySelf without the mechanism = %v, want ErrUnavailable", err)
			}
			t.Skipf("mechanism unavailable, checked the sentinel: %s", plan.Reason)
		}
		// The host part cannot be enforced on Linux: strict refuses, and
		// nothing is applied.
		err = sandbox.New().ApplySelf(sandbox.Config{AllowedTCPConnect: []string{"example.com:443"}, Strict: true})
		if !errors.Is(err, sandbox.ErrNotEnforced) {
			t.Fatalf("strict ApplySelf = %v, want ErrNotEnforced", err)
		}
		if _, err := os.ReadFile("/etc/passwd"); err != nil {
			t.Fatalf("a refused strict ApplySelf applied something: %v", err)
		}
		err = sandbox.New().ApplySelf(sandbox.Config{AllowedReadPaths: []string{"relative"}})
		if !errors.Is(err, sandbox.ErrInvalidConfig) {
			t.Fatalf("bad config = %v, want ErrInvalidConfig", err)
		}
		if _, err := os.ReadFile("/etc/passwd"); err != nil {
			t.Fatalf("a refused ApplySelf applied something: %v", err)
		}
		// Best effort: the host is reported, the rest applies.
		apply(t, sandbox.Config{AllowedTCPConnect: []string{"example.com:443"}})
		_, err = os.ReadFile("/etc/passwd")
		wantErrno(t, "read after best-effort apply", err, syscall.EACCES)
	})
}

func TestProbeMatchesKernel(t *testing.T) {
	st := sandbox.Probe()
	if st.Mode != sandbox.ModeLandlock {
		t.Errorf("Mode = %q", st.Mode)
	}
	if st.Active && !st.Filesystem {
		t.Error("active without filesystem rules")
	}
	if st.Network != (st.Active && st.Version >= 4) {
		t.Errorf("Network = %v with ABI %d, active %v", st.Network, st.Version, st.Active)
	}
	if !st.Active && st.Reason == "" {
		t.Error("inactive without a reason")
	}
	if st.Active && st.Version < 6 && st.Reason == "" {
		t.Error("ABI below 6 must say what is not enforced")
	}
	t.Logf("Probe: %+v", st)
}
