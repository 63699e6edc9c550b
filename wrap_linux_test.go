//go:build linux

package sandbox_test

// WrapCommand and Run on Linux, with real programs and real enforcement.
// The parent (this test process) is never restricted: every target runs in
// a trampoline child. Targets are programs of this machine (sh, cat,
// git, python3) and this test binary itself, re-executed as a helper
// (helperArg) that reports what it sees from inside the sandbox.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openparallax/sandbox"
	"github.com/openparallax/sandbox/internal/rawsys"
)

// helperArg as argv[1] makes this test binary a helper target (see init):
// selected by argv, not the environment, so that the environment the
// target gets can be checked exactly.
const helperArg = "sandbox-wrap-helper"

func init() {
	if len(os.Args) < 3 || os.Args[1] != helperArg {
		return
	}
	os.Exit(helperMain(os.Args[2], os.Args[3:]))
}

// report is what the helper sees of itself inside the sandbox.
type report struct {
	Args     []string
	Env      []string
	FDs      map[int]string // fd → "dev:ino"
	Pid      int
	ProcSelf string
	Cwd      string
}

func helperMain(mode string, args []string) int {
	switch mode {
	case "report":
		// argv and the environment as the kernel holds them.
		r := report{Args: procList("cmdline"), Env: procList("environ"), Pid: os.Getpid(), FDs: map[int]string{}}
		r.ProcSelf, _ = os.Readlink("/proc/self")
		r.Cwd, _ = os.Getwd()
		// Raw system calls: an os.File would start the runtime's poller,
		// whose descriptors are the helper's own, not inherited ones.
		d, err := syscall.Open("/proc/self/fd", syscall.O_RDONLY|syscall.O_DIRECTORY|syscall.O_CLOEXEC, 0)
		if err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			return 3
		}
		var names []string
		buf := make([]byte, 8192)
		for {
			n, err := syscall.ReadDirent(d, buf)
			if err != nil {
				fmt.Fprintln(os.Stderr, "helper:", err)
				return 3
			}
			if n <= 0 {
				break
			}
			_, _, names = syscall.ParseDirent(buf[:n], -1, names)
		}
		for _, n := range names {
			fd, _ := strconv.Atoi(n)
			if fd == d {
				continue
			}
			// Inherited descriptors are exactly those without
			// close-on-exec: what the Go runtime of this helper opened
			// itself (cgroup files, the poller) has it, and so would
			// anything of the trampoline's that survived execve.
			flags, _, e := syscall.RawSyscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0)
			if e != 0 || flags&syscall.FD_CLOEXEC != 0 {
				continue
			}
			var st syscall.Stat_t
			if err := syscall.Fstat(fd, &st); err != nil {
				continue
			}
			r.FDs[fd] = fmt.Sprintf("%d:%d", st.Dev, st.Ino)
		}
		syscall.Close(d)
		json.NewEncoder(os.Stdout).Encode(r)
		return 0
	case "fork":
		fmt.Println(int(rawsys.Fork()))
		return 0
	case "read":
		for _, p := range args {
			_, err := os.ReadFile(p)
			fmt.Printf("%s %d\n", p, int(rawsys.Errno(err)))
		}
		return 0
	case "sleep": // sleep DURATION
		d, _ := time.ParseDuration(args[0])
		time.Sleep(d)
		return 0
	case "setsid-sleep": // print setsid's errno, then sleep DURATION
		_, err := syscall.Setsid()
		fmt.Println(int(rawsys.Errno(err)))
		os.Stdout.Sync()
		d, _ := time.ParseDuration(args[0])
		time.Sleep(d)
		return 0
	case "spew": // write N zero bytes to stdout
		n, _ := strconv.Atoi(args[0])
		os.Stdout.Write(make([]byte, n))
		return 0
	}
	if f, ok := childHelpers[mode]; ok {
		return f(args)
	}
	fmt.Fprintln(os.Stderr, "helper: unknown mode", mode)
	return 2
}

// quickExit is the environment of helper targets: a binary built with
// -race otherwise sleeps a second at exit (GORACE's atexit_sleep_ms).
const quickExit = "GORACE=atexit_sleep_ms=0"

// procList reads a NUL-separated list from /proc/self.
func procList(name string) []string {
	b, err := os.ReadFile("/proc/self/" + name)
	if err != nil {
		return []string{"error: " + err.Error()}
	}
	l := strings.Split(string(b), "\x00")
	return l[:len(l)-1] // after the last NUL
}

// self is this test binary, as a target.
func self(t *testing.T) string {
	t.Helper()
	p, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// requireSandbox skips (with the reason) when this kernel cannot sandbox.
func requireSandbox(t *testing.T) {
	t.Helper()
	if st := sandbox.Probe(); !st.Active {
		t.Skipf("sandbox unavailable on this kernel: %s", st.Reason)
	}
}

// need returns the path of a program the test needs, or skips with why.
// Most tests use only /bin/sh, /bin/true, /bin/false and this test binary,
// which the kernel matrix's minimal guests have too.
func need(t *testing.T, path, pkg string) string {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Skipf("%s not installed (Debian package %s): %v", path, pkg, err)
	}
	return path
}

// sleeper returns a command line that sleeps for d: this test binary as a
// helper, so that no coreutils are needed.
func sleeper(t *testing.T, d string) (string, []string) {
	return self(t), []string{helperArg, "sleep", d}
}

// shCfg grants a shell what its scripts below run: this test binary and
// the shell itself, and spawning.
func shCfg(t *testing.T) sandbox.Config {
	return sandbox.Config{AllowProcessSpawn: true, AllowedExecPaths: []string{self(t), "/bin/sh"}}
}

func wrap(t *testing.T, cmd *exec.Cmd, cfg sandbox.Config) {
	t.Helper()
	if err := sandbox.New().WrapCommand(cmd, cfg); err != nil {
		t.Fatalf("WrapCommand: %v", err)
	}
}

