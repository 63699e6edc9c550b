//go:build linux

package sandbox_test

// Issue 13 and 14 classes under WrapCommand and Run: memfd execution, the
// parent-death signal, capabilities of the target.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/openparallax/sandbox"
	"github.com/openparallax/sandbox/internal/childtest"
	"github.com/openparallax/sandbox/internal/rawsys"
)

// Registered in a variable initialiser, which runs before every init
// function, so that wrap_linux_test.go's init finds the modes.
var _ = registerHardenHelpers()

func registerHardenHelpers() bool {
	childHelpers["memfd-exec"] = memfdExecHelper
	childHelpers["pdeathsig"] = pdeathsigHelper
	childHelpers["caps"] = capsHelper
	childHelpers["meta"] = metaHelper
	childHelpers["say"] = func(args []string) int { fmt.Println(strings.Join(args, " ")); return 0 }
	return true
}

// memfdExecHelper ROUTE ELF: copies the ELF file (this test binary) into
// a memfd and runs it as a helper that prints "memfd ran", through ROUTE: "execveat" (execveat(fd, "",
// AT_EMPTY_PATH)) or "proc" (execve("/proc/self/fd/N")). When a plain
// memfd is refused it prints the errno, then tries the same with a memfd
// made with MFD_NOEXEC_SEAL, and prints what fchmod(+x) and the exec say.
func memfdExecHelper(args []string) int {
	route, elf := args[0], args[1]
	code, err := os.ReadFile(elf)
	if err != nil {
		fmt.Println("read", elf, err)
		return 3
	}
	run := func(fd int) syscall.Errno {
		argv := []string{elf, helperArg, "say", "memfd ran"}
		switch route {
		case "execveat":
			return execveat(fd, argv)
		default:
			return errnoOfErr(unix.Exec(fmt.Sprintf("/proc/self/fd/%d", fd), argv, os.Environ()))
		}
	}
	fd, err := unix.MemfdCreate("sandbox-test", 0)
	fmt.Printf("memfd_create(0) %d\n", int(errnoOfErr(err)))
	if err == nil {
		unix.Write(fd, code)
		unix.Fchmod(fd, 0o755)
		fmt.Printf("exec %d\n", int(run(fd)))
		return 0
	}
	fd, err = unix.MemfdCreate("sandbox-test", unix.MFD_NOEXEC_SEAL)
	fmt.Printf("memfd_create(MFD_NOEXEC_SEAL) %d\n", int(errnoOfErr(err)))
	if err != nil {
		return 0
	}
	unix.Write(fd, code)
	fmt.Printf("fchmod(0755) %d\n", int(errnoOfErr(unix.Fchmod(fd, 0o755))))
	fmt.Printf("exec %d\n", int(run(fd)))
	return 0
}

// execveat(fd, "", argv, environ, AT_EMPTY_PATH); returns only on failure.
func execveat(fd int, argv []string) syscall.Errno {
	argvp, err := syscall.SlicePtrFromStrings(argv)
	if err != nil {
		return syscall.EINVAL
	}
	envp, err := syscall.SlicePtrFromStrings(os.Environ())
	if err != nil {
		return syscall.EINVAL
	}
	empty, _ := syscall.BytePtrFromString("")
	_, _, e := syscall.Syscall6(unix.SYS_EXECVEAT, uintptr(fd), uintptr(unsafe.Pointer(empty)),
		uintptr(unsafe.Pointer(&argvp[0])), uintptr(unsafe.Pointer(&envp[0])), unix.AT_EMPTY_PATH, 0)
	return e
}

func errnoOfErr(err error) syscall.Errno {
	return rawsys.Errno(err)
}

