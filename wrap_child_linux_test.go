//go:build linux

package sandbox_test

// The child half of WrapCommand and Run (internal/spawnhelper's static
// helper, or the Go trampoline where the helper cannot run; CI runs these
// tests through both, see SANDBOX_TEST_GO_TRAMPOLINE): capabilities
// dropped, rule paths checked against what WrapCommand resolved, and the
// exec nonce.

import (
	"context"
	"debug/elf"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/openparallax/sandbox"
	"github.com/openparallax/sandbox/internal/rawsys"
)

// childHelpers are helper modes (see helperMain) for these tests.
var childHelpers = map[string]func(args []string) int{
	// child-caps: the capability lines of /proc/self/status.
	"child-caps": func([]string) int {
		b, err := os.ReadFile("/proc/self/status")
		if err != nil {
			fmt.Println("error", err)
			return 3
		}
		for _, l := range strings.Split(string(b), "\n") {
			if strings.HasPrefix(l, "Cap") {
				fmt.Println(l)
			}
		}
		return 0
	},
	// child-chown PATH UID GID: the errno of chown.
	"child-chown": func(args []string) int {
		uid, _ := strconv.Atoi(args[1])
		gid, _ := strconv.Atoi(args[2])
		fmt.Println(int(rawsys.Errno(syscall.Chown(args[0], uid, gid))))
		return 0
	},
	// child-execve PATH ARG...: execve; on failure print its errno.
	"child-execve": func(args []string) int {
		err := syscall.Exec(args[0], args, []string{quickExit})
		fmt.Println(int(rawsys.Errno(err)))
		return 0
	},
	// child-memfd-exec execve|execveat: run the executable memfd the parent
	// passed as fd 3 (memfd_create itself is the memfd rule's business;
	// here the exec route is what is tested).
	"child-memfd-exec": func(args []string) int {
		if args[0] == "execveat" {
			empty, _ := syscall.BytePtrFromString("")
			argv, _ := syscall.SlicePtrFromStrings([]string{"x"})
			envv, _ := syscall.SlicePtrFromStrings(nil)
			_, _, e := syscall.Syscall6(unix.SYS_EXECVEAT, 3, uintptr(unsafe.Pointer(empty)),
				uintptr(unsafe.Pointer(&argv[0])), uintptr(unsafe.Pointer(&envv[0])), unix.AT_EMPTY_PATH, 0)
			fmt.Println(int(e))
			return 0
		}
		err := syscall.Exec("/proc/self/fd/3", []string{"x"}, nil)
		fmt.Println(int(rawsys.Errno(err)))
		return 0
	},
}

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: the capabilities of a root target are what is tested")
	}
}

