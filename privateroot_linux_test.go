package sandbox_test

// The sandbox's own root (issue 32): a Mount at a path the host does not
// have, PrivateRoot alone, what the own root hides (names and stat of
// everything not granted, the host's mount table, other processes), and
// that nothing is left on the host. Each runs a real program (this test
// binary's fsop helper, /bin/sh) under Run, through both child halves
// (the static helper and the Go trampoline), as root and as nobody.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openparallax/sandbox"
	"github.com/openparallax/sandbox/internal/childtest"
)

// bothHalves runs f once with the static helper as the child half and
// once with the Go trampoline.
func bothHalves(t *testing.T, f func(t *testing.T)) {
	t.Run("helper", f)
	t.Run("go-trampoline", func(t *testing.T) {
		defer sandbox.ForceGoTrampoline()()
		f(t)
	})
}

// absentAt returns a path at the top of the host's tree that does not
// exist (where a Mount is shown), and checks it is still absent when the
// test ends: nothing is made on the host.
func absentAt(t *testing.T, name string) string {
	t.Helper()
	at := fmt.Sprintf("/%s-%d-%d", name, os.Getpid(), time.Now().UnixNano())
	if _, err := os.Lstat(at); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("%s exists on the host: %v", at, err)
	}
	t.Cleanup(func() {
		if _, err := os.Lstat(at); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s was made on the host: %v", at, err)
			os.Remove(at)
		}
	})
	return at
}