// TestWrapMemfdExec: under WrapCommand with an exec allowlist (so that
// exec is possible after the start) a memfd cannot be executed by either
// route. Unconfined, both routes run
// the copy, so the test would fail without the rule.
func TestWrapMemfdExec(t *testing.T) {
	requireSandbox(t)
	elf := self(t)
	for _, route := range []string{"execveat", "proc"} {
		t.Run(route, func(t *testing.T) {
			cmd := exec.Command(self(t), helperArg, "memfd-exec", route, elf)
			cmd.Env = []string{quickExit}
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "memfd ran") {
				t.Fatalf("unconfined control: the %s route did not run the memfd (%v):\n%s", route, err, out)
			}

			cmd = exec.Command(self(t), helperArg, "memfd-exec", route, elf)
			cmd.Env = []string{quickExit}
			// Read access is all the attack needs: any readable ELF (here
			// the target itself, which the sandbox may read and execute;
			// the memfd route would run any other readable file as well).
			// The exec allowlist keeps execve possible after the start:
			// with neither it nor spawning, the exec nonce would refuse
			// both routes (EPERM) before the memfd rule is reached.
			wrap(t, cmd, sandbox.Config{AllowedExecPaths: []string{elf}})
			out, err = cmd.CombinedOutput()
			got := string(out)
			t.Logf("confined:\n%s", got)
			if err != nil || strings.Contains(got, "memfd ran") {
				t.Fatalf("confined (%v): the memfd ran or the helper failed:\n%s", err, got)
			}
			want := fmt.Sprintf("memfd_create(0) %d\nmemfd_create(MFD_NOEXEC_SEAL) 0\nfchmod(0755) %d\nexec %d\n",
				int(syscall.ENOSYS), int(syscall.EPERM), int(syscall.EACCES))
			if fd, err := unix.MemfdCreate("sbx", unix.MFD_CLOEXEC|unix.MFD_NOEXEC_SEAL); err != nil {
				// Before Linux 6.3 there is no MFD_NOEXEC_SEAL (EINVAL):
				// no memfd at all then.
				want = fmt.Sprintf("memfd_create(0) %d\nmemfd_create(MFD_NOEXEC_SEAL) %d\n", int(syscall.ENOSYS), int(rawsys.Errno(err)))
			} else {
				unix.Close(fd)
			}
			if got != want {
				t.Errorf("confined output %q, want %q", got, want)
			}
		})
	}
}

// pdeathsigHelper prints the errno of prctl(PR_SET_PDEATHSIG, sig) for
// 0, SIGCONT and SIGKILL, in that order.
func pdeathsigHelper([]string) int {
	for _, sig := range []uintptr{0, uintptr(syscall.SIGCONT), uintptr(syscall.SIGKILL)} {
		_, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, sig, 0)
		fmt.Printf("%d ", int(e))
	}
	fmt.Println()
	return 0
}

// TestRunKeepsPdeathsig: a program under Run cannot clear its
// parent-death signal or make it catchable; under WrapCommand (no
// parent-death signal is set) it can.
func TestRunKeepsPdeathsig(t *testing.T) {
	requireSandbox(t)
	res, err := sandbox.Run(context.Background(), sandbox.Config{}, self(t), []string{helperArg, "pdeathsig"},
		sandbox.RunOptions{Env: []string{quickExit}})
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%d %d 0 \n", int(syscall.EPERM), int(syscall.EPERM)); string(res.Stdout) != want {
		t.Errorf("under Run: %q, want %q (stderr %q)", res.Stdout, want, res.Stderr)
	}
	cmd := exec.Command(self(t), helperArg, "pdeathsig")
	cmd.Env = []string{quickExit}
	wrap(t, cmd, sandbox.Config{})
	out, err := cmd.Output()
	if err != nil || string(out) != "0 0 0 \n" {
		t.Errorf("under WrapCommand: %q, %v; want every call allowed", out, err)
	}
}

// capsHelper prints the Cap* lines of /proc/self/status.
func capsHelper([]string) int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		fmt.Println(err)
		return 3
	}
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "Cap") {
			fmt.Println(strings.ReplaceAll(l, "\t", " "))
		}
	}
	return 0
}

// TestWrapDropsCapabilities: a root target holds no capability (the child
// half drops them all; see also TestWrapCapsDropped).
func TestWrapDropsCapabilities(t *testing.T) {
	requireSandbox(t)
	if os.Geteuid() != 0 {
		t.Skip("not root: the target has no capability to drop")
	}
	cmd := exec.Command(self(t), helperArg, "caps")
	cmd.Env = []string{quickExit}
	wrap(t, cmd, sandbox.Config{})
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var held []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if k, v, _ := strings.Cut(l, ": "); strings.TrimSpace(v) != "0000000000000000" {
			held = append(held, k+"="+strings.TrimSpace(v))
		}
	}
	if len(held) > 0 {
		t.Errorf("a root target under WrapCommand holds capabilities: %s", strings.Join(held, " "))
	}
}

