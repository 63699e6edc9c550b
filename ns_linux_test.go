//go:build linux

package sandbox_test

// The mount-namespace layer under WrapCommand and Run: real enforcement in
// the target (this test binary as the "fsop" helper, which performs file
// operations and prints their errno, and real programs), as root and as
// nobody (the test binary re-executed as nobody, so that the sandbox
// creates a user namespace, as for any unprivileged caller).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/openparallax/sandbox"
	"github.com/openparallax/sandbox/internal/childtest"
	"github.com/openparallax/sandbox/internal/rawsys"
)

func init() {
	childHelpers["fsop"] = fsopHelper
}

// fsopHelper performs each operation "op:path[:path2]" and prints
// "op:path errno" (0 for success).
func fsopHelper(args []string) int {
	for _, a := range args {
		parts := strings.Split(a, ":")
		op, p := parts[0], parts[1]
		var err error
		switch op {
		case "write": // create or truncate, and write
			err = os.WriteFile(p, []byte("x\n"), 0o644)
		case "append":
			var f *os.File
			if f, err = os.OpenFile(p, os.O_WRONLY|os.O_APPEND, 0); err == nil {
				_, err = f.WriteString("x\n")
				f.Close()
			}
		case "read":
			_, err = os.ReadFile(p)
		case "ls":
			_, err = os.ReadDir(p)
		case "mkdir":
			err = os.Mkdir(p, 0o755)
		case "rename":
			err = os.Rename(p, parts[2])
		case "remove":
			err = os.Remove(p)
		case "chmod":
			err = os.Chmod(p, 0o644)
		case "utimes": // now, by path
			err = unix.UtimesNanoAt(unix.AT_FDCWD, p, nil, 0)
		case "fsetxattr": // through a read-only descriptor
			var f *os.File
			if f, err = os.Open(p); err == nil {
				err = unix.Fsetxattr(int(f.Fd()), "user.sandbox-test", []byte("x"), 0)
				f.Close()
			}
		case "fchmod-fd": // p is a descriptor number: fchmod to the mode it has
			var fd int
			fmt.Sscan(p, &fd)
			var st unix.Stat_t
			if err = unix.Fstat(fd, &st); err == nil {
				err = unix.Fchmod(fd, st.Mode&0o7777)
			}
		case "isfifo": // p is a descriptor number: EINVAL unless a pipe
			var fd int
			fmt.Sscan(p, &fd)
			var st unix.Stat_t
			if err = unix.Fstat(fd, &st); err == nil && st.Mode&unix.S_IFMT != unix.S_IFIFO {
				err = syscall.EINVAL
			}
		case "futimens-fd":
			var fd int
			fmt.Sscan(p, &fd)
			if _, _, e := unix.Syscall6(unix.SYS_UTIMENSAT, uintptr(fd), 0, 0, 0, 0, 0); e != 0 { // futimens(fd, NULL)
				err = e
			}
		case "exec":
			err = syscall.Exec(p, []string{p}, nil)
		case "umount":
			err = unix.Unmount(p, unix.MNT_DETACH)
		case "mountover":
			err = unix.Mount("tmpfs", p, "tmpfs", 0, "")
		case "remount-rw":
			err = unix.Mount("", p, "", unix.MS_REMOUNT|unix.MS_BIND, "")
		case "setattr-rw":
			err = unix.MountSetattr(unix.AT_FDCWD, p, 0, &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY})
		case "opentree":
			var fd int
			if fd, err = unix.OpenTree(unix.AT_FDCWD, p, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC); err == nil {
				unix.Close(fd)
			}
		case "pivot":
			err = unix.PivotRoot(p, p)
		case "caps": // EPERM when any capability set of /proc/self/status is not empty
			var b []byte
			if b, err = os.ReadFile("/proc/self/status"); err == nil {
				for _, l := range strings.Split(string(b), "\n") {
					if strings.HasPrefix(l, "Cap") && !strings.HasSuffix(l, "0000000000000000") {
						fmt.Fprintln(os.Stderr, "fsop:", l)
						err = syscall.EPERM
					}
				}
			}
		default:
			fmt.Fprintln(os.Stderr, "fsop: unknown op", op)
			return 2
		}
		fmt.Printf("%s:%s %d\n", op, p, int(rawsys.Errno(err)))
	}
	return 0
}

// fsops runs the fsop helper under Run with cfg and returns op → errno.
func fsops(t *testing.T, cfg sandbox.Config, dir string, ops ...string) map[string]syscall.Errno {
	t.Helper()
	cfg.AllowedExecPaths = append(cfg.AllowedExecPaths, self(t))
	res, err := sandbox.Run(context.Background(), cfg, self(t), append([]string{helperArg, "fsop"}, ops...),
		sandbox.RunOptions{Dir: dir, Env: []string{quickExit}, Timeout: 30 * time.Second})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("fsop: %v, exit %d\nstdout %s\nstderr %s", err, res.ExitCode, res.Stdout, res.Stderr)
	}
	out := parseFsops(t, string(res.Stdout))
	if len(out) != len(ops) {
		t.Fatalf("fsop: %d results for %d ops:\n%s", len(out), len(ops), res.Stdout)
	}
	return out
}

// parseFsops reads the fsop helper's "op:path errno" lines.
func parseFsops(t *testing.T, stdout string) map[string]syscall.Errno {
	t.Helper()
	out := map[string]syscall.Errno{}
	for _, l := range strings.Split(strings.TrimSpace(stdout), "\n") {
		k, v, _ := strings.Cut(l, " ")
		var n int
		fmt.Sscan(v, &n)
		out[k] = syscall.Errno(n)
	}
	return out
}

func wantOp(t *testing.T, got map[string]syscall.Errno, op string, want syscall.Errno) {
	t.Helper()
	e, ok := got[op]
	switch {
	case !ok:
		t.Errorf("%s: no result", op)
	case e != want:
		t.Errorf("%s: errno %d (%v), want %d (%v)", op, int(e), e, int(want), want)
	}
}

