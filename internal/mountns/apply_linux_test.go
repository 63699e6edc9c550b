//go:build linux

package mountns

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/openparallax/sandbox/internal/childtest"
	"golang.org/x/sys/unix"
)

// The enforcement tests run their body in a re-executed test binary that is
// alone in a new mount namespace: as root (CLONE_NEWNS), and as nobody
// (a first child runs as nobody and starts the namespaced one with
// CLONE_NEWUSER|CLONE_NEWNS, so the user namespace is nobody's, as for an
// unprivileged caller). Only the layer is applied (no Landlock, no
// seccomp, no capability drop): what is checked is what the mounts alone
// enforce. The parent checks afterwards that the host's mount table and
// files are as they were.

const envStage = "MOUNTNS_TEST_STAGE" // "outer" (nobody, starts the namespaced child) or "ns"

type fixture struct {
	ws, other, data, mnt, tmpFile string
}

func newFixture(t *testing.T, uid int) fixture {
	t.Helper()
	base := t.TempDir()
	// Beneath /tmp on purpose: the private /tmp must keep the workspace.
	f := fixture{
		ws:    filepath.Join(base, "ws"),
		other: otherDir(t),
		data:  filepath.Join(base, "data"),
		mnt:   filepath.Join(base, "mnt"),
	}
	for _, d := range []string{f.ws, f.other, f.data, f.mnt, filepath.Join(f.ws, "secrets")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p, s string, mode os.FileMode) {
		if err := os.WriteFile(p, []byte(s), mode); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(f.ws, ".env"), "TOKEN=secret\n", 0o644)
	write(filepath.Join(f.ws, "secrets", "key"), "secret\n", 0o644)
	write(filepath.Join(f.other, "file"), "outside\n", 0o644)
	write(filepath.Join(f.data, "shown"), "data\n", 0o644)
	payload, err := os.ReadFile("/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(f.ws, "payload"), string(payload), 0o755)
	if haveGit() {
		git(t, f.ws, "init", "-q")
		git(t, f.ws, "commit", "-q", "--allow-empty", "-m", "first")
	} else {
		// The kernel matrix's guests have no git: the repository's
		// layout, which is all the protection looks at, made by hand.
		if err := os.MkdirAll(filepath.Join(f.ws, ".git", "hooks"), 0o755); err != nil {
			t.Fatal(err)
		}
		write(filepath.Join(f.ws, ".git", "config"), "[core]\n", 0o644)
	}
	tmp, err := os.CreateTemp("/tmp", "mountns-host-*")
	if err != nil {
		t.Fatal(err)
	}
	tmp.Close()
	f.tmpFile = tmp.Name()
	t.Cleanup(func() { os.Remove(f.tmpFile) })
	if uid != 0 {
		os.Chmod(filepath.Dir(base), 0o755)
		os.Chmod(base, 0o755)
		for _, d := range []string{base, f.other} {
			filepath.Walk(d, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, uid, uid) })
		}
	}
	return f
}

// otherDir is outside every grant and outside /tmp (which the layer makes
// private): where metadata changes must fail. /var/tmp on a real system;
// the kernel matrix's bare initramfs has none, and a writable root.
func otherDir(t *testing.T) string {
	parent := "/var/tmp"
	if _, err := os.Stat(parent); err != nil {
		parent = "/"
	}
	d, err := os.MkdirTemp(parent, "mountns-other-*")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func haveGit() bool {
	_, err := exec.LookPath("git")
	return err == nil
}

func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func (f fixture) env() []string {
	return []string{"MOUNTNS_WS=" + f.ws, "MOUNTNS_OTHER=" + f.other, "MOUNTNS_DATA=" + f.data,
		"MOUNTNS_MNT=" + f.mnt, "MOUNTNS_TMPFILE=" + f.tmpFile}
}

func fixtureFromEnv() fixture {
	return fixture{ws: os.Getenv("MOUNTNS_WS"), other: os.Getenv("MOUNTNS_OTHER"), data: os.Getenv("MOUNTNS_DATA"),
		mnt: os.Getenv("MOUNTNS_MNT"), tmpFile: os.Getenv("MOUNTNS_TMPFILE")}
}

// runStage re-executes this test with stage set, and returns its output.
func runStage(t *testing.T, stage string, env []string, attr *syscall.SysProcAttr) ([]byte, error) {
	return runStageExe(t, os.Args[0], stage, env, attr)
}

func runStageExe(t *testing.T, exe, stage string, env []string, attr *syscall.SysProcAttr) ([]byte, error) {
	cmd := exec.Command(exe, "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1")
	cmd.Env = append(append(os.Environ(), envStage+"="+stage), env...)
	cmd.SysProcAttr = attr
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}

func nsAttr(userns bool) *syscall.SysProcAttr {
	if !userns {
		return &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS}
	}
	uid, gid := os.Getuid(), os.Getgid()
	return &syscall.SysProcAttr{
		Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNS,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		// The same uid inside as outside, so files keep their owners; the
		// capability the mounts need survives the exec of the child as
		// an ambient one (the product's child half drops it before the
		// target runs).
		AmbientCaps: []uintptr{unix.CAP_SYS_ADMIN},
	}
}