// TestWrapChildHalf: on linux/amd64 and arm64 WrapCommand runs the static
// helper from its memfd unless the Go trampoline is forced, and Plan says
// which is used.
func TestWrapChildHalf(t *testing.T) {
	requireSandbox(t)
	cmd := exec.Command("/bin/true")
	cmd.ExtraFiles = []*os.File{os.Stdin}
	wrap(t, cmd, sandbox.Config{})
	plan, err := sandbox.PlanFor(sandbox.Config{})
	if err != nil {
		t.Fatal(err)
	}
	forced := os.Getenv("SANDBOX_TEST_GO_TRAMPOLINE") == "1"
	switch {
	case forced || (runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64"):
		if cmd.Path != "/proc/self/exe" || !strings.Contains(plan.ChildHalf, "Go trampoline") {
			t.Errorf("Path %q, plan %q: want the Go trampoline", cmd.Path, plan.ChildHalf)
		}
	default:
		// ExtraFiles: the caller's one (fd 3), then the helper (fd 4).
		if cmd.Path != "/proc/self/fd/4" || len(cmd.ExtraFiles) != 2 || !strings.Contains(plan.ChildHalf, "static helper") {
			t.Errorf("Path %q, %d ExtraFiles, plan %q: want the helper at fd 4", cmd.Path, len(cmd.ExtraFiles), plan.ChildHalf)
		}
	}
	if err := cmd.Run(); err != nil {
		t.Fatalf("run: %v", err)
	}
}

// wrapped runs a wrapped command and returns its combined output.
func wrapped(t *testing.T, cfg sandbox.Config, path string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(path, args...)
	cmd.Env = []string{quickExit}
	wrap(t, cmd, cfg)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestWrapCapsDropped: a root target starts with every capability set
// empty, so a chown that changes nothing, of a file outside the grants
// that root does not own, needs CAP_CHOWN and fails with EPERM. (A file
// root owns would not do: its owner may chown it to itself without any
// capability.)
func TestWrapCapsDropped(t *testing.T) {
	requireSandbox(t)
	requireRoot(t)
	out, err := wrapped(t, sandbox.Config{}, self(t), helperArg, "child-caps")
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	for _, set := range []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"} {
		if !strings.Contains(out, set+":\t0000000000000000\n") {
			t.Errorf("%s not empty in the target:\n%s", set, out)
		}
	}

	f := filepath.Join(t.TempDir(), "owned-by-nobody")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(f, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	// The same chown, unsandboxed, succeeds: the capability decides.
	if err := os.Chown(f, 65534, 65534); err != nil {
		t.Fatalf("control chown: %v", err)
	}
	out, err = wrapped(t, sandbox.Config{}, self(t), helperArg, "child-chown", f, "65534", "65534")
	if err != nil || strings.TrimSpace(out) != strconv.Itoa(int(syscall.EPERM)) {
		t.Errorf("chown of a file root does not own, in the sandbox: %q, %v; want EPERM (%d)", out, err, syscall.EPERM)
	}
}

// TestWrapRuleReplacedBySymlink: a granted directory replaced, between
// WrapCommand and Start, by a symlink to a secret directory grants nothing:
// the child checks it opens the object WrapCommand resolved.
func TestWrapRuleReplacedBySymlink(t *testing.T) {
	requireSandbox(t)
	base := hostDir(t)
	granted := filepath.Join(base, "granted")
	secretDir := filepath.Join(base, "secret")
	for _, d := range []string{granted, secretDir} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(granted, "f"), []byte("granted\n"), 0o644)
	os.WriteFile(filepath.Join(secretDir, "f"), []byte("secret\n"), 0o644)
	cfg := sandbox.Config{AllowedReadPaths: []string{granted}}
	read := func(swap bool) string {
		cmd := exec.Command(self(t), helperArg, "read", filepath.Join(granted, "f"))
		cmd.Env = []string{quickExit}
		wrap(t, cmd, cfg)
		if swap {
			if err := os.Rename(granted, granted+".old"); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(secretDir, granted); err != nil {
				t.Fatal(err)
			}
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if got, want := read(false), filepath.Join(granted, "f")+" 0"; got != want {
		t.Fatalf("control: %q, want %q", got, want)
	}
	if got, want := read(true), filepath.Join(granted, "f")+" "+strconv.Itoa(int(syscall.EACCES)); got != want {
		t.Errorf("granted directory swapped for a symlink to a secret: %q, want %q (EACCES)", got, want)
	}
}

// TestWrapExecNonce: with neither spawning nor an exec allowlist, the
// target can execute nothing after its own start: not itself, not its
// dynamic loader, not a memfd (execve of /proc/self/fd/N and execveat with
// AT_EMPTY_PATH). The filter answers EPERM (Landlock would say EACCES).
// With the target itself on the exec allowlist, re-executing it works.
func TestWrapExecNonce(t *testing.T) {
	requireSandbox(t)
	trueBin := need(t, "/bin/true", "coreutils")
	loader := ""
	if f, err := elf.Open(trueBin); err == nil {
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				b := make([]byte, p.Filesz)
				p.ReadAt(b, 0)
				loader = strings.TrimRight(string(b), "\x00")
			}
		}
		f.Close()
	}
	eperm := strconv.Itoa(int(syscall.EPERM))
	// An executable memfd holding /bin/true, inherited as fd 3.
	img, err := os.ReadFile(trueBin)
	if err != nil {
		t.Fatal(err)
	}
	mfd, err := unix.MemfdCreate("true", unix.MFD_CLOEXEC)
	if err != nil {
		t.Skipf("memfd_create: %v", err)
	}
	memfd := os.NewFile(uintptr(mfd), "memfd")
	defer memfd.Close()
	if _, err := memfd.Write(img); err != nil {
		t.Fatal(err)
	}
	cases := [][]string{
		{"child-execve", self(t), helperArg, "sleep", "0s"},
		{"child-memfd-exec", "execve"},
		{"child-memfd-exec", "execveat"},
	}
	if loader != "" {
		cases = append(cases, []string{"child-execve", loader, trueBin})
	}
	for _, c := range cases {
		cmd := exec.Command(self(t), append([]string{helperArg}, c...)...)
		cmd.Env = []string{quickExit}
		cmd.ExtraFiles = []*os.File{memfd}
		wrap(t, cmd, sandbox.Config{AllowedReadPaths: []string{trueBin}})
		b, err := cmd.CombinedOutput()
		if out := strings.TrimSpace(string(b)); err != nil || out != eperm {
			t.Errorf("%q in a target that may execute nothing: %q, %v; want EPERM (%s)", c, out, err, eperm)
		}
	}
	// Control: the target on the exec allowlist may execute itself.
	out, err := wrapped(t, sandbox.Config{AllowedExecPaths: []string{self(t)}}, self(t), helperArg, "child-execve", self(t), helperArg, "read", "/nonexistent")
	if err != nil || strings.TrimSpace(out) != "/nonexistent "+strconv.Itoa(int(syscall.ENOENT)) {
		t.Errorf("re-exec with the target on the exec allowlist: %q, %v", out, err)
	}
	// And Run has the same: the failure pipe and setsid refusal change nothing.
	res, err := sandbox.Run(context.Background(), sandbox.Config{}, self(t), []string{helperArg, "child-execve", self(t), helperArg, "sleep", "0s"}, sandbox.RunOptions{Env: []string{quickExit}})
	if err != nil || strings.TrimSpace(string(res.Stdout)) != eperm {
		t.Errorf("Run: re-exec of the target: %q, %v; want EPERM", res.Stdout, err)
	}
}

// TestGrantThroughSymlinkInWritePath: a grant that resolves through a
// symlink inside a write path (which an earlier sandboxed run could have
// planted) is refused, Strict or not; the same grant through a symlink
// outside every write path, or of the link's target itself, is accepted.
func TestGrantThroughSymlinkInWritePath(t *testing.T) {
	base := t.TempDir()
	ws := filepath.Join(base, "ws")
	secret := filepath.Join(base, "secret")
	for _, d := range []string{ws, secret, filepath.Join(secret, "sub")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	planted := filepath.Join(ws, "data")
	if err := os.Symlink("../secret", planted); err != nil {
		t.Fatal(err)
	}
	outside := filepath.Join(base, "link")
	if err := os.Symlink(secret, outside); err != nil {
		t.Fatal(err)
	}
	// A link outside that leads through the planted one.
	chain := filepath.Join(base, "chain")
	if err := os.Symlink("ws/data", chain); err != nil {
		t.Fatal(err)
	}
	for _, strict := range []bool{false, true} {
		for _, p := range []string{planted, filepath.Join(planted, "sub"), chain} {
			_, err := sandbox.PlanFor(sandbox.Config{Strict: strict, AllowedWritePaths: []string{ws}, AllowedReadPaths: []string{p}})
			var ce *sandbox.ConfigError
			if !errors.As(err, &ce) || !strings.Contains(err.Error(), "inside the write path") {
				t.Errorf("read grant %s (Strict %v): %v; want a ConfigError naming the planted symlink", p, strict, err)
			}
		}
		for _, p := range []string{outside, secret, ws} {
			if _, err := sandbox.PlanFor(sandbox.Config{Strict: strict, AllowedWritePaths: []string{ws}, AllowedReadPaths: []string{p}}); err != nil {
				t.Errorf("read grant %s (Strict %v): %v", p, strict, err)
			}
		}
	}
}

// TestWrapAsNobody: a command whose SysProcAttr.Credential makes it
// nobody still reaches its child half (exec.Cmd changes the credentials
// before execve; the helper's /proc/self/fd path is the process's own),
// and the target is confined: cat reads its grant, not a file outside that
// nobody may read by permissions.
func TestWrapAsNobody(t *testing.T) {
	requireSandbox(t)
	requireRoot(t)
	cat := need(t, "/bin/cat", "coreutils")
	ws, allowed, secret := fsFiles(t)
	// t.TempDir and its parent are 0700: let nobody in.
	os.Chmod(filepath.Dir(ws), 0o755)
	os.Chmod(filepath.Dir(filepath.Dir(ws)), 0o755)
	cmd := exec.Command(cat, allowed, secret)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	wrap(t, cmd, sandbox.Config{AllowedReadPaths: []string{ws}})
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.HasPrefix(string(out), "allowed content\n") ||
		!strings.Contains(string(out), secret+": Permission denied") {
		t.Errorf("as nobody: %v, %q; want the grant read and the secret denied", err, out)
	}
}
