package sandbox_test

// Every view of a path (issue 27): a deny or a protection holds wherever
// the path is visible (its own path, a Mount's target, an alias, a path
// kept visible in a private /tmp), mount sources are checked for planted
// symlinks as grants are, and the mount layer's read-only view is the
// default under Run. Each test runs the real program (this test binary's
// fsop helper, sh, python3) under Run and checks the exact errno.

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openparallax/sandbox"
	"github.com/openparallax/sandbox/internal/childtest"
)

// TestRunMountSourcePlanted: run 1 replaces ws/cache with a symlink to a
// secret directory (as a hostile program can); run 2 asks to show
// ws/cache writable at /tmp/view. The source resolves through a link the
// program planted, so run 2 is refused as a ConfigError before anything
// runs, and the secret is neither read nor written. The same for a
// target reached through such a link.
func TestRunMountSourcePlanted(t *testing.T) {
	requireSandbox(t)
	sh := need(t, "/bin/sh", "dash")
	need(t, "/bin/rm", "coreutils") // run 1's program plants the link with rm and ln
	need(t, "/bin/ln", "coreutils")
	base := realTempDir(t)
	ws, secret := filepath.Join(base, "ws"), filepath.Join(base, "secret")
	for _, d := range []string{filepath.Join(ws, "cache"), secret} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	key := filepath.Join(secret, "key")
	os.WriteFile(key, []byte("secret\n"), 0o644)
	cfg := sandbox.Config{AllowedWritePaths: []string{ws}, AllowProcessSpawn: true, AllowedExecPaths: []string{"/usr/bin", "/bin"}}
	res, err := sandbox.Run(context.Background(), cfg, sh, []string{"-c", "rm -r cache && ln -s " + secret + " cache && ln -s " + secret + " at"},
		sandbox.RunOptions{Dir: ws, Env: []string{"PATH=/usr/bin:/bin"}})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("run 1: %v: exit %d, stderr %s", err, res.ExitCode, res.Stderr)
	}
	if fi, err := os.Lstat(filepath.Join(ws, "cache")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("run 1 did not plant the link: %v", err)
	}

	cfg2 := sandbox.Config{AllowedWritePaths: []string{ws}, Mounts: []sandbox.Mount{{Path: filepath.Join(ws, "cache"), At: "/tmp/view", Write: true}}}
	cfg2.AllowedExecPaths = []string{self(t)}
	res, err = sandbox.Run(context.Background(), cfg2, self(t), []string{helperArg, "fsop", "read:/tmp/view/key", "write:/tmp/view/planted"},
		sandbox.RunOptions{Env: []string{quickExit}, Timeout: 30 * time.Second})
	var ce *sandbox.ConfigError
	if !errors.As(err, &ce) || ce.Field != "mounts" || !strings.Contains(err.Error(), "symlink") {
		t.Errorf("run 2: %v (stdout %q); want a ConfigError for mounts naming the planted symlink", err, res.Stdout)
	}
	if b, _ := os.ReadFile(key); string(b) != "secret\n" {
		t.Errorf("the secret changed: %q", b)
	}
	if _, err := os.Lstat(filepath.Join(secret, "planted")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("run 2 wrote into the secret directory: %v", err)
	}
	// A target reached through a planted link: the view would land in
	// the secret directory's place.
	other := t.TempDir()
	for _, strict := range []bool{false, true} {
		_, err = sandbox.PlanFor(sandbox.Config{Strict: strict, AllowedWritePaths: []string{ws},
			Mounts: []sandbox.Mount{{Path: other, At: filepath.Join(ws, "at", "view")}}})
		if !errors.As(err, &ce) || ce.Field != "mounts" || !strings.Contains(err.Error(), "at: resolves through the symlink") {
			t.Errorf("a target through the planted link (Strict %v): %v; want a ConfigError", strict, err)
		}
	}
	// Control: the link's target named directly is accepted.
	if _, err := sandbox.PlanFor(sandbox.Config{AllowedWritePaths: []string{ws}, Mounts: []sandbox.Mount{{Path: secret, At: "/tmp/view"}}}); err != nil {
		t.Errorf("the secret directory named directly: %v", err)
	}
}