// inNamespace runs body in the namespaced child; in the parent it starts the
// child (through a nobody child when asNobody) and checks the host after.
func inNamespace(t *testing.T, asNobody bool, body func(t *testing.T, f fixture)) {
	switch os.Getenv(envStage) {
	case "ns":
		body(t, fixtureFromEnv())
		return
	case "outer":
		out, err := runStage(t, "ns", nil, nsAttr(true))
		os.Stdout.Write(out)
		if err != nil || !bytes.Contains(out, []byte("--- PASS")) {
			t.Fatalf("namespaced child: %v", err)
		}
		return
	}
	if os.Getuid() != 0 {
		t.Skip("the parent must be root to make the fixtures for root and nobody children")
	}
	uid := 0
	if asNobody {
		uid = 65534
	}
	f := newFixture(t, uid)
	before, _ := os.ReadFile("/proc/self/mountinfo")
	var out []byte
	var err error
	if asNobody {
		// The test binary lives in a directory only root may enter: run a
		// copy nobody can execute.
		exe := filepath.Join(filepath.Dir(f.ws), "mountns.test")
		if b, err := os.ReadFile(os.Args[0]); err != nil || os.WriteFile(exe, b, 0o755) != nil {
			t.Fatalf("copying the test binary: %v", err)
		}
		out, err = runStageExe(t, exe, "outer", f.env(), &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}})
	} else {
		out, err = runStage(t, "ns", f.env(), nsAttr(false))
	}
	childtest.Forward(t, "the child", out, err)
	after, _ := os.ReadFile("/proc/self/mountinfo")
	if !bytes.Equal(before, after) {
		t.Errorf("the host's mount table changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	for _, p := range []string{filepath.Join(f.other, "file"), f.tmpFile} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("host file %s: %v", p, err)
		}
	}
	if fi, err := os.Stat(filepath.Join(f.other, "file")); err == nil && fi.Mode().Perm() != 0o644 {
		t.Errorf("host file mode changed to %v", fi.Mode())
	}
	if entries, _ := os.ReadDir(f.mnt); len(entries) != 0 {
		t.Errorf("the host's mount target has entries %v", entries)
	}
}

func errnoIs(t *testing.T, what string, err error, want syscall.Errno) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Errorf("%s: %v, want %v", what, err, want)
	}
}

func TestApplyAsRoot(t *testing.T)   { inNamespace(t, false, checkLayer) }
func TestApplyAsNobody(t *testing.T) { inNamespace(t, true, checkLayer) }