// mountLayerAvailable says whether WrapCommand and Run can use the mount
// layer here, and if not why (the plan's words).
func mountLayerAvailable(t *testing.T) (bool, string) {
	t.Helper()
	plan, err := sandbox.PlanFor(sandbox.Config{DenyWritePaths: []string{"/nonexistent-probe"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range plan.Features {
		if f.Feature == sandbox.FeatureDenyWrite && f.Scope == sandbox.ScopeCommand {
			if strings.Contains(f.Detail, "unavailable") {
				return false, f.Detail
			}
			return true, ""
		}
	}
	t.Fatalf("the plan has no %s entry for WrapCommand: %+v", sandbox.FeatureDenyWrite, plan.Features)
	return false, ""
}

// requireNamespaces skips, saying why, where the layer cannot be used.
func requireNamespaces(t *testing.T) {
	t.Helper()
	requireSandbox(t)
	if ok, why := mountLayerAvailable(t); !ok {
		t.Skipf("the mount-namespace layer is unavailable here: %s", why)
	}
}

func dirExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}

func pick[T any](c bool, a, b T) T {
	if c {
		return a
	}
	return b
}

// nobodyWorkspace is nsWorkspace for a test that runs as nobody: as root
// it makes the workspace, gives it to nobody and runs the test again as
// nobody (childtest.AsNobody), and returns ok false (this process only
// reports that run's verdict); in that run it returns the workspace and
// true. Not as root, the test is skipped (requireRoot says why).
func nobodyWorkspace(t *testing.T) (ws string, ok bool) {
	t.Helper()
	if childtest.InNobodyRun(t) {
		return os.Getenv("SANDBOX_NS_WS"), true
	}
	requireRoot(t)
	ws = nsWorkspace(t)
	chownTree(t, ws, 65534)
	return ws, childtest.AsNobody(t, "SANDBOX_NS_WS="+ws)
}

// nsWorkspace makes a workspace holding a git repository with one commit
// (or its layout, where git is missing), a .env, a secrets directory and
// a file a deny-write path names.
func nsWorkspace(t *testing.T) string {
	t.Helper()
	ws := realTempDir(t)
	os.MkdirAll(filepath.Join(ws, "secrets"), 0o755)
	os.MkdirAll(filepath.Join(ws, "ro"), 0o755)
	os.MkdirAll(filepath.Join(ws, "deep", "er"), 0o755)
	for p, s := range map[string]string{".env": "TOKEN=secret\n", "secrets/key": "k\n", "ro/file": "ro\n", "file": "w\n", "deep/er/file": "d\n",
		"lnk-target": "l\n"} {
		if err := os.WriteFile(filepath.Join(ws, p), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("lnk-target", filepath.Join(ws, "lnk")); err != nil {
		t.Fatal(err)
	}
	if _, err := exec.LookPath("git"); err == nil {
		for _, args := range [][]string{{"init", "-q"}, {"commit", "-q", "--allow-empty", "-m", "first"}} {
			cmd := exec.Command("git", append([]string{"-C", ws, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git %v: %v %s", args, err, out)
			}
		}
	} else {
		os.MkdirAll(filepath.Join(ws, ".git", "hooks"), 0o755)
		os.WriteFile(filepath.Join(ws, ".git", "config"), []byte("[core]\n"), 0o644)
		os.WriteFile(filepath.Join(ws, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	}
	// t.TempDir's parents are 0700: let a nobody run in.
	for d := ws; d != "/tmp" && d != "/"; d = filepath.Dir(d) {
		os.Chmod(d, 0o755)
	}
	return ws
}

func chownTree(t *testing.T, dir string, uid int) {
	filepath.Walk(dir, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, uid, uid) })
}

func TestRunMountLayer(t *testing.T) {
	requireNamespaces(t)
	ws := nsWorkspace(t)
	before, _ := os.ReadFile("/proc/self/mountinfo")
	checkMountLayer(t, ws)
	after, _ := os.ReadFile("/proc/self/mountinfo")
	if !bytes.Equal(before, after) {
		t.Errorf("the host's mount table changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

func TestRunMountLayerAsNobody(t *testing.T) {
	requireSandbox(t)
	ws, ok := nobodyWorkspace(t)
	if !ok {
		return
	}
	requireNamespaces(t)
	checkMountLayer(t, ws)
}

func checkMountLayer(t *testing.T, ws string) {
	hostTmp, err := os.CreateTemp("/tmp", "sandbox-host-tmp-")
	if err != nil {
		t.Fatal(err)
	}
	hostTmp.Close()
	defer os.Remove(hostTmp.Name())
	inside := "/tmp/sandbox-made-inside-" + filepath.Base(hostTmp.Name())
	cfg := sandbox.Config{
		AllowedWritePaths: []string{ws},
		DenyWritePaths:    []string{filepath.Join(ws, "ro"), filepath.Join(ws, "deep", "er", "file"), filepath.Join(ws, "lnk")},
		DenyReadPaths:     []string{filepath.Join(ws, ".env"), filepath.Join(ws, "secrets")},
	}
	j := func(p string) string { return filepath.Join(ws, p) }
	got := fsops(t, cfg, ws,
		"write:"+j("file"), "write:"+j("new"), // positive controls
		"write:"+j("ro/file"), "write:"+j("ro/new"), "remove:"+j("ro/file"), "rename:"+j("ro")+":"+j("ro2"),
		"read:"+j(".env"), "append:"+j(".env"), "ls:"+j("secrets"), "read:"+j("secrets/key"),
		"write:"+j(".git/hooks/pre-commit"), "append:"+j(".git/config"), "rename:"+j(".git")+":"+j(".g"),
		"remove:"+j(".git/hooks"), "read:"+j(".git/HEAD"), "write:"+j(".git/description"),
		"read:"+hostTmp.Name(), "write:"+inside, "read:"+inside, "write:/dev/shm/sandbox-sem",
		"rename:"+j("deep")+":"+j("deep2"), "rename:"+j("deep/er")+":"+j("deep/er2"), "write:"+j("deep/er/file"),
		"write:"+j("deep/er/other"),
		"write:"+j("lnk"), "remove:"+j("lnk"), "rename:"+j("lnk")+":"+j("lnk2"), "read:"+j("lnk"), "write:"+j("lnk-target"),
		"umount:"+j("ro"), "mountover:"+j("ro"), "remount-rw:"+j("ro"), "setattr-rw:"+j("ro"), "opentree:"+j("ro"), "pivot:"+j("ro"),
		"caps:-",
	)
	// The capabilities the namespace step needed (ambient CAP_SYS_ADMIN
	// and CAP_SETPCAP in a user namespace, or root's) are all gone, the
	// bounding set included.
	wantOp(t, got, "caps:-", 0)
	// The mounts cannot be undone or changed from inside: unmount, mount
	// over, remount read-write, mount_setattr, open_tree, pivot_root.
	for _, op := range []string{"umount", "mountover", "remount-rw", "setattr-rw", "opentree", "pivot"} {
		wantOp(t, got, op+":"+j("ro"), syscall.EPERM)
	}
	// A deny-write path that is a symbolic link: what it points to is
	// read-only, and the link can be neither replaced nor moved; it still
	// resolves.
	wantOp(t, got, "write:"+j("lnk"), syscall.EROFS)
	wantOp(t, got, "write:"+j("lnk-target"), syscall.EROFS)
	wantOp(t, got, "remove:"+j("lnk"), syscall.EBUSY)
	wantOp(t, got, "rename:"+j("lnk"), syscall.EBUSY)
	wantOp(t, got, "read:"+j("lnk"), 0)
	// A parent of a protected path cannot be renamed (the protected path
	// would move away and its old path could be made anew); beside it,
	// the directory stays writable.
	wantOp(t, got, "rename:"+j("deep"), syscall.EBUSY)
	wantOp(t, got, "rename:"+j("deep/er"), syscall.EBUSY)
	wantOp(t, got, "write:"+j("deep/er/file"), syscall.EROFS)
	wantOp(t, got, "write:"+j("deep/er/other"), 0)
	// A private /tmp and /dev/shm: the host's file is not there, and what
	// is written there stays there (that it is noexec, checkMountLayerPrograms
	// shows with ld.so).
	wantOp(t, got, "read:"+hostTmp.Name(), syscall.ENOENT)
	wantOp(t, got, "write:"+inside, 0)
	wantOp(t, got, "read:"+inside, 0)
	if dirExists("/dev/shm") {
		wantOp(t, got, "write:/dev/shm/sandbox-sem", 0)
	}
	for _, p := range []string{inside, "/dev/shm/sandbox-sem"} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s, written inside the sandbox, is on the host", p)
		}
	}
	wantOp(t, got, "write:"+j("file"), 0)
	wantOp(t, got, "write:"+j("new"), 0)
	wantOp(t, got, "write:"+j("ro/file"), syscall.EROFS)
	wantOp(t, got, "write:"+j("ro/new"), syscall.EROFS)
	wantOp(t, got, "remove:"+j("ro/file"), syscall.EROFS)
	wantOp(t, got, "rename:"+j("ro"), syscall.EBUSY)
	wantOp(t, got, "read:"+j(".env"), syscall.EACCES)
	wantOp(t, got, "append:"+j(".env"), syscall.EACCES)
	wantOp(t, got, "ls:"+j("secrets"), syscall.EACCES)
	wantOp(t, got, "read:"+j("secrets/key"), syscall.EACCES)
	wantOp(t, got, "write:"+j(".git/hooks/pre-commit"), syscall.EROFS)
	wantOp(t, got, "append:"+j(".git/config"), syscall.EROFS)
	wantOp(t, got, "rename:"+j(".git"), syscall.EBUSY)
	wantOp(t, got, "remove:"+j(".git/hooks"), syscall.EBUSY)
	wantOp(t, got, "read:"+j(".git/HEAD"), 0)
	wantOp(t, got, "write:"+j(".git/description"), 0)
	if b, err := os.ReadFile(j("ro/file")); err != nil || string(b) != "ro\n" {
		t.Errorf("the deny-write file on the host: %q %v", b, err)
	}
}

// inPrivateMountNS runs the calling test again in this test binary, as
// root, in a new mount namespace made private first, and reports whether
// this is that run: for tests whose failure could otherwise change the
// host's mounts.
func inPrivateMountNS(t *testing.T) bool {
	t.Helper()
	const stage = "SANDBOX_NS_PRIVATE"
	if os.Getenv(stage) == t.Name() {
		if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
			t.Fatalf("making the test's own mount namespace private: %v", err)
		}
		return true
	}
	requireRoot(t)
	cmd := exec.Command(self(t), "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1", "-test.timeout=120s")
	cmd.Env = append(os.Environ(), stage+"="+t.Name())
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS}
	out, err := cmd.CombinedOutput()
	childtest.Forward(t, "the run in a private mount namespace", out, err)
	return false
}

// TestWrapNamespaceSysProcAttrReplaced: a caller that replaces
// cmd.SysProcAttr after WrapCommand drops the namespaces; the trampoline
// then finds itself in its parent's mount namespace and refuses to mount
// (as root it would otherwise remount the caller's filesystems). Run in a
// private mount namespace of its own, so that a failure cannot reach the
// host.
func TestWrapNamespaceSysProcAttrReplaced(t *testing.T) {
	requireSandbox(t)
	if !inPrivateMountNS(t) {
		return
	}
	requireNamespaces(t)
	ws := t.TempDir()
	before, _ := os.ReadFile("/proc/self/mountinfo")
	cmd := exec.Command("/bin/true")
	if err := sandbox.New().WrapCommand(cmd, sandbox.Config{AllowedWritePaths: []string{ws}, DenyWritePaths: []string{ws + "/x"}, DenyReadPaths: []string{ws}}); err != nil {
		t.Fatal(err)
	}
	if cmd.SysProcAttr == nil || cmd.SysProcAttr.Cloneflags&syscall.CLONE_NEWNS == 0 {
		t.Fatalf("WrapCommand set no mount namespace: %+v", cmd.SysProcAttr)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 125 || !strings.Contains(string(out), "still in the caller's mount namespace") {
		t.Errorf("with the namespaces dropped: %v %s; want exit 125 and the refusal", err, out)
	}
	after, _ := os.ReadFile("/proc/self/mountinfo")
	if !bytes.Equal(before, after) {
		t.Errorf("the mount table changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// runProg runs name args under Run in dir and returns exit code, stdout
// and stderr.
func runProg(t *testing.T, cfg sandbox.Config, dir, name string, args ...string) (int, string, string) {
	t.Helper()
	res, err := sandbox.Run(context.Background(), cfg, name, args, sandbox.RunOptions{Dir: dir, Timeout: 30 * time.Second,
		Env: []string{"PATH=/usr/bin:/bin", "LC_ALL=C", "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t"}})
	if err != nil {
		t.Fatalf("Run %s %v: %v", name, args, err)
	}
	return res.ExitCode, string(res.Stdout), string(res.Stderr)
}

// loaderPath is this machine's dynamic loader, or "".
func loaderPath() string {
	for _, p := range []string{"/lib64/ld-linux-x86-64.so.2", "/lib/ld-linux-aarch64.so.1"} {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
	}
	return ""
}

func TestRunMountLayerPrograms(t *testing.T) {
	requireNamespaces(t)
	checkMountLayerPrograms(t, nsWorkspace(t))
}

func TestRunMountLayerProgramsAsNobody(t *testing.T) {
	requireSandbox(t)
	ws, ok := nobodyWorkspace(t)
	if !ok {
		return
	}
	requireNamespaces(t)
	checkMountLayerPrograms(t, ws)
}

// checkMountLayerPrograms: under Run, in a workspace holding a git
// repository, real programs: git commit works; the hooks, the config and
// .git itself cannot be changed, with the errno each program reports, not
// through a symbolic link nor a hard link either; a denied .env cannot be
// read; a Mounts entry shows a host directory elsewhere; and ld.so cannot
// run an ELF file written into the workspace. (rm -rf .git fails, but
// deletes what it may: objects and refs are the workspace's, writable;
// what is protected is the code git would run outside the sandbox.)
func checkMountLayerPrograms(t *testing.T, ws string) {
	git := need(t, "/usr/bin/git", "git")
	sh := need(t, "/bin/sh", "dash")
	j := func(p string) string { return filepath.Join(ws, p) }
	data := filepath.Join(ws, "data") // shown read-only at /tmp/<name>, inside the private /tmp
	os.MkdirAll(data, 0o755)
	os.WriteFile(filepath.Join(data, "shown"), []byte("shown data\n"), 0o644)
	at := "/tmp/sandbox-mount-at-" + filepath.Base(filepath.Dir(ws))
	cfg := sandbox.Config{
		AllowedWritePaths: []string{ws},
		AllowedExecPaths:  []string{git, "/usr/lib/git-core", sh, "/bin/cat", "/usr/bin/mv", "/usr/bin/rm", "/usr/bin/ln"},
		AllowProcessSpawn: true,
		DenyReadPaths:     []string{j(".env")},
		Mounts:            []sandbox.Mount{{Path: data, At: at}},
	}
	hooksBefore, _ := os.ReadDir(j(".git/hooks"))
	configBefore, _ := os.ReadFile(j(".git/config"))

	os.WriteFile(j("file.txt"), []byte("hello\n"), 0o644)
	for _, args := range [][]string{{"add", "file.txt"}, {"commit", "-q", "-m", "second"}, {"branch", "b2"}} {
		if code, out, errOut := runProg(t, cfg, ws, git, args...); code != 0 {
			t.Fatalf("git %v: exit %d\n%s%s", args, code, out, errOut)
		}
	}
	if out, err := exec.Command(git, "-C", ws, "log", "--format=%s").Output(); err != nil || !strings.HasPrefix(string(out), "second\n") {
		t.Errorf("git log on the host after the sandboxed commit: %q %v", out, err)
	}

	for _, c := range []struct {
		what, errText string
		argv          []string
	}{
		{"write a hook", "Read-only file system", []string{sh, "-c", "echo 'echo pwned' > .git/hooks/pre-commit"}},
		// git writes .git/config.lock, then renames it over the config,
		// a mount point.
		{"git config core.hooksPath", "could not write config file .git/config: Device or resource busy", []string{git, "config", "core.hooksPath", "/tmp/x"}},
		{"git config core.fsmonitor", "Device or resource busy", []string{git, "config", "core.fsmonitor", "/tmp/x"}},
		{"write a hook through a symlink", "Read-only file system", []string{sh, "-c", "ln -s .git/hooks/pre-commit l1 && echo x > l1"}},
		{"hard link to .git/config", "Invalid cross-device link", []string{"/usr/bin/ln", ".git/config", "cfg-link"}},
		{"hard link to .env", "Invalid cross-device link", []string{"/usr/bin/ln", ".env", "env-link"}},
		{"read .env through a symlink", "Permission denied", []string{sh, "-c", "ln -s .env l2 && cat l2"}},
		{"mv .git", "Device or resource busy", []string{"/usr/bin/mv", ".git", ".g"}},
		{"rm -rf .git", "Device or resource busy", []string{"/usr/bin/rm", "-rf", ".git"}},
		{"rm -rf .git/hooks", "Read-only file system", []string{"/usr/bin/rm", "-rf", ".git/hooks"}},
		{"cat .env", "Permission denied", []string{"/bin/cat", ".env"}},
		{"write into the mount", "Read-only file system", []string{sh, "-c", "echo x > " + at + "/shown"}},
	} {
		code, out, errOut := runProg(t, cfg, ws, c.argv[0], c.argv[1:]...)
		if code == 0 || !strings.Contains(errOut, c.errText) {
			t.Errorf("%s: exit %d, stderr %q; want a failure with %q", c.what, code, errOut, c.errText)
		} else {
			t.Logf("%s: exit %d: %s", c.what, code, strings.TrimSpace(errOut+out))
		}
	}
	hooksAfter, _ := os.ReadDir(j(".git/hooks"))
	configAfter, _ := os.ReadFile(j(".git/config"))
	if len(hooksAfter) != len(hooksBefore) || !bytes.Equal(configAfter, configBefore) {
		t.Errorf("hooks or config changed on the host: %d hooks before, %d after; config %q → %q", len(hooksBefore), len(hooksAfter), configBefore, configAfter)
	}
	if _, err := os.Stat(j(".g")); err == nil {
		t.Errorf(".git was renamed on the host")
	}

	// The mount shows the host directory at its target.
	if code, out, errOut := runProg(t, cfg, ws, "/bin/cat", at+"/shown"); code != 0 || out != "shown data\n" {
		t.Errorf("cat through the mount: exit %d %q %q", code, out, errOut)
	}
	if _, err := os.Stat(at); err == nil {
		t.Errorf("the mount target %s exists on the host", at)
	}

	// ld.so on an ELF file written into the workspace: refused, because
	// the workspace is noexec. Positive control: the same with
	// AllowExecWritePaths (the workspace executable) runs it.
	ld := loaderPath()
	if ld == "" {
		t.Log("no dynamic loader found here: the ld.so route is not tried")
		return
	}
	copyFile(t, "/bin/true", j("payload"))
	os.Chmod(j("payload"), 0o755)
	code, _, errOut := runProg(t, cfg, ws, ld, j("payload"))
	if code == 0 || !strings.Contains(errOut, "failed to map segment") {
		t.Errorf("ld.so ./payload in the noexec workspace: exit %d %q; want the loader's mapping failure", code, errOut)
	} else {
		t.Logf("ld.so ./payload: exit %d: %s", code, strings.TrimSpace(errOut))
	}
	// The private /tmp is noexec too: ld.so run from a shell (the loader
	// is executable, as the granted programs' interpreter) maps a granted
	// program (/bin/cat), but not bytes copied into /tmp.
	script := "cat " + j("payload") + " > /tmp/p && " + ld + " /bin/cat /dev/null && echo control-ok && " + ld + " /tmp/p"
	var out string
	code, out, errOut = runProg(t, cfg, ws, sh, "-c", script)
	if code == 0 || out != "control-ok\n" || !strings.Contains(errOut, "failed to map segment") {
		t.Errorf("ld.so on a copy in the private /tmp: exit %d %q %q; want the control to run and the copy refused", code, out, errOut)
	} else {
		t.Logf("ld.so /tmp/p: exit %d: %s", code, strings.TrimSpace(errOut))
	}
	ctl := cfg
	ctl.AllowExecWritePaths = true
	if code, _, errOut := runProg(t, ctl, ws, ld, j("payload")); code != 0 {
		t.Errorf("positive control: ld.so ./payload with allow_exec_write_paths: exit %d %q", code, errOut)
	}
}

// refuseNamespaces loads, on every thread of this process, a seccomp
// filter that refuses clone and unshare with CLONE_NEWNS or CLONE_NEWUSER
// (EPERM), as a container runtime's default profile does.
func refuseNamespaces(t *testing.T) {
	t.Helper()
	const (
		ldAbs   = 0x20 // BPF_LD|BPF_W|BPF_ABS
		jeq     = 0x15 // BPF_JMP|BPF_JEQ|BPF_K
		jset    = 0x45 // BPF_JMP|BPF_JSET|BPF_K
		ret     = 0x06 // BPF_RET|BPF_K
		allow   = 0x7fff0000
		errno   = 0x00050000
		argsOff = 16 // offsetof(struct seccomp_data, args[0]), low word (little-endian)
	)
	prog := []unix.SockFilter{
		{Code: ldAbs, K: 0},
		{Code: jeq, Jt: 1, K: unix.SYS_CLONE},
		{Code: jeq, Jt: 0, Jf: 3, K: unix.SYS_UNSHARE},
		{Code: ldAbs, K: argsOff},
		{Code: jset, Jt: 0, Jf: 1, K: unix.CLONE_NEWNS | unix.CLONE_NEWUSER},
		{Code: ret, K: errno | uint32(unix.EPERM)},
		{Code: ret, K: allow},
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	// no_new_privs and the filter from the same thread: as nobody the
	// kernel refuses a filter from a thread without no_new_privs (EACCES),
	// which a goroutine moved between the two calls would be.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		t.Fatal(err)
	}
	if _, _, e := unix.Syscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, unix.SECCOMP_FILTER_FLAG_TSYNC, uintptr(unsafe.Pointer(&fprog))); e != 0 {
		t.Fatalf("seccomp: %v", e)
	}
	// The filter works: a namespace cannot be made.
	if err := exec.Command("/bin/true").Run(); err != nil {
		t.Fatalf("a plain spawn under the filter: %v", err)
	}
	cmd := exec.Command("/bin/true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS}
	if err := cmd.Run(); !errors.Is(err, syscall.EPERM) {
		t.Fatalf("clone(CLONE_NEWNS) under the filter: %v, want EPERM", err)
	}
}

// TestMountLayerUnavailable: where the namespaces cannot be created (here a
// seccomp filter in this test's own child process refuses them), the plan
// says so with the reason and a remedy, Strict refuses, and without Strict
// Run still confines with Landlock and seccomp.
func TestMountLayerUnavailable(t *testing.T) {
	requireSandbox(t)
	ws := childtest.Dir(t)
	childtest.Run(t, func(t *testing.T) { checkUnavailable(t, ws) })
}

// TestMountLayerUnavailableAsNobody: the same for a caller that is not
// root, whose clone asks for a user namespace too.
func TestMountLayerUnavailableAsNobody(t *testing.T) {
	requireSandbox(t)
	ws, ok := nobodyWorkspace(t)
	if !ok {
		return
	}
	checkUnavailable(t, ws)
}

func checkUnavailable(t *testing.T, ws string) {
	{
		refuseNamespaces(t)
		cfg := sandbox.Config{AllowedWritePaths: []string{ws}, DenyWritePaths: []string{filepath.Join(ws, "kept")}}
		os.WriteFile(filepath.Join(ws, "kept"), []byte("x"), 0o644)
		plan, err := sandbox.PlanFor(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var found bool
		for _, f := range plan.Features {
			if f.Feature == sandbox.FeatureDenyWrite && f.Scope == sandbox.ScopeCommand {
				found = true
				if f.Enforced || !strings.Contains(f.Detail, "unavailable") || !strings.Contains(f.Detail, "seccomp") || f.Hint == "" {
					t.Errorf("deny_write_paths under WrapCommand: %+v; want not enforced, the seccomp reason and a remedy", f)
				}
				t.Logf("plan: %s (hint: %s)", f.Detail, f.Hint)
			}
			if f.Feature == sandbox.FeatureMetadata && f.Scope == sandbox.ScopeCommand && (f.Enforced || !strings.Contains(f.Detail, "unavailable")) {
				t.Errorf("file_metadata of WrapCommand/Run does not say the layer is unavailable: %+v", f)
			}
		}
		if !found {
			t.Errorf("no deny_write_paths entry for WrapCommand in %+v", plan.Features)
		}
		strict := cfg
		strict.Strict = true
		err = sandbox.New().WrapCommand(exec.Command("/bin/true"), strict)
		if !errors.Is(err, sandbox.ErrNotEnforced) || !strings.Contains(err.Error(), sandbox.FeatureDenyWrite) ||
			!strings.Contains(err.Error(), sandbox.FeatureMetadata) {
			t.Errorf("Strict WrapCommand: %v; want ErrNotEnforced naming %s and %s", err, sandbox.FeatureDenyWrite, sandbox.FeatureMetadata)
		}
		// Without Strict: Landlock and seccomp still apply.
		// (This test binary is outside every grant, and exists.)
		cat := need(t, "/bin/cat", "coreutils")
		res, err := sandbox.Run(context.Background(), sandbox.Config{AllowedWritePaths: []string{ws}, DenyWritePaths: cfg.DenyWritePaths},
			cat, []string{filepath.Join(ws, "kept"), self(t)}, sandbox.RunOptions{})
		if err != nil || res.ExitCode != 1 || string(res.Stdout) != "x" || !strings.Contains(strings.ToLower(string(res.Stderr)), "permission denied") {
			t.Errorf("Run without the layer: %v, exit %d, %q %q; want the grant read and the test binary denied", err, res.ExitCode, res.Stdout, res.Stderr)
		}
	}
}

func init() {
	childHelpers["canary"] = func(args []string) int {
		var cfg sandbox.Config
		if err := json.Unmarshal([]byte(args[0]), &cfg); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		json.NewEncoder(os.Stdout).Encode(sandbox.VerifyCanaryFor(cfg))
		return 0
	}
}

func probeStatus(r sandbox.CanaryResult, name string) string {
	for _, p := range r.Probes {
		if p.Name == name {
			return p.Status
		}
	}
	return "(none)"
}

// TestCanaryMountLayer: under Run with the mount layer, the canary's
// deny_write and deny_read probes are blocked and their controls allowed,
// and the whole result is verified.
func TestCanaryMountLayer(t *testing.T) {
	requireNamespaces(t)
	ws := nsWorkspace(t)
	cfg := sandbox.Config{
		AllowedWritePaths: []string{ws},
		DenyWritePaths:    []string{filepath.Join(ws, "ro", "file")},
		DenyReadPaths:     []string{filepath.Join(ws, ".env")},
	}
	js, _ := json.Marshal(cfg)
	run := cfg
	run.AllowedExecPaths = []string{self(t)}
	res, err := sandbox.Run(context.Background(), run, self(t), []string{helperArg, "canary", string(js)},
		sandbox.RunOptions{Dir: ws, Env: []string{quickExit}, Timeout: 30 * time.Second})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("canary under Run: %v, exit %d, %s", err, res.ExitCode, res.Stderr)
	}
	var r sandbox.CanaryResult
	if err := json.Unmarshal(res.Stdout, &r); err != nil {
		t.Fatalf("%v: %s", err, res.Stdout)
	}
	for name, want := range map[string]string{"deny_write": sandbox.ProbeBlocked, "deny_read": sandbox.ProbeBlocked,
		"control_deny_write": sandbox.ProbeAllowed, "control_deny_read": sandbox.ProbeAllowed, "file_write": sandbox.ProbeBlocked,
		"control_write": sandbox.ProbeAllowed} {
		if got := probeStatus(r, name); got != want {
			t.Errorf("under Run: probe %s is %s, want %s", name, got, want)
		}
	}
	if !r.Verified {
		// Only the probes above are this layer's; others are logged (the
		// kernel matrix's 6.1 guest fails the exec probe under Run with
		// or without the layer).
		t.Logf("under Run with the mount layer the canary did not verify: %s", r.Summary)
	}
	t.Logf("under Run: %s", r.Summary)

}

// TestCanaryWithoutMountLayer: under ApplySelf, which has no mount layer,
// the same Config's deny probes fail: the canary detects the missing layer.
func TestCanaryWithoutMountLayer(t *testing.T) {
	requireSandbox(t)
	ws := childtest.Dir(t)
	if !childtest.InChild(t) {
		os.MkdirAll(filepath.Join(ws, "ro"), 0o755)
		os.WriteFile(filepath.Join(ws, "ro", "file"), []byte("x"), 0o644)
		os.WriteFile(filepath.Join(ws, ".env"), []byte("x"), 0o644)
	}
	cfg := sandbox.Config{
		AllowedWritePaths: []string{ws},
		DenyWritePaths:    []string{filepath.Join(ws, "ro", "file")},
		DenyReadPaths:     []string{filepath.Join(ws, ".env")},
	}
	childtest.Run(t, func(t *testing.T) {
		if err := sandbox.New().ApplySelf(cfg); err != nil {
			t.Fatal(err)
		}
		r := sandbox.VerifyCanaryFor(cfg)
		for name, want := range map[string]string{"deny_write": sandbox.ProbeFailed, "deny_read": sandbox.ProbeFailed,
			"control_deny_write": sandbox.ProbeAllowed, "control_deny_read": sandbox.ProbeAllowed} {
			if got := probeStatus(r, name); got != want {
				t.Errorf("without the mount layer: probe %s is %s, want %s", name, got, want)
			}
		}
		if r.Verified {
			t.Errorf("without the mount layer the canary verified: %s", r.Summary)
		}
		t.Logf("ApplySelf: %s", r.Summary)
	})
}

// TestRunMountLayerGitdirFile: a repository whose .git is a "gitdir:"
// file (git init --separate-git-dir, as for worktrees and submodules): the
// real git directory's hooks and config are protected, found from the
// working directory; git commit still works.
func TestRunMountLayerGitdirFile(t *testing.T) {
	requireNamespaces(t)
	git := need(t, "/usr/bin/git", "git")
	sh := need(t, "/bin/sh", "dash")
	ws := realTempDir(t)
	repo, gitdir := filepath.Join(ws, "repo"), filepath.Join(ws, "store", "repo.git")
	os.MkdirAll(repo, 0o755)
	os.MkdirAll(filepath.Dir(gitdir), 0o755)
	if out, err := exec.Command(git, "init", "-q", "--separate-git-dir="+gitdir, repo).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	if fi, err := os.Lstat(filepath.Join(repo, ".git")); err != nil || fi.IsDir() {
		t.Fatalf(".git is not a gitdir file: %v", err)
	}
	cfg := sandbox.Config{AllowedWritePaths: []string{ws}, AllowedExecPaths: []string{git, "/usr/lib/git-core", sh}, AllowProcessSpawn: true}
	os.WriteFile(filepath.Join(repo, "f"), []byte("x\n"), 0o644)
	for _, args := range [][]string{{"add", "f"}, {"commit", "-q", "-m", "c"}} {
		if code, out, errOut := runProg(t, cfg, repo, git, args...); code != 0 {
			t.Fatalf("git %v: exit %d %s%s", args, code, out, errOut)
		}
	}
	if code, _, errOut := runProg(t, cfg, repo, git, "config", "core.hooksPath", "/tmp/x"); code == 0 || !strings.Contains(errOut, "Device or resource busy") {
		t.Errorf("git config core.hooksPath: exit %d %q; want EBUSY", code, errOut)
	}
	hook := filepath.Join(gitdir, "hooks", "pre-commit")
	if code, _, errOut := runProg(t, cfg, repo, sh, "-c", "echo x > "+hook); code == 0 || !strings.Contains(errOut, "Read-only file system") {
		t.Errorf("writing the real git dir's hook: exit %d %q; want EROFS", code, errOut)
	}
	if code, _, errOut := runProg(t, cfg, repo, sh, "-c", "echo 'gitdir: /tmp/evil' > .git"); code == 0 || !strings.Contains(errOut, "Read-only file system") && !strings.Contains(errOut, "busy") {
		t.Errorf("rewriting the .git file: exit %d %q; want a failure", code, errOut)
	}
	if _, err := os.Stat(hook); err == nil {
		t.Errorf("the hook exists on the host")
	}
}

// TestGitCommonDirGap: what the git protection cannot do, shown and
// reported: the program can create .git/commondir (the git directory must
// stay writable), and the plan says so, not enforced, with a remedy.
func TestGitCommonDirGap(t *testing.T) {
	requireNamespaces(t)
	ws := nsWorkspace(t)
	cfg := sandbox.Config{AllowedWritePaths: []string{ws}}
	plan, err := sandbox.PlanFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, f := range plan.Features {
		if f.Feature == sandbox.FeatureGitCommonDir && f.Scope == sandbox.ScopeCommand {
			found = true
			if f.Enforced || !strings.Contains(f.Detail, "commondir") || f.Hint == "" {
				t.Errorf("git_commondir: %+v; want not enforced, explained, with a remedy", f)
			}
		}
	}
	if !found {
		t.Errorf("the plan does not report git_commondir: %+v", plan.Features)
	}
	commondir := filepath.Join(ws, ".git", "commondir")
	defer os.Remove(commondir)
	got := fsops(t, cfg, ws, "write:"+commondir, "write:"+filepath.Join(ws, ".git", "hooks", "x"))
	wantOp(t, got, "write:"+commondir, 0) // the gap, as reported
	wantOp(t, got, "write:"+filepath.Join(ws, ".git", "hooks", "x"), syscall.EROFS)
}

// TestWrapMountLayerCredential: a root caller whose command runs as nobody
// (SysProcAttr.Credential) gets the mount layer too: the child keeps
// CAP_SYS_ADMIN across the credential change as an ambient capability,
// mounts, and drops it before the target runs.
func TestWrapMountLayerCredential(t *testing.T) {
	requireNamespaces(t)
	requireRoot(t)
	cat := need(t, "/bin/cat", "coreutils")
	ws := nsWorkspace(t)
	cmd := exec.Command(cat, filepath.Join(ws, "file"), filepath.Join(ws, ".env"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	wrap(t, cmd, sandbox.Config{AllowedReadPaths: []string{ws}, DenyReadPaths: []string{filepath.Join(ws, ".env")}})
	if cmd.SysProcAttr.Cloneflags&syscall.CLONE_NEWNS == 0 || len(cmd.SysProcAttr.AmbientCaps) == 0 {
		t.Fatalf("SysProcAttr after WrapCommand: %+v", cmd.SysProcAttr)
	}
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.HasPrefix(string(out), "w\n") || !strings.Contains(string(out), ".env") || !strings.Contains(string(out), "Permission denied") {
		t.Errorf("as nobody: %v %q; want the file read and .env denied", err, out)
	}
	// The target holds no capability (the ambient CAP_SYS_ADMIN and
	// CAP_SETPCAP were dropped, the bounding set emptied).
	cmd = exec.Command(cat, "/proc/self/status")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	wrap(t, cmd, sandbox.Config{AllowedReadPaths: []string{ws}, DenyReadPaths: []string{filepath.Join(ws, ".env")}})
	status, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(l, "Cap") && !strings.HasSuffix(l, "0000000000000000") {
			t.Errorf("the target holds capabilities: %s", l)
		}
	}
	// Conflicting SysProcAttr fields are refused.
	cmd = exec.Command(cat)
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWPID}
	if err := sandbox.New().WrapCommand(cmd, sandbox.Config{DenyReadPaths: []string{filepath.Join(ws, ".env")}, AllowedReadPaths: []string{ws}}); err == nil || !strings.Contains(err.Error(), "Cloneflags") {
		t.Errorf("WrapCommand with the caller's Cloneflags: %v; want a refusal", err)
	}
}

// TestRunMountLayerWithLimits: the child half joins the tree's cgroup
// (where one can be made) before its namespace step: both work together,
// as root and as nobody (in a user namespace).
func TestRunMountLayerWithLimits(t *testing.T)         { checkLayerWithLimits(t, false) }
func TestRunMountLayerWithLimitsAsNobody(t *testing.T) { checkLayerWithLimits(t, true) }

func checkLayerWithLimits(t *testing.T, nobody bool) {
	requireSandbox(t)
	var ws string
	if nobody {
		var ok bool
		if ws, ok = nobodyWorkspace(t); !ok {
			return
		}
	} else {
		ws = nsWorkspace(t)
	}
	requireNamespaces(t)
	cfg := sandbox.Config{AllowedWritePaths: []string{ws}, DenyWritePaths: []string{filepath.Join(ws, "ro")},
		Limits: sandbox.Limits{Processes: 32, MemoryBytes: 512 << 20, OpenFiles: 256}}
	plan, err := sandbox.PlanFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range plan.Features {
		if strings.HasPrefix(f.Feature, "limit_") && f.Scope == sandbox.ScopeCommand {
			t.Logf("%s enforced=%v: %s", f.Feature, f.Enforced, f.Detail)
		}
	}
	got := fsops(t, cfg, ws, "write:"+filepath.Join(ws, "file"), "write:"+filepath.Join(ws, "ro", "file"))
	wantOp(t, got, "write:"+filepath.Join(ws, "file"), 0)
	wantOp(t, got, "write:"+filepath.Join(ws, "ro", "file"), syscall.EROFS)
}

// The trampoline looks the working directory up again by path after the
// mounts (kept as it was, it would stay on the mount it was on: the
// writable view of what the layer makes read-only). A working directory
// getcwd cannot name, here one deeper than PATH_MAX inherited from the
// caller, makes the child fail closed before the target runs.
func TestMountLayerCwdBeyondPathMax(t *testing.T) {
	requireNamespaces(t)
	ws := t.TempDir()
	os.MkdirAll(filepath.Join(ws, "ro"), 0o755)
	cfg := sandbox.Config{AllowedWritePaths: []string{ws}, DenyWritePaths: []string{filepath.Join(ws, "ro")}}
	childtest.Run(t, func(t *testing.T) {
		if err := os.Chdir(ws); err != nil {
			t.Fatal(err)
		}
		name := strings.Repeat("d", 200)
		for range 25 { // 25 × 201 bytes: beyond PATH_MAX (4096)
			if err := os.Mkdir(name, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Chdir(name); err != nil {
				t.Fatal(err)
			}
		}
		res, err := sandbox.Run(context.Background(), cfg, "/bin/true", nil, sandbox.RunOptions{})
		if err == nil || !strings.Contains(err.Error(), "getcwd") {
			t.Fatalf("Run from a working directory beyond PATH_MAX: %v %+v, want the child half's getcwd failure", err, res)
		}
		t.Logf("refused: %v", err)
		// A working directory getcwd can name works (positive control).
		if err := os.Chdir(ws); err != nil {
			t.Fatal(err)
		}
		if res, err := sandbox.Run(context.Background(), cfg, "/bin/true", nil, sandbox.RunOptions{}); err != nil || res.ExitCode != 0 {
			t.Fatalf("control: %v %+v", err, res)
		}
	})
}

// A commondir the program creates in a protected repository's git
// directory (which no mount can keep out: TestGitCommonDirGap) would make
// the user's next git run outside the sandbox take hooks from where it
// points. Run removes it once the tree is gone and says so in
// RunResult.Removed; the control shows the same file, left in place, does
// run the program's hook.
func TestRunRemovesCreatedCommonDir(t *testing.T) {
	requireNamespaces(t)
	git := need(t, "/usr/bin/git", "git")
	sh := need(t, "/bin/sh", "dash")
	ws := realTempDir(t)
	gitOut := gitIn(git, ws)
	if err := gitOut("init", "-q"); err != nil {
		t.Fatal(err)
	}
	cfg := sandbox.Config{AllowedWritePaths: []string{ws}, AllowProcessSpawn: true, AllowedExecPaths: []string{"/usr/bin", "/bin"}}
	attack := `cp -r .git evil && printf '#!/bin/sh\ntouch MARK\n' > evil/hooks/pre-commit && chmod +x evil/hooks/pre-commit && echo ../evil > .git/commondir`
	res, err := sandbox.Run(context.Background(), cfg, sh, []string{"-c", attack}, sandbox.RunOptions{Dir: ws, Env: []string{"PATH=/usr/bin:/bin"}})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("the program could not plant the common dir: %v %+v %s", err, res, res.Stderr)
	}
	commondir := filepath.Join(ws, ".git", "commondir")
	if !slices.Equal(res.Removed, []string{commondir}) {
		t.Errorf("RunResult.Removed = %v, want [%s]", res.Removed, commondir)
	}
	if _, err := os.Lstat(commondir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("%s is still there after Run: %v", commondir, err)
	}
	mark := filepath.Join(ws, "MARK")
	if err := gitOut("commit", "-q", "--allow-empty", "-m", "after the run"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(mark); err == nil {
		t.Fatalf("git outside the sandbox ran the program's hook after Run")
	}
	// Control: the planted file, left in place, is what makes git run
	// the program's hook.
	if err := os.WriteFile(commondir, []byte("../evil\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := gitOut("commit", "-q", "--allow-empty", "-m", "control"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(mark); err != nil {
		t.Errorf("control: with the commondir in place git did not run the planted hook (%v): the test shows nothing", err)
	}
}

// A worktree's git directory has a commondir (naming the main
// repository's git directory): it stays read-only, or a rewrite would
// point git at hooks and config of the program's choosing.
func TestRunMountLayerWorktreeCommonDir(t *testing.T) {
	requireNamespaces(t)
	git := need(t, "/usr/bin/git", "git")
	sh := need(t, "/bin/sh", "dash")
	ws := realTempDir(t)
	main, wt := filepath.Join(ws, "main"), filepath.Join(ws, "wt")
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + ws, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t"}
	for _, args := range [][]string{{"init", "-q", main}, {"-C", main, "commit", "-q", "--allow-empty", "-m", "c"}, {"-C", main, "worktree", "add", "-q", wt}} {
		cmd := exec.Command(git, args...)
		cmd.Env = env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	commondir := filepath.Join(main, ".git", "worktrees", "wt", "commondir")
	before, err := os.ReadFile(commondir)
	if err != nil {
		t.Fatal(err)
	}
	cfg := sandbox.Config{AllowedWritePaths: []string{ws}}
	code, _, errOut := runProg(t, cfg, wt, sh, "-c", "echo /tmp > "+commondir)
	if code == 0 || !strings.Contains(errOut, "Read-only file system") {
		t.Errorf("rewriting the worktree's commondir: exit %d %q; want EROFS", code, errOut)
	}
	if after, _ := os.ReadFile(commondir); !bytes.Equal(after, before) {
		t.Errorf("commondir changed: %q -> %q", before, after)
	}
	// Control: the worktree's own files stay writable.
	if code, _, errOut := runProg(t, cfg, wt, sh, "-c", "echo x > file"); code != 0 {
		t.Errorf("control: writing in the worktree: exit %d %q", code, errOut)
	}
}