func fdID(t *testing.T, f *os.File) string {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Fstat(int(f.Fd()), &st); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%d:%d", st.Dev, st.Ino)
}

func decodeReport(t *testing.T, out []byte) report {
	t.Helper()
	var r report
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("helper output %q: %v", out, err)
	}
	return r
}

// TestWrapPlumbing: the target sees exactly its argv, its environment,
// its directory and its descriptors (0-2 and ExtraFiles at their numbers),
// nothing of the trampoline, and /proc/self is its own PID.
func TestWrapPlumbing(t *testing.T) {
	requireSandbox(t)
	dir := t.TempDir()
	r1, w1, _ := os.Pipe()
	r2, w2, _ := os.Pipe()
	defer func() {
		for _, f := range []*os.File{r1, w1, r2, w2} {
			f.Close()
		}
	}()

	// A descriptor the host leaked without close-on-exec (as C code may)
	// must not reach the target either.
	leakR, leakW, _ := os.Pipe()
	defer leakR.Close()
	defer leakW.Close()
	if _, _, e := syscall.RawSyscall(syscall.SYS_FCNTL, leakR.Fd(), syscall.F_SETFD, 0); e != 0 {
		t.Fatal(e)
	}

	cmd := exec.Command(self(t), helperArg, "report", "an argument", "")
	cmd.Args[0] = "custom-argv0"
	cmd.Env = []string{"A=1", "SPACES=two words", "EMPTY=", quickExit}
	cmd.Dir = dir
	cmd.ExtraFiles = []*os.File{r1, w2}
	wrap(t, cmd, sandbox.Config{AllowedReadPaths: []string{dir}})
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.Bytes())
	}
	r := decodeReport(t, stdout.Bytes())
	if want := []string{"custom-argv0", helperArg, "report", "an argument", ""}; !slices.Equal(r.Args, want) {
		t.Errorf("argv %q, want %q", r.Args, want)
	}
	if want := []string{"A=1", "SPACES=two words", "EMPTY=", quickExit}; !slices.Equal(r.Env, want) {
		t.Errorf("environ %q, want exactly %q", r.Env, want)
	}
	if r.Cwd != dir {
		t.Errorf("cwd %q, want %q", r.Cwd, dir)
	}
	if r.Pid != cmd.Process.Pid || r.ProcSelf != strconv.Itoa(cmd.Process.Pid) {
		t.Errorf("pid %d, /proc/self -> %q; the started process is %d", r.Pid, r.ProcSelf, cmd.Process.Pid)
	}
	var fds []int
	for fd := range r.FDs {
		fds = append(fds, fd)
	}
	slices.Sort(fds)
	if !slices.Equal(fds, []int{0, 1, 2, 3, 4}) {
		t.Errorf("open descriptors %v, want exactly [0 1 2 3 4]: %v", fds, r.FDs)
	}
	if r.FDs[3] != fdID(t, r1) || r.FDs[4] != fdID(t, w2) {
		t.Errorf("ExtraFiles at 3, 4 are %s, %s; want %s, %s", r.FDs[3], r.FDs[4], fdID(t, r1), fdID(t, w2))
	}
}

// TestWrapInheritedEnv: with cmd.Env nil the target gets what exec.Cmd
// would have given it (the parent's environment, PWD for Dir).
func TestWrapInheritedEnv(t *testing.T) {
	requireSandbox(t)
	t.Setenv("SANDBOX_WRAP_INHERITED", "yes")
	t.Setenv("GORACE", "atexit_sleep_ms=0")
	dir := t.TempDir()
	cmd := exec.Command(self(t), helperArg, "report")
	cmd.Dir = dir
	want := cmd.Environ()
	wrap(t, cmd, sandbox.Config{AllowedReadPaths: []string{dir}})
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	r := decodeReport(t, out)
	if !slices.Equal(r.Env, want) {
		t.Errorf("environ differs from cmd.Environ():\n got %q\nwant %q", r.Env, want)
	}
}

// TestWrapReusedEnv: a command whose environment was copied from one
// WrapCommand already rewrote (its child half's marker and payload chunks)
// gets none of those variables: the earlier payload holds another
// target's environment and rules.
func TestWrapReusedEnv(t *testing.T) {
	requireSandbox(t)
	dir := t.TempDir()
	first := exec.Command(self(t), helperArg, "report")
	first.Env = []string{"SECRET_OF_THE_FIRST=1", quickExit}
	wrap(t, first, sandbox.Config{AllowedReadPaths: []string{dir}})
	var reserved int
	for _, kv := range first.Env {
		if strings.HasPrefix(kv, "OPENPARALLAX_SANDBOX_") {
			reserved++
		}
	}
	if reserved < 2 {
		t.Fatalf("the wrapped command's environment has %d reserved variables, want the marker and a chunk: %q", reserved, first.Env)
	}
	cmd := exec.Command(self(t), helperArg, "report")
	cmd.Env = append(slices.Clone(first.Env), "B=2")
	wrap(t, cmd, sandbox.Config{AllowedReadPaths: []string{dir}})
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	if r := decodeReport(t, out); !slices.Equal(r.Env, []string{"B=2"}) {
		t.Errorf("environ %q, want exactly [B=2]", r.Env)
	}
}