// TestRunKeptTmpPathReadOnly: a read grant and the working directory
// under /tmp stay visible in the private /tmp, with the flags they would
// have outside: chmod and utimes by path and fsetxattr through a
// read-only descriptor of a file there fail with EROFS (they were the
// host's read-write mount). As root, and as nobody on its own file.
func TestRunKeptTmpPathReadOnly(t *testing.T) {
	requireNamespaces(t)
	checkKeptTmpPath(t, nsWorkspace(t))
}

func TestRunKeptTmpPathReadOnlyAsNobody(t *testing.T) {
	requireSandbox(t)
	ws, ok := nobodyWorkspace(t)
	if !ok {
		return
	}
	requireNamespaces(t)
	checkKeptTmpPath(t, ws)
}

func checkKeptTmpPath(t *testing.T, ws string) {
	t.Helper()
	if !strings.HasPrefix(ws, "/tmp/") {
		t.Skipf("the workspace %s is not under /tmp (TMPDIR): nothing is kept visible in a private /tmp", ws)
	}
	ro := filepath.Join(ws, "ro")
	victim := filepath.Join(ro, "file")
	before, err := os.Stat(victim)
	if err != nil {
		t.Fatal(err)
	}
	// A deny-write path outside every write path asks for the layer
	// without changing anything else.
	cfg := sandbox.Config{AllowedReadPaths: []string{ro}, DenyWritePaths: []string{"/nonexistent-probe"}}
	got := fsops(t, cfg, ro, "read:"+victim, "chmod:"+victim, "utimes:"+victim, "fsetxattr:"+victim, "chmod:"+ro)
	wantOp(t, got, "read:"+victim, 0)
	for _, op := range []string{"chmod:" + victim, "utimes:" + victim, "fsetxattr:" + victim, "chmod:" + ro} {
		wantOp(t, got, op, syscall.EROFS)
	}
	if after, err := os.Stat(victim); err != nil {
		t.Error(err)
	} else if !after.ModTime().Equal(before.ModTime()) {
		t.Errorf("the victim's times changed: %v → %v", before.ModTime(), after.ModTime())
	}
}

// TestRunPlainConfigMetadata: under Run with a plain Config (nothing
// granted), chmod and utimes by path of a file outside every grant that
// the user owns fail with EROFS: the mount layer is used by default, and
// the plan says file_metadata is enforced for WrapCommand/Run. As root,
// and as nobody on its own file. The file is not under /tmp, which the
// layer makes private.
func TestRunPlainConfigMetadata(t *testing.T) {
	requireNamespaces(t)
	checkPlainConfigMetadata(t, metaDir(t))
}

func TestRunPlainConfigMetadataAsNobody(t *testing.T) {
	requireSandbox(t)
	const env = "SANDBOX_PLAIN_META_DIR"
	if !childtest.InNobodyRun(t) {
		requireRoot(t)
		dir := metaDir(t)
		chownTree(t, dir, 65534)
		childtest.AsNobody(t, env+"="+dir)
		return
	}
	requireNamespaces(t)
	checkPlainConfigMetadata(t, os.Getenv(env))
}