// metaHelper OUTSIDE WS prints, one per line, "name errno" for metadata
// changes that change nothing on OUTSIDE (a file outside the grants),
// set-ID modes in WS (a write path), and SysV IPC.
func metaHelper(args []string) int {
	outside, ws := args[0], args[1]
	var st unix.Stat_t
	if err := unix.Stat(outside, &st); err != nil {
		fmt.Println("stat", err)
		return 3
	}
	say := func(name string, err error) { fmt.Printf("%s %d\n", name, int(rawsys.Errno(err))) }
	say("chmod", unix.Chmod(outside, st.Mode&0o7777))
	say("chown", unix.Chown(outside, int(st.Uid), int(st.Gid)))
	say("lchown", unix.Lchown(outside, int(st.Uid), int(st.Gid)))
	say("setxattr", unix.Setxattr(outside, "user.sandbox-test", []byte("x"), 0))
	fd, err := unix.Open(ws+"/suid", unix.O_CREAT|unix.O_WRONLY|unix.O_CLOEXEC, 0o4755)
	if err == nil {
		unix.Close(fd)
	}
	say("open-suid", err)
	_, _, e := unix.Syscall(unix.SYS_SHMGET, 0, 0, 0o600) // EINVAL when allowed
	fmt.Printf("shmget %d\n", int(e))
	return 0
}