// TestWrapLargeEnviron: the target gets its environment intact whatever
// its size: a payload of one chunk that fits the helper's static buffer,
// and one of several chunks that needs memory from mmap (the helper
// decodes both; see internal/spawnhelper/c/helper.c).
func TestWrapLargeEnviron(t *testing.T) {
	requireSandbox(t)
	for _, size := range []int{20 << 10, 400 << 10} {
		t.Run(strconv.Itoa(size>>10)+"KiB", func(t *testing.T) {
			cmd := exec.Command(self(t), helperArg, "report")
			cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
			// Values of every ASCII byte but NUL (the report is JSON,
			// which would replace invalid UTF-8), in variables below
			// the kernel's 128 KiB per string.
			for i := 0; size > 0; i++ {
				n := min(size, 100<<10)
				v := make([]byte, n)
				for j := range v {
					v[j] = byte(1 + (i*7+j)%127)
					if v[j] == '=' {
						v[j] = '+'
					}
				}
				cmd.Env = append(cmd.Env, "SANDBOX_BIG"+strconv.Itoa(i)+"="+string(v))
				size -= n
			}
			want := cmd.Environ()
			wrap(t, cmd, sandbox.Config{})
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			if r := decodeReport(t, out); !slices.Equal(r.Env, want) {
				t.Errorf("environ differs from cmd.Environ() (%d variables, want %d)", len(r.Env), len(want))
			}
		})
	}
}

// TestRunPlumbing: under Run, the environment is only what was passed
// (nothing when nil), and the failure pipe is not among the descriptors.
func TestRunPlumbing(t *testing.T) {
	requireSandbox(t)
	for _, env := range [][]string{nil, {quickExit}} {
		res, err := sandbox.Run(context.Background(), sandbox.Config{}, self(t), []string{helperArg, "report"}, sandbox.RunOptions{Env: env})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("Run: %v, %+v", err, res)
		}
		r := decodeReport(t, res.Stdout)
		// Run adds its private temporary directory and a home in it.
		var tmp string
		if n := len(r.Env); n == len(env)+5 {
			_, tmp, _ = strings.Cut(r.Env[len(env)], "=")
		}
		want := append(slices.Clone(env), "TMPDIR="+tmp, "TMP="+tmp, "TEMP="+tmp, "GOTMPDIR="+tmp, "HOME="+filepath.Join(filepath.Dir(tmp), "home"))
		if tmp == "" || !slices.Equal(r.Env, want) {
			t.Errorf("environ %q, want exactly %q", r.Env, want)
		}
		if _, err := os.Stat(filepath.Dir(tmp)); tmp != "" && !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("the run's temporary directory %s is still there: %v", filepath.Dir(tmp), err)
		}
		if len(r.FDs) != 3 {
			t.Errorf("descriptors %v, want only 0, 1, 2", r.FDs)
		}
		if r.Args[0] != self(t) || r.Args[1] != helperArg {
			t.Errorf("argv %q", r.Args)
		}
	}
}

// fsFiles makes a workspace with a readable file and a secret outside.
func fsFiles(t *testing.T) (ws, allowed, secret string) {
	t.Helper()
	base := hostDir(t)
	ws = filepath.Join(base, "ws")
	if err := os.Mkdir(ws, 0o777); err != nil {
		t.Fatal(err)
	}
	allowed = filepath.Join(ws, "allowed.txt")
	secret = filepath.Join(base, "secret.txt")
	os.WriteFile(allowed, []byte("allowed content\n"), 0o644)
	os.WriteFile(secret, []byte("secret content\n"), 0o644)
	return ws, allowed, secret
}

// hostDir is a t.TempDir outside /tmp and /dev/shm, which the mount layer
// (used by default under WrapCommand and Run) replaces with private ones:
// for a test whose files outside the grants must stay visible to the
// target, so that what refuses them is Landlock (EACCES), not their
// absence (ENOENT). It and its parent can be searched by every user.
func hostDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp(pick(dirExists("/var/tmp"), "/var/tmp", "/"), "sandbox-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	return dir
}

func TestWrapCatOutsideDenied(t *testing.T) {
	requireSandbox(t)
	cat := need(t, "/bin/cat", "coreutils")
	ws, allowed, secret := fsFiles(t)
	cmd := exec.Command(cat, allowed, secret)
	wrap(t, cmd, sandbox.Config{AllowedReadPaths: []string{ws}})
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("cat: %v, want exit status 1", err)
	}
	if stdout.String() != "allowed content\n" {
		t.Errorf("stdout %q", stdout.String())
	}
	if want := "/bin/cat: " + secret + ": Permission denied\n"; stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
}