// sourceDir makes a directory with a file "hello" in it.
func sourceDir(t *testing.T) string {
	t.Helper()
	d := realTempDir(t)
	if err := os.WriteFile(filepath.Join(d, "hello"), []byte("hi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return d
}

// requirePrivateRoot skips a test where WrapCommand and Run cannot give
// the program a root of its own (the plan's private_root entry says why:
// no user namespaces, or a root on the initial ramfs, as in the kernel
// matrix's guests).
func requirePrivateRoot(t *testing.T) {
	t.Helper()
	requireNamespaces(t)
	plan, err := sandbox.PlanFor(sandbox.Config{PrivateRoot: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range plan.Features {
		if f.Feature == sandbox.FeaturePrivateRoot && f.Scope == sandbox.ScopeCommand {
			if !f.Enforced {
				t.Skipf("no own root here: %s", f.Detail)
			}
			return
		}
	}
	t.Fatalf("the plan has no private_root entry for WrapCommand/Run: %+v", plan.Features)
}

func TestRunPrivateRootMounts(t *testing.T) {
	requirePrivateRoot(t)
	checkRootMounts(t, nsWorkspace(t))
}

func TestRunPrivateRootMountsAsNobody(t *testing.T) {
	requireSandbox(t)
	ws, ok := nobodyWorkspace(t)
	if !ok {
		return
	}
	requirePrivateRoot(t)
	checkRootMounts(t, ws)
}

// checkRootMounts: a read-only Mount and a writable one at paths the host
// does not have; a directory of the host outside every grant does not
// exist inside; the deny and git protections in the write path hold.
func checkRootMounts(t *testing.T, ws string) {
	bothHalves(t, func(t *testing.T) {
		ro, rw, hidden := sourceDir(t), sourceDir(t), sourceDir(t)
		atRO, atRW := absentAt(t, "workspace"), absentAt(t, "data")
		cfg := sandbox.Config{AllowedWritePaths: []string{ws}, DenyReadPaths: []string{filepath.Join(ws, ".env")},
			Mounts: []sandbox.Mount{{Path: ro, At: atRO}, {Path: rw, At: atRW, Write: true}}}
		ops := []string{"read:" + atRO + "/hello", "ls:" + atRO, "write:" + atRO + "/new", "chmod:" + atRO + "/hello",
			"read:" + atRW + "/hello", "write:" + atRW + "/new",
			"read:" + hidden + "/hello", "chmod:" + hidden, "mkdir:" + hidden + "/x",
			"write:" + filepath.Join(ws, "file"), "read:" + filepath.Join(ws, ".env"), "write:" + filepath.Join(ws, ".git", "config"),
			"read:/etc/hosts", "ls:/usr/lib"}
		got := fsops(t, cfg, ws, ops...)
		wantOp(t, got, "read:"+atRO+"/hello", 0)
		wantOp(t, got, "ls:"+atRO, 0)
		wantOp(t, got, "write:"+atRO+"/new", syscall.EROFS)
		wantOp(t, got, "chmod:"+atRO+"/hello", syscall.EROFS)
		wantOp(t, got, "read:"+atRW+"/hello", 0)
		wantOp(t, got, "write:"+atRW+"/new", 0)
		// Not there at all: no name, no stat (Landlock alone would let
		// chmod through with EROFS, and say EACCES to the read).
		wantOp(t, got, "read:"+hidden+"/hello", syscall.ENOENT)
		wantOp(t, got, "chmod:"+hidden, syscall.ENOENT)
		wantOp(t, got, "mkdir:"+hidden+"/x", syscall.ENOENT)
		wantOp(t, got, "write:"+filepath.Join(ws, "file"), 0)
		wantOp(t, got, "read:"+filepath.Join(ws, ".env"), syscall.EACCES)
		wantOp(t, got, "write:"+filepath.Join(ws, ".git", "config"), syscall.EROFS)
		if _, err := os.Stat("/etc/hosts"); err == nil {
			wantOp(t, got, "read:/etc/hosts", 0)
		}
		if _, err := os.Stat("/usr/lib"); err == nil {
			wantOp(t, got, "ls:/usr/lib", 0)
		}
		if b, err := os.ReadFile(filepath.Join(rw, "new")); err != nil || string(b) != "x\n" {
			t.Errorf("the write through the writable Mount did not land in its source: %q, %v", b, err)
		}
		if _, err := os.Stat(filepath.Join(ro, "new")); err == nil {
			t.Errorf("a file appeared in the read-only Mount's source")
		}
	})
}

func TestRunPrivateRootAlone(t *testing.T) {
	requirePrivateRoot(t)
	checkRootAlone(t, nsWorkspace(t))
}

func TestRunPrivateRootAloneAsNobody(t *testing.T) {
	requireSandbox(t)
	ws, ok := nobodyWorkspace(t)
	if !ok {
		return
	}
	requirePrivateRoot(t)
	checkRootAlone(t, ws)
}

// checkRootAlone: PrivateRoot without Mounts, with git protection and a
// hidden directory inside the write path, the working directory in it.
func checkRootAlone(t *testing.T, ws string) {
	bothHalves(t, func(t *testing.T) {
		hidden := sourceDir(t)
		secrets := filepath.Join(ws, "secrets")
		cfg := sandbox.Config{PrivateRoot: true, AllowedWritePaths: []string{ws}, DenyReadPaths: []string{secrets}}
		got := fsops(t, cfg, ws, "write:file", "ls:"+secrets, "read:"+secrets+"/key", "write:"+filepath.Join(ws, ".git", "config"),
			"mkdir:"+filepath.Join(ws, ".git", "hooks", "x"), "read:"+hidden+"/hello", "ls:/root", "write:/tmp/scratch", "chmod:/")
		wantOp(t, got, "write:file", 0)
		wantOp(t, got, "ls:"+secrets, syscall.EACCES)
		wantOp(t, got, "read:"+secrets+"/key", syscall.EACCES)
		wantOp(t, got, "write:"+filepath.Join(ws, ".git", "config"), syscall.EROFS)
		wantOp(t, got, "mkdir:"+filepath.Join(ws, ".git", "hooks", "x"), syscall.EROFS)
		wantOp(t, got, "read:"+hidden+"/hello", syscall.ENOENT)
		wantOp(t, got, "ls:/root", syscall.ENOENT)
		wantOp(t, got, "write:/tmp/scratch", 0) // the private /tmp
		wantOp(t, got, "chmod:/", syscall.EROFS)
		if _, err := os.Stat("/tmp/scratch"); err == nil {
			t.Errorf("the private /tmp's file is on the host")
		}
	})
}

func TestRunPrivateRootShell(t *testing.T) {
	requirePrivateRoot(t)
	checkRootShell(t)
}

func TestRunPrivateRootShellAsNobody(t *testing.T) {
	requireSandbox(t)
	if !childtest.AsNobody(t) {
		return
	}
	requirePrivateRoot(t)
	checkRootShell(t)
}

// checkRootShell runs /bin/sh in the own root with a Mount at a path the
// host does not have, spawning allowed (so Run gives it a PID namespace
// and the own root a fresh /proc): /bin/sh runs (through the merged-/usr
// link, where the host has one), and runs ls; a directory of the host
// outside every grant does not exist (test -e, a stat Landlock does not
// refuse); the Mount's file is there; /proc/1 is the shell itself; the
// mount table names none of the host's other mount points.
func checkRootShell(t *testing.T) {
	for _, p := range []string{"/bin/sh", "/usr/bin/ls"} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("needs %s (the kernel-matrix guest has no coreutils): %v", p, err)
		}
	}
	bothHalves(t, func(t *testing.T) {
		src, hidden, ws := sourceDir(t), sourceDir(t), sourceDir(t)
		at := absentAt(t, "workspace")
		cfg := sandbox.Config{AllowProcessSpawn: true, AllowedExecPaths: []string{"/bin/sh", "/usr/bin/ls"},
			AllowedWritePaths: []string{ws}, Mounts: []sandbox.Mount{{Path: src, At: at}}}
		script := `echo "pid $$"
read -r c < /proc/1/comm && echo "comm1 $c"
read -r x < ` + at + `/hello && echo "mounted $x"
test -e ` + hidden + ` && echo "hidden-visible" || echo "hidden-absent"
test -e /root && echo "root-visible" || echo "root-absent"
/usr/bin/ls ` + at + ` && echo "ls-ok"
while read -r l; do echo "mi $l"; done < /proc/self/mountinfo`
		res, err := sandbox.Run(context.Background(), cfg, "/bin/sh", []string{"-c", script},
			sandbox.RunOptions{Dir: "/", Timeout: 30 * time.Second})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("sh: %v, exit %d\nstdout %s\nstderr %s", err, res.ExitCode, res.Stdout, res.Stderr)
		}
		out := string(res.Stdout)
		for _, want := range []string{"pid 1\n", "mounted hi\n", "hidden-absent\n", "root-absent\n", "hello\nls-ok\n"} {
			if !strings.Contains(out, want) {
				t.Errorf("no %q in the output:\n%s\nstderr %s", want, out, res.Stderr)
			}
		}
		if !strings.Contains(out, "comm1 sh\n") && !strings.Contains(out, "comm1 dash\n") && !strings.Contains(out, "comm1 bash\n") {
			t.Errorf("/proc/1 is not the shell (a fresh /proc of its PID namespace):\n%s", out)
		}
		checkMountTable(t, out, []string{src, at, ws, "/usr", "/etc", "/lib", "/lib64", "/bin"})
		// What the mount layer does holds in the own root: its tmpfs
		// read-only, the write path noexec, the Mount read-only, /tmp
		// and /dev/shm fresh tmpfs.
		for mp, want := range map[string]string{"/": "ro", ws: "noexec", at: "ro", "/tmp": "tmpfs", "/dev/shm": "tmpfs"} {
			if !mountHas(out, mp, want) {
				t.Errorf("the mount at %s in the own root is not %s:\n%s", mp, want, out)
			}
		}
	})
}

// mountHas reports whether the last mount at mp among the "mi " lines of
// out has the option opt, or is of the type opt.
func mountHas(out, mp, opt string) bool {
	has := false
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) < 8 || f[0] != "mi" || f[5] != mp {
			continue
		}
		has = slices.Contains(strings.Split(f[6], ","), opt)
		for i := 7; i < len(f)-1; i++ {
			if f[i] == "-" {
				has = has || f[i+1] == opt
			}
		}
	}
	return has
}