// metaDir makes a directory outside /tmp with a file "victim" in it.
func metaDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp(pick(dirExists("/var/tmp"), "/var/tmp", "/"), "sandbox-plain-meta-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	if err := os.WriteFile(filepath.Join(dir, "victim"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func checkPlainConfigMetadata(t *testing.T, dir string) {
	t.Helper()
	victim := filepath.Join(dir, "victim")
	got := fsops(t, sandbox.Config{}, "/", "chmod:"+victim, "utimes:"+victim, "chmod:"+dir)
	for _, op := range []string{"chmod:" + victim, "utimes:" + victim, "chmod:" + dir} {
		wantOp(t, got, op, syscall.EROFS)
	}
	plan, err := sandbox.PlanFor(sandbox.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if f := metadataEntry(plan); f.Scope != sandbox.ScopeCommand || !f.Enforced {
		t.Errorf("a plain Config's file_metadata entry for WrapCommand/Run: %+v; want enforced", f)
	}
}

// TestRunPythonPoolPlainConfig: Python's multiprocessing.Pool(2) under
// Run with a plain Config (spawn allowed, /usr/bin executable) works on
// first contact: its SemLock lives in /dev/shm, which the layer makes a
// private tmpfs granted read-write (without the layer Landlock refuses it:
// EACCES). The real /usr/bin/python3; the run has a deadline.
func TestRunPythonPoolPlainConfig(t *testing.T) {
	requireNamespaces(t)
	py := need(t, "/usr/bin/python3", "python3")
	cfg := sandbox.Config{AllowProcessSpawn: true, AllowedExecPaths: []string{"/usr/bin", "/bin"}}
	script := "from multiprocessing import Pool\nwith Pool(2) as p:\n    print(sum(p.map(abs, [-1, -2, 3])))\n"
	res, err := sandbox.Run(context.Background(), cfg, py, []string{"-c", script},
		sandbox.RunOptions{Dir: "/", Env: []string{"PATH=/usr/bin:/bin"}, Timeout: 60 * time.Second})
	if err != nil || res.ExitCode != 0 || strings.TrimSpace(string(res.Stdout)) != "6" {
		t.Errorf("Pool(2): %v, exit %d\nstdout %s\nstderr %s", err, res.ExitCode, res.Stdout, res.Stderr)
	}
}

// TestRunViewsOfProtectedPaths: a path is denied or protected wherever
// the sandbox sees it, not only at its own path. In a workspace holding a
// git repository, a secret file and directory:
//   - a DenyReadPaths file through a Mount of its parent, and a denied
//     directory through a Mount of the workspace: EACCES;
//   - an alias Mount (writable) of a workspace that is a write path: the
//     repository's hooks and config are EROFS through the alias as at
//     their own path, the rest of the alias is writable;
//   - a repository shown through a writable Mount (not a write path):
//     hooks and config EROFS, .git cannot be renamed (EBUSY), the rest is
//     writable, and the plan names the repository.
//
// As root, and as nobody on its own workspace.
func TestRunViewsOfProtectedPaths(t *testing.T) {
	requireNamespaces(t)
	checkViews(t, nsWorkspace(t))
}

func TestRunViewsOfProtectedPathsAsNobody(t *testing.T) {
	requireSandbox(t)
	ws, ok := nobodyWorkspace(t)
	if !ok {
		return
	}
	requireNamespaces(t)
	checkViews(t, ws)
}

func checkViews(t *testing.T, ws string) {
	t.Helper()
	hooks, config := filepath.Join(ws, ".git", "hooks"), filepath.Join(ws, ".git", "config")
	t.Run("deny_read through a Mount", func(t *testing.T) {
		cfg := sandbox.Config{
			Mounts:        []sandbox.Mount{{Path: filepath.Join(ws, "secrets"), At: "/tmp/view-s"}, {Path: ws, At: "/tmp/view-w"}},
			DenyReadPaths: []string{filepath.Join(ws, "secrets", "key"), filepath.Join(ws, "secrets")},
		}
		got := fsops(t, cfg, "/", "read:/tmp/view-s/key", "read:/tmp/view-w/secrets/key", "ls:/tmp/view-w/secrets", "read:/tmp/view-w/file")
		wantOp(t, got, "read:/tmp/view-s/key", syscall.EACCES)
		wantOp(t, got, "read:/tmp/view-w/secrets/key", syscall.EACCES)
		wantOp(t, got, "ls:/tmp/view-w/secrets", syscall.EACCES)
		wantOp(t, got, "read:/tmp/view-w/file", 0) // control: the view is there
	})
	t.Run("an alias Mount of a protected repository", func(t *testing.T) {
		cfg := sandbox.Config{AllowedWritePaths: []string{ws}, Mounts: []sandbox.Mount{{Path: ws, At: "/tmp/alias", Write: true}}}
		got := fsops(t, cfg, ws, "write:/tmp/alias/.git/hooks/pre-commit", "append:/tmp/alias/.git/config",
			"write:"+filepath.Join(hooks, "pre-commit"), "write:/tmp/alias/new")
		wantOp(t, got, "write:/tmp/alias/.git/hooks/pre-commit", syscall.EROFS)
		wantOp(t, got, "append:/tmp/alias/.git/config", syscall.EROFS)
		wantOp(t, got, "write:"+filepath.Join(hooks, "pre-commit"), syscall.EROFS)
		wantOp(t, got, "write:/tmp/alias/new", 0)
	})
	t.Run("a repository through a writable Mount", func(t *testing.T) {
		cfg := sandbox.Config{Mounts: []sandbox.Mount{{Path: ws, At: "/tmp/view", Write: true}}}
		got := fsops(t, cfg, "/", "write:/tmp/view/.git/hooks/pre-commit", "append:/tmp/view/.git/config",
			"rename:/tmp/view/.git:/tmp/view/.git2", "write:/tmp/view/new")
		wantOp(t, got, "write:/tmp/view/.git/hooks/pre-commit", syscall.EROFS)
		wantOp(t, got, "append:/tmp/view/.git/config", syscall.EROFS)
		wantOp(t, got, "rename:/tmp/view/.git", syscall.EBUSY)
		wantOp(t, got, "write:/tmp/view/new", 0)
		plan, err := sandbox.PlanFor(cfg)
		if err != nil {
			t.Fatal(err)
		}
		var named bool
		for _, f := range plan.Features {
			if f.Feature == sandbox.FeatureGitProtect && f.Enforced && strings.Contains(f.Detail, filepath.Join(ws, ".git")) {
				named = true
			}
		}
		if !named {
			t.Errorf("the plan does not say the repository shown through the Mount is protected: %+v", plan.Features)
		}
	})
	for _, p := range []string{filepath.Join(hooks, "pre-commit"), filepath.Join(ws, "new")} {
		if p == filepath.Join(ws, "new") {
			continue // written by the controls
		}
		if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s was written: %v", p, err)
		}
	}
	if b, _ := os.ReadFile(config); strings.Contains(string(b), "x\n") {
		t.Errorf("%s was appended to", config)
	}
}