// TestWrapFileReplacedByDirectory: a file granted to the target and replaced
// by a directory between WrapCommand and Start must not lend its file
// rights to the directory, which would let the target read everything in
// it.
func TestWrapFileReplacedByDirectory(t *testing.T) {
	requireSandbox(t)
	cat := need(t, "/bin/cat", "coreutils")
	dir := hostDir(t)
	granted := filepath.Join(dir, "granted")
	if err := os.WriteFile(granted, []byte("a file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	inside := filepath.Join(granted, "secret.txt")
	cmd := exec.Command(cat, inside)
	wrap(t, cmd, sandbox.Config{AllowedReadPaths: []string{granted}})
	if err := os.Remove(granted); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(granted, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(inside, []byte("secret content\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	catDenied(t, cmd, cat, inside, "a file inside the replaced path")
}

// catDenied runs cmd, cat of path, and checks that cat read nothing and
// failed on path with "Permission denied".
func catDenied(t *testing.T, cmd *exec.Cmd, cat, path, what string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || stdout.Len() != 0 {
		t.Errorf("cat of %s: %v, stdout %q; want exit status 1 and nothing read", what, err, stdout.String())
	}
	if want := cat + ": " + path + ": Permission denied\n"; stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}
}

// TestWrapDirectoryReplacedByFile: a directory granted at WrapCommand and
// replaced by a file before Start gets no rule (the kernel would refuse
// directory rights on a file): the target starts, and cannot read the file.
func TestWrapDirectoryReplacedByFile(t *testing.T) {
	requireSandbox(t)
	cat := need(t, "/bin/cat", "coreutils")
	granted := filepath.Join(hostDir(t), "granted")
	if err := os.Mkdir(granted, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(cat, granted)
	wrap(t, cmd, sandbox.Config{AllowedReadPaths: []string{granted}})
	if err := os.Remove(granted); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(granted, []byte("secret content\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	catDenied(t, cmd, cat, granted, "the file that replaced the directory")
}

// TestWrapRuleParentReplacedByFile: a granted path whose parent directory
// became a file before Start names nothing (ENOTDIR): its rule is skipped,
// like a removed path's, and the target still starts.
func TestWrapRuleParentReplacedByFile(t *testing.T) {
	requireSandbox(t)
	cat := need(t, "/bin/cat", "coreutils")
	parent := filepath.Join(hostDir(t), "parent")
	if err := os.MkdirAll(filepath.Join(parent, "granted"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(cat, "/dev/null")
	wrap(t, cmd, sandbox.Config{AllowedReadPaths: []string{filepath.Join(parent, "granted")}})
	if err := os.RemoveAll(parent); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(parent, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("target: %v, output %q; want it to start and exit 0", err, out)
	}
}

// TestWrapReadOutsideErrno: the exact errno, from a Go target.
func TestWrapReadOutsideErrno(t *testing.T) {
	requireSandbox(t)
	ws, allowed, secret := fsFiles(t)
	res, err := sandbox.Run(context.Background(), sandbox.Config{AllowedReadPaths: []string{ws}}, self(t),
		[]string{helperArg, "read", allowed, secret, "/etc/passwd"}, sandbox.RunOptions{Env: []string{quickExit}})
	if err != nil {
		t.Fatal(err)
	}
	// /etc/passwd may be missing (a minimal guest): ENOENT is allowed
	// there, since the sandbox's answer would have been EACCES.
	want := fmt.Sprintf("%s 0\n%s %d\n/etc/passwd %d\n", allowed, secret, syscall.EACCES, syscall.EACCES)
	if _, err := os.Stat("/etc/passwd"); err != nil {
		want = fmt.Sprintf("%s 0\n%s %d\n/etc/passwd %d\n", allowed, secret, syscall.EACCES, syscall.ENOENT)
	}
	if string(res.Stdout) != want {
		t.Errorf("helper read errnos:\n%s\nwant\n%s", res.Stdout, want)
	}
}

func TestWrapSpawn(t *testing.T) {
	requireSandbox(t)
	ctx := context.Background()
	sh := []string{"-c", "/bin/true && echo child ran"}
	for _, spawn := range []bool{false, true} {
		cfg := sandbox.Config{AllowProcessSpawn: spawn, AllowedExecPaths: []string{"/bin/true"}}
		res, err := sandbox.Run(ctx, cfg, "/bin/sh", sh, sandbox.RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if spawn && (res.ExitCode != 0 || string(res.Stdout) != "child ran\n") {
			t.Errorf("spawn allowed: %+v (stderr %q)", res, res.Stderr)
		}
		if !spawn && (res.ExitCode == 0 || !strings.Contains(string(res.Stderr), "Cannot fork")) {
			t.Errorf("spawn denied: exit %d, stderr %q; want a failed fork", res.ExitCode, res.Stderr)
		}
		res, err = sandbox.Run(ctx, cfg, self(t), []string{helperArg, "fork"}, sandbox.RunOptions{Env: []string{quickExit}})
		if err != nil {
			t.Fatal(err)
		}
		want := "0\n"
		if !spawn {
			want = strconv.Itoa(int(syscall.EPERM)) + "\n"
		}
		if string(res.Stdout) != want {
			t.Errorf("fork errno with spawn %v: %q, want %q (stderr %q)", spawn, res.Stdout, want, res.Stderr)
		}
	}
}

// TestWrapExecAllowlist: without spawn, a further execve follows the
// allowlist: the target itself, its interpreter and AllowedExecPaths.
func TestWrapExecAllowlist(t *testing.T) {
	requireSandbox(t)
	cfg := sandbox.Config{AllowedExecPaths: []string{"/bin/true"}}
	res, err := sandbox.Run(context.Background(), cfg, "/bin/sh", []string{"-c", "exec /bin/true"}, sandbox.RunOptions{})
	if err != nil || res.ExitCode != 0 {
		t.Errorf("exec of an allowed program: %v %+v", err, res)
	}
	res, err = sandbox.Run(context.Background(), cfg, "/bin/sh", []string{"-c", "exec /bin/false"}, sandbox.RunOptions{})
	if err != nil || res.ExitCode == 0 || !strings.Contains(string(res.Stderr), "Permission denied") {
		t.Errorf("exec outside the allowlist: %v, exit %d, stderr %q", err, res.ExitCode, res.Stderr)
	}
	// A script target: its "#!" interpreter is granted with it.
	script := filepath.Join(t.TempDir(), "script")
	os.WriteFile(script, []byte("#!/bin/sh\necho script ran\n"), 0o755)
	res, err = sandbox.Run(context.Background(), sandbox.Config{}, script, nil, sandbox.RunOptions{})
	if err != nil || res.ExitCode != 0 || string(res.Stdout) != "script ran\n" {
		t.Errorf("script target: %v, exit %d, stdout %q, stderr %q", err, res.ExitCode, res.Stdout, res.Stderr)
	}
}

func TestWrapStdioPipes(t *testing.T) {
	requireSandbox(t)
	cmd := exec.Command("/bin/sh", "-c", `while IFS= read -r l; do echo "$l"; done`)
	wrap(t, cmd, sandbox.Config{})
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		io.WriteString(in, "through the sandbox\n")
		in.Close()
	}()
	b, _ := io.ReadAll(out)
	if err := cmd.Wait(); err != nil || string(b) != "through the sandbox\n" {
		t.Errorf("echo through pipes: %q, %v", b, err)
	}
}

func TestWrapCommandContext(t *testing.T) {
	requireSandbox(t)
	ctx, cancel := context.WithCancel(context.Background())
	name, args := sleeper(t, "100s")
	cmd := exec.CommandContext(ctx, name, args...)
	wrap(t, cmd, sandbox.Config{})
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	cancel()
	err := cmd.Wait()
	if err == nil || time.Since(start) > 5*time.Second {
		t.Errorf("cancelled sleep: %v after %v", err, time.Since(start))
	}
	if alive(cmd.Process.Pid) {
		t.Errorf("pid %d still alive after cancellation", cmd.Process.Pid)
	}
}

func TestWrapErrors(t *testing.T) {
	requireSandbox(t)
	sb := sandbox.New()

	// A bad Config fails at WrapCommand and again at Start.
	cmd := exec.Command("/bin/true")
	err := sb.WrapCommand(cmd, sandbox.Config{AllowedReadPaths: []string{"relative"}})
	if !errors.Is(err, sandbox.ErrInvalidConfig) {
		t.Errorf("bad config: %v, want ErrInvalidConfig", err)
	}
	if err := cmd.Start(); !errors.Is(err, sandbox.ErrInvalidConfig) {
		t.Errorf("Start after a failed WrapCommand: %v, want the same error (never an unconfined start)", err)
	}

	cmd = exec.Command("/nonexistent/program")
	if err := sb.WrapCommand(cmd, sandbox.Config{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing target: %v, want fs.ErrNotExist", err)
	}
	cmd = exec.Command("no-such-program-in-path")
	if err := sb.WrapCommand(cmd, sandbox.Config{}); !errors.Is(err, exec.ErrNotFound) {
		t.Errorf("target not in PATH: %v, want exec.ErrNotFound", err)
	}
	plain := filepath.Join(t.TempDir(), "plain")
	os.WriteFile(plain, nil, 0o644)
	cmd = exec.Command(plain)
	if err := sb.WrapCommand(cmd, sandbox.Config{}); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("non-executable target: %v, want a permission error", err)
	}
	cmd = exec.Command("/usr")
	if err := sb.WrapCommand(cmd, sandbox.Config{}); err == nil {
		t.Error("directory target accepted")
	}
	cmd = exec.Command("/bin/true")
	wrap(t, cmd, sandbox.Config{})
	if err := sb.WrapCommand(cmd, sandbox.Config{}); err == nil {
		t.Error("wrapping twice accepted")
	}
	cmd = exec.Command("/bin/true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: "/"}
	if err := sb.WrapCommand(cmd, sandbox.Config{}); err == nil {
		t.Error("Chroot accepted")
	}
	cmd = exec.Command("/bin/true")
	cmd.Env = []string{"BAD=\x00"}
	if err := sb.WrapCommand(cmd, sandbox.Config{}); err == nil {
		t.Error("NUL in the environment accepted")
	}
	if err := sb.WrapCommand(nil, sandbox.Config{}); err == nil {
		t.Error("nil cmd accepted")
	}
	cmd = exec.Command("/bin/true")
	cmd.Run()
	if err := sb.WrapCommand(cmd, sandbox.Config{}); err == nil {
		t.Error("started cmd accepted")
	}
	// Run refuses the same, before starting anything.
	if _, err := sandbox.Run(context.Background(), sandbox.Config{AllowedWritePaths: []string{"/nonexistent-sandbox"}}, "/bin/true", nil, sandbox.RunOptions{}); !errors.Is(err, sandbox.ErrInvalidConfig) {
		t.Errorf("Run with a bad config: %v", err)
	}
	if _, err := sandbox.Run(context.Background(), sandbox.Config{}, "/nonexistent/program", nil, sandbox.RunOptions{}); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Run of a missing program: %v", err)
	}
}

// TestWrapTrampolineFailure: what fails only in the child (here a script
// whose interpreter is missing) stops it before the target runs, with the
// documented status and message, and Run returns the reason.
func TestWrapTrampolineFailure(t *testing.T) {
	requireSandbox(t)
	script := filepath.Join(t.TempDir(), "script")
	if err := os.WriteFile(script, []byte("#!/nonexistent/interpreter\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(script)
	wrap(t, cmd, sandbox.Config{})
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 127 {
		t.Errorf("wrapped script with a missing interpreter: %v, want exit status 127", err)
	}
	if want := "sandbox: cannot start " + script + ": execve " + script + ": no such file or directory\n"; stderr.String() != want {
		t.Errorf("stderr %q, want %q", stderr.String(), want)
	}

	res, err := sandbox.Run(context.Background(), sandbox.Config{}, script, nil, sandbox.RunOptions{})
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(fmt.Sprint(err), "cannot start "+script) {
		t.Errorf("Run: %v, want a start error wrapping ENOENT", err)
	}
	if res.ExitCode != -1 || len(res.Stderr) != 0 {
		t.Errorf("Run result %+v: want exit code -1 and no trampoline output", res)
	}

	// Made non-executable between WrapCommand and Start.
	prog := filepath.Join(t.TempDir(), "prog")
	copyFile(t, "/bin/true", prog)
	cmd = exec.Command(prog)
	wrap(t, cmd, sandbox.Config{})
	os.Chmod(prog, 0o644)
	cmd.Stderr = &stderr
	stderr.Reset()
	if err := cmd.Run(); !errors.As(err, &ee) || ee.ExitCode() != 126 {
		t.Errorf("target made non-executable: %v, want exit status 126 (stderr %q)", err, stderr.String())
	}
}

// TestWrapCmdChangedAfterWrap: replacing Args or Env after WrapCommand
// never runs the host program (this test binary) in the child.
func TestWrapCmdChangedAfterWrap(t *testing.T) {
	requireSandbox(t)
	cmd := exec.Command("/bin/true")
	wrap(t, cmd, sandbox.Config{})
	cmd.Env = nil
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 125 || !strings.Contains(string(out), "without its environment") {
		t.Errorf("Env replaced: %v, %q; want exit 125 and a message", err, out)
	}

	cmd = exec.Command("/bin/true")
	wrap(t, cmd, sandbox.Config{})
	cmd.Args = []string{"true"}
	out, err = cmd.CombinedOutput()
	if !errors.As(err, &ee) || ee.ExitCode() != 125 || !strings.Contains(string(out), "argv[0]") {
		t.Errorf("Args replaced: %v, %q; want exit 125 and a message", err, out)
	}

	cmd = exec.Command("/bin/sh", "-c", `echo "$@"`, "sh", "one")
	wrap(t, cmd, sandbox.Config{})
	cmd.Args = append(cmd.Args, "two")
	if out, err := cmd.Output(); err != nil || string(out) != "one two\n" {
		t.Errorf("argument appended after WrapCommand: %q, %v", out, err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

func TestRunShellPipeline(t *testing.T) {
	requireSandbox(t)
	for _, p := range []string{"/usr/bin/cat", "/usr/bin/tr", "/usr/bin/wc"} {
		need(t, p, "coreutils")
	}
	ws, allowed, secret := fsFiles(t)
	cfg := sandbox.Config{
		AllowedReadPaths:  []string{ws},
		AllowedExecPaths:  []string{"/usr/bin"}, // the pipeline's programs (/bin is a link to it on merged-/usr systems)
		AllowProcessSpawn: true,                 // a pipeline forks
	}
	script := `cat "$1" | tr a-z A-Z | wc -c; cat "$2" | wc -c; echo status=$?`
	res, err := sandbox.Run(context.Background(), cfg, "/bin/sh", []string{"-c", script, "sh", allowed, secret},
		sandbox.RunOptions{Env: []string{"PATH=/usr/bin:/bin"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "16\n0\nstatus=0\n"; string(res.Stdout) != want || res.ExitCode != 0 {
		t.Errorf("pipeline: exit %d, stdout %q, want %q", res.ExitCode, res.Stdout, want)
	}
	if !strings.Contains(string(res.Stderr), secret+": Permission denied") {
		t.Errorf("stderr %q: want cat's Permission denied for the secret", res.Stderr)
	}
}

// TestRunGit runs git init, add and commit inside a write directory.
func TestRunGit(t *testing.T) {
	requireSandbox(t)
	git := need(t, "/usr/bin/git", "git")
	ws := t.TempDir()
	home := filepath.Join(ws, "home")
	repo := filepath.Join(ws, "repo")
	os.Mkdir(home, 0o755)
	os.Mkdir(repo, 0o755)
	os.WriteFile(filepath.Join(home, ".gitconfig"), []byte("[user]\n\tname = Sandbox Test\n\temail = test@example.invalid\n[init]\n\tdefaultBranch = main\n"), 0o644)
	os.WriteFile(filepath.Join(repo, "file.txt"), []byte("hello\n"), 0o644)

	var readPaths []string
	for _, p := range []string{"/usr/share/git-core"} {
		// git init copies its templates from here.
		if _, err := os.Stat(p); err == nil {
			readPaths = append(readPaths, p)
		}
	}
	cfg := sandbox.Config{
		AllowedWritePaths: []string{ws},                       // the repository, and HOME with .gitconfig
		AllowedReadPaths:  readPaths,                          // templates
		AllowedExecPaths:  []string{git, "/usr/lib/git-core"}, // git's own helpers live in git-core
		// git runs sub-commands (e.g. "gc --auto" after a commit) as child
		// processes.
		AllowProcessSpawn: true,
	}
	env := []string{"HOME=" + home, "PATH=/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM=1", "LC_ALL=C"}
	for _, args := range [][]string{
		{"init", "-q"},
		{"add", "file.txt"},
		{"commit", "-q", "-m", "first commit"},
		{"log", "--format=%s by %an"},
	} {
		res, err := sandbox.Run(context.Background(), cfg, git, args, sandbox.RunOptions{Dir: repo, Env: env, Timeout: 30 * time.Second})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("git %s: %v, exit %d\nstdout %s\nstderr %s", args[0], err, res.ExitCode, res.Stdout, res.Stderr)
		}
		if args[0] == "log" && string(res.Stdout) != "first commit by Sandbox Test\n" {
			t.Errorf("git log: %q", res.Stdout)
		}
	}
	// A repository outside the write path, which git reads without the
	// sandbox, is out of its reach.
	outside := filepath.Join(t.TempDir(), "outside")
	if out, err := exec.Command(git, "init", "-q", outside).CombinedOutput(); err != nil {
		t.Fatalf("git init outside the sandbox: %v %s", err, out)
	}
	res, _ := sandbox.Run(context.Background(), cfg, git, []string{"-C", outside, "status"}, sandbox.RunOptions{Env: env})
	// (git reports an unreadable .git as "not a git repository".)
	if res.ExitCode == 0 {
		t.Errorf("git status of a repository outside the sandbox succeeded: %s", res.Stdout)
	}
}

func TestRunPython(t *testing.T) {
	requireSandbox(t)
	py := need(t, "/usr/bin/python3", "python3")
	ws, allowed, secret := fsFiles(t)
	code := `import sys
print(open(sys.argv[1]).read(), end="")
try:
    open(sys.argv[2]).read()
except PermissionError as e:
    print("denied:", e.errno, e.strerror)
    sys.exit(3)
print("read the secret")`
	res, err := sandbox.Run(context.Background(), sandbox.Config{AllowedReadPaths: []string{ws}}, py,
		[]string{"-c", code, allowed, secret}, sandbox.RunOptions{Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("allowed content\ndenied: %d Permission denied\n", syscall.EACCES)
	if res.ExitCode != 3 || string(res.Stdout) != want {
		t.Errorf("python: exit %d, stdout %q, want 3 and %q (stderr %q)", res.ExitCode, res.Stdout, want, res.Stderr)
	}
	// Uncaught, the error is Python's own PermissionError.
	res, _ = sandbox.Run(context.Background(), sandbox.Config{}, py, []string{"-c", "open('/etc/passwd')"}, sandbox.RunOptions{})
	if res.ExitCode != 1 || !strings.Contains(string(res.Stderr), "PermissionError: [Errno 13] Permission denied: '/etc/passwd'") {
		t.Errorf("python uncaught: exit %d, stderr %q", res.ExitCode, res.Stderr)
	}
}

// alive reports whether pid is a live process (not a zombie).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i > 0 && i+2 < len(b) && b[i+2] != 'Z' && b[i+2] != 'X'
}

func pids(t *testing.T, out []byte) []int {
	t.Helper()
	var ps []int
	for _, f := range strings.Fields(string(out)) {
		p, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("not a pid: %q in %q", f, out)
		}
		ps = append(ps, p)
	}
	if len(ps) == 0 {
		t.Fatal("no pids reported")
	}
	return ps
}

// TestRunTimeoutKillsTree: on timeout the program and a grandchild that
// would outlive it are killed, and Run returns only then. The tree's
// processes are found by a marker in their environment: the PIDs the
// program sees are its PID namespace's where Run gives it one.
func TestRunTimeoutKillsTree(t *testing.T) {
	requireSandbox(t)
	mark := "SANDBOX_TIMEOUT_TREE_TEST=" + strconv.Itoa(os.Getpid())
	start := time.Now()
	res, err := sandbox.Run(context.Background(), shCfg(t), "/bin/sh",
		[]string{"-c", `"$0" ` + helperArg + ` sleep 100s & echo $! $$; "$0" ` + helperArg + ` sleep 100s`, self(t)},
		sandbox.RunOptions{Timeout: 300 * time.Millisecond, Env: []string{mark}})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err %v, want DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("Run took %v", d)
	}
	if res.ExitCode != -1 || res.State != "signal: killed" {
		t.Errorf("result %+v: want killed", res)
	}
	if len(pids(t, res.Stdout)) != 2 {
		t.Errorf("the grandchild did not start: %q", res.Stdout)
	}
	for _, pid := range marked(mark) {
		t.Errorf("pid %d left running after the timeout", pid)
		killStray(pid)
	}
}

// TestRunKillsOrphans: a grandchild that outlives the program, even one
// that tries to leave the session, is killed when the program exits.
func TestRunKillsOrphans(t *testing.T) {
	requireSandbox(t)
	// Each background helper prints its pid (via the shell) ; the
	// setsid-sleep one also prints setsid's errno. The wait lets it call
	// setsid before the program exits.
	h := `"$0" ` + helperArg
	script := h + ` sleep 100s & echo $!; ` + h + ` setsid-sleep 100s > "$1" & echo $!; (` + h + ` sleep 100s & echo $!); ` +
		`while [ ! -s "$1" ]; do :; done; exit 0`
	errnoFile := filepath.Join(t.TempDir(), "setsid")
	cfg := shCfg(t)
	cfg.AllowedWritePaths = []string{filepath.Dir(errnoFile)}
	mark := "SANDBOX_ORPHANS_TEST=" + strconv.Itoa(os.Getpid())
	res, err := sandbox.Run(context.Background(), cfg, "/bin/sh", []string{"-c", script, self(t), errnoFile},
		sandbox.RunOptions{Timeout: 20 * time.Second, Env: []string{mark}})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("Run: %v %+v", err, res)
	}
	if len(pids(t, res.Stdout)) != 3 {
		t.Errorf("the grandchildren did not start: %q", res.Stdout)
	}
	// By marker: the PIDs printed are the namespace's where Run gives
	// the program a PID namespace.
	for _, pid := range marked(mark) {
		t.Errorf("pid %d outlived Run", pid)
		killStray(pid)
	}
	if b, _ := os.ReadFile(errnoFile); strings.TrimSpace(string(b)) != strconv.Itoa(int(syscall.EPERM)) {
		t.Errorf("setsid in the sandbox: errno %q, want EPERM", b)
	}
}

func TestRunCancel(t *testing.T) {
	requireSandbox(t)
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(200*time.Millisecond, cancel)
	name, args := sleeper(t, "100s")
	res, err := sandbox.Run(ctx, sandbox.Config{}, name, args, sandbox.RunOptions{})
	if !errors.Is(err, context.Canceled) || res.ExitCode != -1 {
		t.Errorf("cancelled Run: %v %+v", err, res)
	}
	if _, err := sandbox.Run(ctx, sandbox.Config{}, "/bin/true", nil, sandbox.RunOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Run with a done context: %v", err)
	}
}

// TestRunPdeathsig: when the process that called Run dies, the program dies
// with it.
func TestRunPdeathsig(t *testing.T) {
	requireSandbox(t)
	if os.Getenv("SANDBOX_PDEATH_DIR") != "" {
		// The middle process: Run a program that records its pid, then
		// wait to be killed.
		dir := os.Getenv("SANDBOX_PDEATH_DIR")
		sandbox.Run(context.Background(), sandbox.Config{AllowedWritePaths: []string{dir}, AllowedExecPaths: []string{self(t)}},
			"/bin/sh", []string{"-c", `echo $$ > "$0"/pid && exec "$1" ` + helperArg + ` sleep 100s`, dir, self(t)}, sandbox.RunOptions{})
		return
	}
	dir := t.TempDir()
	mid := exec.Command(os.Args[0], "-test.run=^TestRunPdeathsig$", "-test.count=1")
	mid.Env = append(os.Environ(), "SANDBOX_PDEATH_DIR="+dir)
	if err := mid.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	for deadline := time.Now().Add(20 * time.Second); pid == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			mid.Process.Kill()
			t.Fatal("the program never wrote its pid")
		}
		b, err := os.ReadFile(filepath.Join(dir, "pid"))
		if err == nil {
			pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
	}
	if !alive(pid) {
		t.Fatalf("pid %d not running before its parent died", pid)
	}
	mid.Process.Kill()
	mid.Wait()
	for deadline := time.Now().Add(5 * time.Second); alive(pid); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("pid %d survived the death of the process that ran it", pid)
		}
	}
}

func TestRunOutputCap(t *testing.T) {
	requireSandbox(t)
	res, err := sandbox.Run(context.Background(), sandbox.Config{}, self(t), []string{helperArg, "spew", "1000000"},
		sandbox.RunOptions{MaxOutput: 64 << 10, Env: []string{quickExit}})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("Run: %v %+v", err, res.State)
	}
	if len(res.Stdout) != 64<<10 || !res.StdoutTruncated || res.StderrTruncated {
		t.Errorf("kept %d bytes, truncated %v/%v; want %d, true/false", len(res.Stdout), res.StdoutTruncated, res.StderrTruncated, 64<<10)
	}
	res, _ = sandbox.Run(context.Background(), sandbox.Config{}, "/bin/sh", []string{"-c", "echo short"}, sandbox.RunOptions{MaxOutput: 64 << 10})
	if string(res.Stdout) != "short\n" || res.StdoutTruncated {
		t.Errorf("short output: %q truncated=%v", res.Stdout, res.StdoutTruncated)
	}
	if _, err := sandbox.Run(context.Background(), sandbox.Config{}, "/bin/true", nil, sandbox.RunOptions{MaxOutput: -1}); err == nil {
		t.Error("negative MaxOutput accepted")
	}
}

func TestRunStdinAndDir(t *testing.T) {
	requireSandbox(t)
	ws, _, _ := fsFiles(t)
	cfg := shCfg(t)
	cfg.AllowedWritePaths = []string{ws}
	res, err := sandbox.Run(context.Background(), cfg, "/bin/sh",
		[]string{"-c", `while IFS= read -r l; do echo "$l"; done > copy && while IFS= read -r l; do echo "$l"; done < copy && pwd`},
		sandbox.RunOptions{Dir: ws, Stdin: strings.NewReader("from stdin\n")})
	if err != nil || string(res.Stdout) != "from stdin\n"+ws+"\n" {
		t.Errorf("stdin and dir: %v, %q (stderr %q)", err, res.Stdout, res.Stderr)
	}
}

// TestRunConcurrent: 50 Runs at once all succeed and leave nothing (found
// by a marker in the environment: the PIDs a program sees are its PID
// namespace's where Run gives it one).
func TestRunConcurrent(t *testing.T) {
	requireSandbox(t)
	mark := "SANDBOX_CONCURRENT_TEST=" + strconv.Itoa(os.Getpid())
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			res, err := sandbox.Run(context.Background(), shCfg(t), "/bin/sh",
				[]string{"-c", `echo $$; "$0" ` + helperArg + ` sleep 100s & echo $!; echo ` + strconv.Itoa(i), self(t)},
				sandbox.RunOptions{Timeout: 60 * time.Second, Env: []string{mark}})
			if err != nil || res.ExitCode != 0 {
				t.Errorf("run %d: %v %+v", i, err, res)
				return
			}
			if f := strings.Fields(string(res.Stdout)); len(f) != 3 || f[2] != strconv.Itoa(i) {
				t.Errorf("run %d: stdout %q", i, res.Stdout)
			}
		})
	}
	wg.Wait()
	for _, pid := range marked(mark) {
		t.Errorf("pid %d left running", pid)
		killStray(pid)
	}
}

// TestRunPdeathsigThreads: Pdeathsig fires when the OS thread that started
// the child exits, and Go destroys a thread when a goroutine locked to it
// exits. Run keeps the starting thread for itself until the child is
// reaped, so threads dying around it never kill its program.
func TestRunPdeathsigThreads(t *testing.T) {
	requireSandbox(t)
	stop := make(chan struct{})
	var churn sync.WaitGroup
	for range 2 {
		churn.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				done := make(chan bool)
				go func() {
					runtime.LockOSThread() // exits locked: its thread is destroyed
					done <- true
				}()
				<-done
			}
		})
	}
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			name, args := sleeper(t, "300ms")
			res, err := sandbox.Run(context.Background(), sandbox.Config{}, name, args, sandbox.RunOptions{Env: []string{quickExit}})
			if err != nil || res.ExitCode != 0 {
				t.Errorf("run %d: %v, %s (a thread's death killed the program?)", i, err, res.State)
			}
		})
	}
	wg.Wait()
	close(stop)
	churn.Wait()
}

// ExampleRun runs an untrusted program confined to a workspace. (No Output
// line: the example needs a kernel with Landlock; the tests above run the
// same calls and check them.)
func ExampleRun() {
	workspace := os.TempDir()
	cfg := sandbox.Config{AllowedWritePaths: []string{workspace}}
	res, err := sandbox.Run(context.Background(), cfg, "/bin/cat", []string{"/etc/passwd"},
		sandbox.RunOptions{Dir: workspace, Timeout: 10 * time.Second, MaxOutput: 1 << 20})
	if err != nil {
		fmt.Println("not run:", err) // bad config, no sandbox here, not startable, timeout
		return
	}
	fmt.Printf("exit %d: %s", res.ExitCode, res.Stderr)
	// exit 1: /bin/cat: /etc/passwd: Permission denied
}

// ExampleSandbox_WrapCommand starts a long-running program (an agent)
// confined from its first instruction, with the caller's own pipes.
func ExampleSandbox_WrapCommand() {
	cmd := exec.Command("/bin/cat")
	cmd.Env = []string{"LANG=C.UTF-8"}
	if err := sandbox.New().WrapCommand(cmd, sandbox.Config{}); err != nil {
		fmt.Println("cannot confine:", err) // cmd.Start would fail too
		return
	}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		fmt.Println(err)
		return
	}
	io.WriteString(stdin, "hello\n")
	stdin.Close()
	out, _ := io.ReadAll(stdout)
	fmt.Printf("%s", out)
	if err := cmd.Wait(); err != nil {
		// exit status 125-127 with "sandbox: cannot start ..." on stderr
		// when the trampoline could not start cat.
		fmt.Println(err)
	}
}