// checkMountTable checks that the mount points the program saw ("mi "
// lines of out) name none of the host's own mount points outside the
// own root's: /, /dev, /proc, /tmp and the granted paths.
func checkMountTable(t *testing.T, out string, granted []string) {
	t.Helper()
	inside := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 5 && f[0] == "mi" {
			inside[f[5]] = true
		}
	}
	if !inside["/"] || !inside["/proc"] {
		t.Fatalf("the program's mount table has no / or /proc:\n%s", out)
	}
	host, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	keep := append([]string{"/dev", "/proc", "/tmp"}, granted...)
	checked := 0
	for _, l := range strings.Split(string(host), "\n") {
		f := strings.Fields(l)
		if len(f) < 5 || f[4] == "/" {
			continue
		}
		mp := f[4]
		related := false
		for _, g := range keep {
			if mp == g || strings.HasPrefix(mp, g+"/") || strings.HasPrefix(g, mp+"/") {
				related = true
			}
		}
		if related {
			continue
		}
		checked++
		if inside[mp] {
			t.Errorf("the host's mount point %s is in the program's mount table", mp)
		}
	}
	t.Logf("%d host mount points checked absent, %d mounts inside", checked, len(inside))
}

// TestRunPrivateRootEgressResolvConf: with the egress layer's transparent
// path, the own root shows its generated resolv.conf at /etc/resolv.conf
// (a Mount of the layer's own, made in the new root).
func TestRunPrivateRootEgressResolvConf(t *testing.T) {
	requirePrivateRoot(t)
	if _, err := os.Stat("/bin/cat"); err != nil {
		t.Skipf("needs /bin/cat: %v", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	f := newFakeNet(t)
	f.Alias("api.example.test", "127.0.0.1")
	cfg := sandbox.Config{PrivateRoot: true, AllowedExecPaths: []string{"/bin/cat"},
		AllowedTCPConnect: []string{fmt.Sprintf("api.example.test:%d", l.Addr().(*net.TCPAddr).Port)}}
	requireEgress(t, cfg)
	if pl, _ := sandbox.PlanFor(cfg); pl.Egress.Mode != sandbox.EgressTransparent {
		t.Skipf("the transparent path is not used here: %s", pl.Egress.Reason)
	}
	bothHalves(t, func(t *testing.T) {
		res, err := sandbox.Run(context.Background(), cfg, "/bin/cat", []string{"/etc/resolv.conf"}, sandbox.RunOptions{Dir: "/", Timeout: time.Minute})
		if err != nil || !strings.Contains(string(res.Stdout), "Generated by the sandbox") || !strings.Contains(string(res.Stdout), "\nnameserver 127.0.0.1\n") {
			t.Fatalf("/etc/resolv.conf in the own root: %v %q %q", err, res.Stdout, res.Stderr)
		}
	})
}

// TestApplySelfRefusesViews: ApplySelf cannot change what the process
// sees (it cannot enter new namespaces): a Config with Mounts or
// PrivateRoot is refused with the reason, and nothing is applied (in a
// re-executed child, which then still reads a file no grant names).
func TestApplySelfRefusesViews(t *testing.T) {
	requireSandbox(t)
	childtest.Run(t, func(t *testing.T) {
		dir := t.TempDir()
		for _, cfg := range []sandbox.Config{
			{Mounts: []sandbox.Mount{{Path: dir, At: "/workspace"}}},
			{Mounts: []sandbox.Mount{{Path: dir, At: dir}}},
			{PrivateRoot: true},
		} {
			err := sandbox.New().ApplySelf(cfg)
			if !errors.Is(err, sandbox.ErrUnavailable) || !strings.Contains(err.Error(), "ApplySelf: refused") {
				t.Fatalf("%+v: %v; want a refusal matching ErrUnavailable", cfg, err)
			}
		}
		if _, err := os.ReadFile("/proc/self/status"); err != nil {
			t.Fatalf("the refusal left the process confined: %v", err)
		}
		if err := os.WriteFile(filepath.Join(dir, "after"), nil, 0o644); err != nil {
			t.Fatalf("the refusal left the process confined: %v", err)
		}
	})
}