func checkLayer(t *testing.T, f fixture) {
	spec := Spec{
		Write:      []WritePath{{Path: f.ws}},
		DenyRead:   []string{filepath.Join(f.ws, ".env"), filepath.Join(f.ws, "secrets")},
		Mounts:     []Mount{{Source: f.data, Target: f.mnt}},
		PrivateTmp: true,
		Lookup:     HostLookup,
		Resolve:    HostResolve,
	}
	spec.DenyWrite, spec.Pin = GitProtected(f.ws, HostLookup, HostReadFile, HostReadDir)
	plan, err := Build(spec)
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range plan.Gaps {
		if g.Field == "private_tmp" {
			t.Logf("not made private: %s: %s", g.Path, g.Reason) // /dev/shm in the kernel matrix's guests
			continue
		}
		t.Fatalf("gap: %+v", g)
	}
	if err := Apply(plan); err != nil {
		t.Fatalf("%v\nplan:\n%s", err, strings.Join(plan.Lines(), "\n"))
	}

	// The workspace is writable, and git works in it.
	if err := os.WriteFile(filepath.Join(f.ws, "new"), []byte("x"), 0o644); err != nil {
		t.Errorf("write in the workspace: %v", err)
	}
	if haveGit() {
		cmd := exec.Command("git", "-C", f.ws, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m", "second")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("git commit in the workspace: %v\n%s", err, out)
		}
	} else {
		t.Log("git is not installed here: git commit and git config are not tried (the kernel matrix's guests); the paths are")
	}
	// Hooks and config cannot be written, made, renamed or swapped.
	hook := filepath.Join(f.ws, ".git", "hooks", "pre-commit")
	errnoIs(t, "create .git/hooks/pre-commit", os.WriteFile(hook, []byte("#!/bin/sh\n"), 0o755), syscall.EROFS)
	_, err = os.OpenFile(filepath.Join(f.ws, ".git", "config"), os.O_WRONLY|os.O_APPEND, 0)
	errnoIs(t, "open .git/config for writing", err, syscall.EROFS)
	errnoIs(t, "rename .git/config", os.Rename(filepath.Join(f.ws, ".git", "config"), filepath.Join(f.ws, ".git", "c2")), syscall.EBUSY)
	errnoIs(t, "rename .git", os.Rename(filepath.Join(f.ws, ".git"), filepath.Join(f.ws, ".g")), syscall.EBUSY)
	errnoIs(t, "remove .git/hooks", os.Remove(filepath.Join(f.ws, ".git", "hooks")), syscall.EBUSY)
	if haveGit() {
		cmd := exec.Command("git", "-C", f.ws, "config", "core.hooksPath", "/tmp/x")
		if out, err := cmd.CombinedOutput(); err == nil {
			t.Errorf("git config core.hooksPath succeeded:\n%s", out)
		}
	}

	// Hidden paths show nothing of what they hold.
	_, err = os.ReadFile(filepath.Join(f.ws, ".env"))
	errnoIs(t, "read the hidden file", err, syscall.EACCES)
	_, err = os.OpenFile(filepath.Join(f.ws, ".env"), os.O_WRONLY|os.O_APPEND, 0)
	errnoIs(t, "write the hidden file", err, syscall.EACCES)
	if entries, err := os.ReadDir(filepath.Join(f.ws, "secrets")); len(entries) != 0 {
		t.Errorf("hidden directory lists %v (%v)", entries, err)
	}
	// Mode 000 answers first for a user without capabilities, the
	// read-only mount for root: either way nothing is written.
	if err := os.WriteFile(filepath.Join(f.ws, "secrets", "x"), nil, 0o644); !errors.Is(err, syscall.EROFS) && !errors.Is(err, syscall.EACCES) {
		t.Errorf("write into the hidden directory: %v, want EROFS or EACCES", err)
	}

	// Outside the write paths, metadata cannot change: a change that
	// changes nothing, so only the permission check decides.
	outside := filepath.Join(f.other, "file")
	errnoIs(t, "chmod outside", os.Chmod(outside, 0o644), syscall.EROFS)
	errnoIs(t, "chown outside", os.Chown(outside, os.Getuid(), os.Getgid()), syscall.EROFS)
	var st unix.Stat_t
	if err := unix.Stat(outside, &st); err != nil {
		t.Fatal(err)
	}
	errnoIs(t, "utimes outside", unix.UtimesNano(outside, []unix.Timespec{st.Atim, st.Mtim}), syscall.EROFS)
	errnoIs(t, "setxattr outside", unix.Setxattr(outside, "user.sandbox", []byte("x"), 0), syscall.EROFS)

	// What the sandbox writes cannot be run, not even through the loader.
	err = exec.Command(filepath.Join(f.ws, "payload")).Run()
	errnoIs(t, "exec of a file in the workspace", err, syscall.EACCES)
	const loader = "/lib64/ld-linux-x86-64.so.2"
	if out, err := exec.Command(loader, "/bin/true").CombinedOutput(); err != nil {
		// The positive control: without it a missing loader would pass.
		t.Logf("the loader cannot run /bin/true here (%v: %s): the ld.so route is not tried", err, bytes.TrimSpace(out))
	} else if out, err := exec.Command(loader, filepath.Join(f.ws, "payload")).CombinedOutput(); err == nil {
		t.Errorf("ld.so ran a file from the noexec workspace:\n%s", out)
	} else {
		t.Logf("ld.so on the workspace file: %v: %s", err, bytes.TrimSpace(out))
	}

	// /tmp is private: the host's file is not there, and what is made
	// here stays here.
	_, err = os.Stat(f.tmpFile)
	errnoIs(t, "host's /tmp file in the private /tmp", err, syscall.ENOENT)
	if err := os.WriteFile("/tmp/made-inside", nil, 0o644); err != nil {
		t.Errorf("write in the private /tmp: %v", err)
	}

	// The mount shows the source, read-only.
	if b, err := os.ReadFile(filepath.Join(f.mnt, "shown")); err != nil || string(b) != "data\n" {
		t.Errorf("mounted file: %q %v", b, err)
	}
	errnoIs(t, "write into the read-only mount", os.WriteFile(filepath.Join(f.mnt, "shown"), nil, 0o644), syscall.EROFS)
}