// TestWrapMetadata: under WrapCommand, chown and xattr writes by path
// outside the grants are refused unless AllowChown; chmod by path of the
// user's own file is refused by the mount layer, used by default where
// namespaces are available (EROFS, and with AllowChown chown and xattrs
// too), and NOT without it (reported as not enforced); set-ID modes are
// refused everywhere; SysV IPC is refused unless AllowSysVIPC.
func TestWrapMetadata(t *testing.T) {
	requireSandbox(t)
	dir := hostDir(t) // not /tmp, which the layer makes private
	ws := dir + "/ws"
	outside := dir + "/outside"
	os.Mkdir(ws, 0o755)
	os.WriteFile(outside, []byte("x"), 0o600)
	xattr := int(syscall.EPERM)
	if err := unix.Setxattr(outside, "user.sandbox-test", []byte("x"), 0); err != nil {
		xattr = int(rawsys.Errno(err)) // e.g. EOPNOTSUPP here, unconfined
	}
	chmod, chown := 0, 0
	if xattr == int(syscall.EPERM) {
		xattr = 0
	}
	layer, _ := mountLayerAvailable(t)
	if layer {
		chmod, chown, xattr = int(syscall.EROFS), int(syscall.EROFS), int(syscall.EROFS)
	}
	for _, tc := range []struct {
		cfg  sandbox.Config
		want string
	}{
		{sandbox.Config{AllowedWritePaths: []string{ws}}, fmt.Sprintf("chmod %d\nchown 1\nlchown 1\nsetxattr 1\nopen-suid 1\nshmget 1\n", chmod)},
		{sandbox.Config{AllowedWritePaths: []string{ws}, AllowChown: true, AllowSysVIPC: true},
			fmt.Sprintf("chmod %d\nchown %d\nlchown %d\nsetxattr %d\nopen-suid 1\nshmget %d\n", chmod, chown, chown, xattr, int(syscall.EINVAL))},
	} {
		cmd := exec.Command(self(t), helperArg, "meta", outside, ws)
		cmd.Env = []string{quickExit}
		wrap(t, cmd, tc.cfg)
		out, err := cmd.CombinedOutput()
		if err != nil || string(out) != tc.want {
			t.Errorf("AllowChown=%v AllowSysVIPC=%v: %v\n%s\nwant\n%s", tc.cfg.AllowChown, tc.cfg.AllowSysVIPC, err, out, tc.want)
		}
		plan, err := sandbox.PlanFor(tc.cfg)
		if err != nil {
			t.Fatal(err)
		}
		// The plan's WrapCommand/Run entry, its first file_metadata one,
		// says what happened above: enforced with the layer (not with
		// AllowChown, which lets chown reach the write paths), and
		// without it not enforced.
		f := metadataEntry(plan)
		switch {
		case f.Scope != sandbox.ScopeCommand:
			t.Errorf("the plan's first file_metadata entry is not WrapCommand's: %+v", f)
		case layer && (f.Enforced == tc.cfg.AllowChown || !strings.Contains(f.Detail, "EROFS")):
			t.Errorf("with the layer (AllowChown %v), the plan's first file_metadata entry is %+v", tc.cfg.AllowChown, f)
		case !layer && (f.Enforced || !strings.Contains(f.Detail, "chmod and utimes by path")):
			t.Errorf("the plan's first file_metadata entry does not say what WrapCommand leaves open: %+v", f)
		}
	}
	// Strict: WrapCommand uses the mount layer, whose read-only mounts
	// refuse chmod outside the write paths (EROFS); where that layer is
	// unavailable it refuses, naming file_metadata. The file outside is
	// not under /tmp, which the layer makes private.
	other, err := os.MkdirTemp(pick(dirExists("/var/tmp"), "/var/tmp", "/"), "sandbox-meta-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(other)
	outside = filepath.Join(other, "outside")
	os.WriteFile(outside, []byte("x"), 0o600)
	err = sandbox.New().WrapCommand(exec.Command(self(t), helperArg, "meta", outside, ws), sandbox.Config{Strict: true, AllowedWritePaths: []string{ws}})
	ok, why := mountLayerAvailable(t)
	if !ok {
		t.Logf("the mount layer is unavailable (%s): Strict must refuse", why)
		if !errors.Is(err, sandbox.ErrNotEnforced) || !strings.Contains(err.Error(), sandbox.FeatureMetadata) {
			t.Errorf("Strict WrapCommand: %v, want ErrNotEnforced naming %s", err, sandbox.FeatureMetadata)
		}
		return
	}
	if err != nil && (!errors.Is(err, sandbox.ErrNotEnforced) || strings.Contains(err.Error(), sandbox.FeatureMetadata)) {
		t.Errorf("Strict WrapCommand with the mount layer: %v; want no error, or one for other features (an old kernel) not naming %s", err, sandbox.FeatureMetadata)
	}
	// With the layer (here asked for by a deny-write path, so that an old
	// kernel's other gaps do not matter) chmod outside fails with EROFS.
	os.WriteFile(filepath.Join(ws, "x"), nil, 0o644)
	cmd := exec.Command(self(t), helperArg, "meta", outside, ws)
	cmd.Env = []string{quickExit}
	wrap(t, cmd, sandbox.Config{AllowedWritePaths: []string{ws}, DenyWritePaths: []string{filepath.Join(ws, "x")}})
	out, err := cmd.CombinedOutput()
	if want := fmt.Sprintf("chmod %d\nchown 1\nlchown 1\nsetxattr 1\nopen-suid 1\nshmget 1\n", int(syscall.EROFS)); err != nil || string(out) != want {
		t.Errorf("with the mount layer: %v\n%s\nwant\n%s", err, out, want)
	}
}

// metadataEntry is plan's first file_metadata entry: WrapCommand's and
// Run's on Linux.
func metadataEntry(plan sandbox.Plan) sandbox.Enforcement {
	for _, f := range plan.Features {
		if f.Feature == sandbox.FeatureMetadata {
			return f
		}
	}
	return sandbox.Enforcement{}
}

// TestWrapMetadataAsNobody: TestWrapMetadata for an ordinary user, whose
// own file outside the grants is the target. Unconfined (the control) a
// change-nothing chown and a user xattr of its own file work, so the EPERM
// under WrapCommand is seccomp's. chmod by path of that file fails with
// EROFS under the default (the layer, in a user namespace) and the plan
// says enforced; where the layer is unavailable it works, and the plan's
// WrapCommand/Run entry says not enforced.
func TestWrapMetadataAsNobody(t *testing.T) {
	requireSandbox(t)
	const env = "SANDBOX_META_DIR"
	if !childtest.InNobodyRun(t) {
		requireRoot(t)
		// Not under /tmp, which the layer makes private.
		dir, err := os.MkdirTemp(pick(dirExists("/var/tmp"), "/var/tmp", "/"), "sandbox-meta-nobody-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		os.Chmod(dir, 0o755)
		os.Mkdir(filepath.Join(dir, "ws"), 0o755)
		os.WriteFile(filepath.Join(dir, "ws", "x"), nil, 0o644)
		os.WriteFile(filepath.Join(dir, "outside"), []byte("x"), 0o600)
		chownTree(t, dir, 65534)
		childtest.AsNobody(t, env+"="+dir)
		return
	}
	dir := os.Getenv(env)
	ws, outside := filepath.Join(dir, "ws"), filepath.Join(dir, "outside")
	if err := unix.Chown(outside, os.Geteuid(), os.Getegid()); err != nil {
		t.Fatalf("unconfined control: chown of its own file: %v", err)
	}
	if err := unix.Setxattr(outside, "user.sandbox-test", []byte("x"), 0); err != nil {
		// seccomp answers before the file system: EPERM below all the
		// same, but not shown to differ from the unconfined answer.
		t.Logf("unconfined setxattr: %v (this file system has no user xattrs)", err)
	}
	run := func(cfg sandbox.Config) string {
		t.Helper()
		cmd := exec.Command(self(t), helperArg, "meta", outside, ws)
		cmd.Env = []string{quickExit}
		wrap(t, cmd, cfg)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		return string(out)
	}
	cfg := sandbox.Config{AllowedWritePaths: []string{ws}}
	plan, err := sandbox.PlanFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if ok, why := mountLayerAvailable(t); !ok {
		// Without namespaces, the default leaves chmod open and says so.
		if got, want := run(cfg), "chmod 0\nchown 1\nlchown 1\nsetxattr 1\nopen-suid 1\nshmget 1\n"; got != want {
			t.Errorf("without the mount layer, as uid %d:\n%s\nwant\n%s", os.Geteuid(), got, want)
		}
		if f := metadataEntry(plan); f.Scope != sandbox.ScopeCommand || f.Enforced || !strings.Contains(f.Detail, "chmod and utimes by path") {
			t.Errorf("chmod outside worked, but the plan's WrapCommand/Run file_metadata entry is %+v", f)
		}
		t.Logf("the mount layer is unavailable to nobody here (%s): the EROFS half is not run", why)
		return
	}
	// The default: the layer is used for a plain Config.
	if got, want := run(cfg), fmt.Sprintf("chmod %d\nchown 1\nlchown 1\nsetxattr 1\nopen-suid 1\nshmget 1\n", int(syscall.EROFS)); got != want {
		t.Errorf("the default, as uid %d:\n%s\nwant\n%s", os.Geteuid(), got, want)
	}
	if f := metadataEntry(plan); f.Scope != sandbox.ScopeCommand || !f.Enforced || !strings.Contains(f.Detail, "EROFS") {
		t.Errorf("the default: the plan's WrapCommand/Run file_metadata entry is %+v", f)
	}
	layered := sandbox.Config{AllowedWritePaths: []string{ws}, DenyWritePaths: []string{filepath.Join(ws, "x")}}
	if got, want := run(layered), fmt.Sprintf("chmod %d\nchown 1\nlchown 1\nsetxattr 1\nopen-suid 1\nshmget 1\n", int(syscall.EROFS)); got != want {
		t.Errorf("with the mount layer, as uid %d:\n%s\nwant\n%s", os.Geteuid(), got, want)
	}
	plan, err = sandbox.PlanFor(sandbox.Config{AllowedWritePaths: []string{ws}, Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	if f := metadataEntry(plan); f.Scope != sandbox.ScopeCommand || !f.Enforced || !strings.Contains(f.Detail, "EROFS") {
		t.Errorf("Strict (the layer used): the plan's WrapCommand/Run file_metadata entry is %+v", f)
	}
}