// TestRunDenyReadThroughMount: a DenyReadPaths file outside /tmp, shown
// through a read-only Mount of its parent directory: EACCES there, while
// its neighbour is readable through the same Mount.
func TestRunDenyReadThroughMount(t *testing.T) {
	requireNamespaces(t)
	data := hostDir(t)
	for _, f := range []string{"key", "other"} {
		if err := os.WriteFile(filepath.Join(data, f), []byte(f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := sandbox.Config{Mounts: []sandbox.Mount{{Path: data, At: "/tmp/view"}}, DenyReadPaths: []string{filepath.Join(data, "key")}}
	got := fsops(t, cfg, "/", "read:/tmp/view/key", "read:/tmp/view/other")
	wantOp(t, got, "read:/tmp/view/key", syscall.EACCES)
	wantOp(t, got, "read:/tmp/view/other", 0)
}

// TestStrictStdioHostFile: under Strict, a regular file given as the
// program's standard input (Run's RunOptions.Stdin; WrapCommand's
// cmd.Stdin and cmd.Stdout) reaches it as a pipe: futimens on
// descriptor 0 or 1 changes nothing on the host (it changed the file's
// times: the descriptor was the host's), and the program still reads
// and writes the file's bytes. Without Strict the file is passed as it
// is (the documented default), which the control shows. Strict refuses
// a dynamically linked target (exec_loader), so the program is a static
// one built here.
func TestStrictStdioHostFile(t *testing.T) {
	requireNamespaces(t)
	prog := staticStdioProgram(t)
	if _, err := sandbox.PlanFor(sandbox.Config{Strict: true, AllowedExecPaths: []string{prog}}); err != nil {
		t.Skipf("Strict cannot be used here: %v", err)
	}
	dir := hostDir(t)
	in, out := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	past := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, p := range []string{in, out} {
		if err := os.WriteFile(p, []byte("input\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, past, past); err != nil {
			t.Fatal(err)
		}
	}
	changed := func(p string) bool {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		defer os.Chtimes(p, past, past)
		return !fi.ModTime().Equal(past)
	}
	run := func(strict bool) sandbox.RunResult {
		f, err := os.Open(in)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		cfg := sandbox.Config{Strict: strict, AllowedExecPaths: []string{prog}}
		res, err := sandbox.Run(context.Background(), cfg, prog, nil, sandbox.RunOptions{Stdin: f, Timeout: 30 * time.Second})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("Strict %v: %v, exit %d, stderr %s", strict, err, res.ExitCode, res.Stderr)
		}
		return res
	}
	if res := run(false); !strings.Contains(string(res.Stderr), "fd 0: futimens 0 fifo false") || !changed(in) {
		t.Errorf("control: without Strict the file was not passed as it is (%s): the test shows nothing", res.Stderr)
	}
	res := run(true)
	if !strings.Contains(string(res.Stderr), "fd 0: futimens 0 fifo true") || string(res.Stdout) != "input\n" {
		t.Errorf("Strict: stderr %q, stdout %q; want standard input a pipe carrying the file", res.Stderr, res.Stdout)
	}
	if changed(in) {
		t.Errorf("Strict: futimens of standard input changed the host file %s", in)
	}

	// WrapCommand: a file as standard input and output.
	fin, _ := os.Open(in)
	defer fin.Close()
	fout, _ := os.OpenFile(out, os.O_WRONLY|os.O_APPEND, 0)
	defer fout.Close()
	cmd := exec.Command(prog)
	cmd.Stdin, cmd.Stdout = fin, fout
	wrap(t, cmd, sandbox.Config{Strict: true, AllowedExecPaths: []string{prog}})
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("WrapCommand: %v: %s", err, stderr.String())
	}
	// The output file's mtime moves with the bytes written to it; its
	// access time only with futimens (nothing reads it).
	var st syscall.Stat_t
	if err := syscall.Stat(out, &st); err != nil {
		t.Fatal(err)
	}
	if changed(in) || time.Unix(st.Atim.Unix()).Year() != 2001 {
		t.Errorf("Strict WrapCommand: futimens on descriptor 0 or 1 changed a host file (%s)", stderr.String())
	}
	if b, _ := os.ReadFile(out); string(b) != "input\ninput\n" || !strings.Contains(stderr.String(), "fd 1: futimens 0 fifo true") {
		t.Errorf("Strict WrapCommand: the file holds %q, stderr %q; want the input appended through a pipe", b, stderr.String())
	}
}

// staticStdioProgram builds a static program that calls futimens on
// descriptors 0 and 1, says on standard error whether each is a pipe,
// and copies standard input to standard output.
func staticStdioProgram(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command to build a static program with: %v", err)
	}
	dir := t.TempDir()
	src := `package main

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

func main() {
	for _, fd := range []int{0, 1} {
		_, _, e := syscall.Syscall6(syscall.SYS_UTIMENSAT, uintptr(fd), 0, 0, 0, 0, 0)
		var st syscall.Stat_t
		syscall.Fstat(fd, &st)
		fmt.Fprintf(os.Stderr, "fd %d: futimens %d fifo %v\n", fd, int(e), st.Mode&syscall.S_IFMT == syscall.S_IFIFO)
	}
	io.Copy(os.Stdout, os.Stdin)
}
`
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	prog := filepath.Join(hostDir(t), "stdio")
	cmd := exec.Command(goBin, "build", "-o", prog, "main.go")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GO111MODULE=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return prog
}

// TestRunUngrantedCwdInTmp: a working directory under /tmp that no grant
// covers exists in the private /tmp as a name only: its files are not
// there (ENOENT: the private /tmp's own read-write grant would otherwise
// reach them), listing it fails with EACCES and creating in it with
// EROFS. As root, and as nobody in its own workspace.
func TestRunUngrantedCwdInTmp(t *testing.T) {
	requireNamespaces(t)
	checkUngrantedCwd(t, nsWorkspace(t))
}

func TestRunUngrantedCwdInTmpAsNobody(t *testing.T) {
	requireSandbox(t)
	ws, ok := nobodyWorkspace(t)
	if !ok {
		return
	}
	requireNamespaces(t)
	checkUngrantedCwd(t, ws)
}

func checkUngrantedCwd(t *testing.T, ws string) {
	t.Helper()
	if !strings.HasPrefix(ws, "/tmp/") {
		t.Skipf("the workspace %s is not under /tmp (TMPDIR)", ws)
	}
	cwd := filepath.Join(ws, "deep")
	// The deny-write path asks for the layer on code where a plain Config
	// did not use it (there the files were readable through the private
	// /tmp's grant).
	got := fsops(t, sandbox.Config{DenyWritePaths: []string{"/nonexistent-probe"}}, cwd, "read:"+filepath.Join(cwd, "er", "file"), "read:er/file", "ls:"+cwd, "write:"+filepath.Join(cwd, "new"))
	wantOp(t, got, "read:"+filepath.Join(cwd, "er", "file"), syscall.ENOENT)
	wantOp(t, got, "read:er/file", syscall.ENOENT)
	wantOp(t, got, "ls:"+cwd, syscall.EACCES)
	wantOp(t, got, "write:"+filepath.Join(cwd, "new"), syscall.EROFS)
}

// TestPlanReportsHardLinkedDenyPath: a DenyReadPaths file with another
// name (a hard link) is reported by the plan: no mount of one name
// reaches the other, and the library does not look for it.
func TestPlanReportsHardLinkedDenyPath(t *testing.T) {
	requireNamespaces(t)
	dir := hostDir(t)
	key := filepath.Join(dir, "key")
	os.WriteFile(key, []byte("k\n"), 0o644)
	if err := os.Link(key, filepath.Join(dir, "other-name")); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	plan, err := sandbox.PlanFor(sandbox.Config{AllowedReadPaths: []string{dir}, DenyReadPaths: []string{key}})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range plan.Features {
		if f.Feature == sandbox.FeatureDenyRead && f.Scope == sandbox.ScopeCommand {
			if !strings.Contains(f.Detail, "NOT through their other names: "+key+" (2 names)") {
				t.Errorf("the deny_read entry does not report the hard link: %s", f.Detail)
			}
			return
		}
	}
	t.Errorf("no deny_read entry for WrapCommand/Run: %+v", plan.Features)
}

// TestRunHostBindAlias: a path the Config protects or hides by its host
// name holds at the host's bind mount of the same tree too. The test
// re-runs itself as root in a mount namespace of its own (Go makes its
// mounts private: nothing reaches this machine's mount table), binds a
// workspace at a second path there, and grants only that second path:
// a DenyWritePaths file is EROFS and a DenyReadPaths file EACCES through
// it, while the rest of it is writable.
func TestRunHostBindAlias(t *testing.T) {
	requireNamespaces(t)
	const env = "SANDBOX_ALIAS_DIR"
	if dir := os.Getenv(env); dir != "" {
		ws, alias := filepath.Join(dir, "ws"), filepath.Join(dir, "alias")
		if err := syscall.Mount(ws, alias, "", syscall.MS_BIND, ""); err != nil {
			t.Fatalf("bind mount in the test's own namespace: %v", err)
		}
		cfg := sandbox.Config{AllowedWritePaths: []string{alias},
			DenyWritePaths: []string{filepath.Join(ws, "ro", "file")}, DenyReadPaths: []string{filepath.Join(ws, ".env")}}
		got := fsops(t, cfg, "/", "append:"+filepath.Join(alias, "ro", "file"), "read:"+filepath.Join(alias, ".env"), "write:"+filepath.Join(alias, "new"))
		wantOp(t, got, "append:"+filepath.Join(alias, "ro", "file"), syscall.EROFS)
		wantOp(t, got, "read:"+filepath.Join(alias, ".env"), syscall.EACCES)
		wantOp(t, got, "write:"+filepath.Join(alias, "new"), 0)
		return
	}
	requireRoot(t)
	dir := hostDir(t)
	for _, d := range []string{"ws/ro", "alias"} {
		os.MkdirAll(filepath.Join(dir, d), 0o755)
	}
	os.WriteFile(filepath.Join(dir, "ws", "ro", "file"), []byte("ro\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "ws", ".env"), []byte("TOKEN=secret\n"), 0o644)
	cmd := exec.Command(self(t), "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1", "-test.timeout=120s")
	cmd.Env = append(os.Environ(), env+"="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: syscall.CLONE_NEWNS}
	out, err := cmd.CombinedOutput()
	childtest.Forward(t, "the run in its own mount namespace", out, err)
	if b, _ := os.ReadFile(filepath.Join(dir, "ws", "ro", "file")); string(b) != "ro\n" {
		t.Errorf("the protected file changed: %q", b)
	}
}

// TestRunDenyReadInsideDefaults: a DenyReadPaths entry inside what
// Landlock lets the program read besides the Config's read and write
// paths: an exec grant (a directory on AllowedExecPaths), and a default
// system path (the CA bundle, or another default file). Landlock cannot
// deny beneath a grant, so the mount layer hides these as it hides one
// inside a read grant. It made no mount for them: the program read the
// file while the plan said "hidden". The neighbour in the exec directory
// stays readable.
func TestRunDenyReadInsideDefaults(t *testing.T) {
	requireNamespaces(t)
	checkDenyReadInsideDefaults(t, realTempDir(t), denyReadExecDir(t))
}

func TestRunDenyReadInsideDefaultsAsNobody(t *testing.T) {
	requireSandbox(t)
	if childtest.InNobodyRun(t) {
		requireNamespaces(t)
		checkDenyReadInsideDefaults(t, os.Getenv("SANDBOX_NS_WS"), os.Getenv("SANDBOX_EXEC_DIR"))
		return
	}
	requireRoot(t)
	requireNamespaces(t)
	ws := hostDir(t)
	if err := os.Chown(ws, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	childtest.AsNobody(t, "SANDBOX_NS_WS="+ws, "SANDBOX_EXEC_DIR="+denyReadExecDir(t))
}

// denyReadExecDir makes a directory outside /tmp holding "secret" and
// "other", readable by everyone.
func denyReadExecDir(t *testing.T) string {
	dir := hostDir(t)
	for _, f := range []string{"secret", "other"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(f+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func checkDenyReadInsideDefaults(t *testing.T, ws, execDir string) {
	secret, other := filepath.Join(execDir, "secret"), filepath.Join(execDir, "other")
	cfg := sandbox.Config{AllowedWritePaths: []string{ws}, AllowedExecPaths: []string{execDir}, DenyReadPaths: []string{secret}}
	ops := []string{"read:" + secret, "read:" + other}
	// A file under a default system path (linux.SystemPaths) that every
	// user may read, where one exists (the kernel matrix's guests have
	// only the CA bundle, when the host has one).
	var system string
	for _, p := range []string{"/etc/ssl/certs/ca-certificates.crt", "/etc/hosts", "/etc/os-release"} {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o004 != 0 {
			system = p
			break
		}
	}
	if system != "" {
		cfg.DenyReadPaths = append(cfg.DenyReadPaths, system)
		ops = append(ops, "read:"+system)
	} else {
		t.Log("no CA bundle, /etc/hosts or /etc/os-release here: only the exec grant's case is tried")
	}
	got := fsops(t, cfg, ws, ops...)
	wantOp(t, got, "read:"+secret, syscall.EACCES)
	wantOp(t, got, "read:"+other, 0)
	if system != "" {
		wantOp(t, got, "read:"+system, syscall.EACCES)
	}
}
