//go:build darwin

package sandbox_test

// Issue 33 on a Mac: the git denies (hooks, config, commondir, a .git
// renamed or created into place), file-map-executable, a WrapCommand target
// in a write path, Python's named semaphores, /dev/tty under Run's TTY, Run's
// one temporary directory, and hard links. These compile everywhere
// (GOOS=darwin go test -exec=true) but run only on macOS; they have not been
// run on one by their authors: the first Mac run decides what they assert.

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
)

// cltGit is git of the Command Line Tools, which the /usr/bin/git shim
// executes; "" when they are not installed.
func cltGit() string {
	const p = "/Library/Developer/CommandLineTools/usr/bin/git"
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// darwinProtectHelper runs the helper modes of this file inside the
// sandbox; false for a mode it does not know.
func darwinProtectHelper(t *testing.T, mode, arg string) bool {
	switch mode {
	case "gitprotect":
		gitProtectProbe(t, arg, true)
	case "gitunprotected":
		gitProtectProbe(t, arg, false)
	case "gitdirfile":
		// arg: a workspace whose .git file names sep/, a git directory
		// the patterns do not match.
		for _, rel := range []string{"sep/hooks/pre-commit", "sep/config", "sep/commondir"} {
			if err := os.WriteFile(filepath.Join(arg, rel), []byte("x"), 0o755); !errors.Is(err, syscall.EPERM) {
				t.Errorf("write %s: %v, want EPERM", rel, err)
			}
		}
		if err := os.Rename(filepath.Join(arg, "sep"), filepath.Join(arg, "moved")); !errors.Is(err, syscall.EPERM) {
			t.Errorf("rename the git directory: %v, want EPERM", err)
		}
		if err := os.WriteFile(filepath.Join(arg, "sep/index"), []byte("x"), 0o644); err != nil {
			t.Errorf("write sep/index (git needs it): %v", err)
		}
	case "mapexec":
		// arg: "PATH=WANT;..." with WANT "ok" or "eperm".
		for _, item := range strings.Split(arg, ";") {
			path, want, _ := strings.Cut(item, "=")
			err := mapExec(path)
			if want == "ok" && err != nil || want == "eperm" && !errors.Is(err, syscall.EPERM) {
				t.Errorf("mmap(PROT_EXEC) of %s: %v, want %s", path, err, want)
			}
		}
	default:
		return false
	}
	return true
}

// mapExec maps the first page of path readable and executable, as dyld
// and dlopen do with code: Seatbelt's file-map-executable.
func mapExec(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	b, err := syscall.Mmap(int(f.Fd()), 0, 4096, syscall.PROT_READ|syscall.PROT_EXEC, syscall.MAP_PRIVATE)
	if err != nil {
		return err
	}
	return syscall.Munmap(b)
}

// gitProtectProbe tries, inside the sandbox, what would plant code that git
// runs outside it, in the workspace ws that gitWorkspace laid out; each
// must fail with EPERM when protected, and succeed when not. What git needs
// to write must succeed either way.
func gitProtectProbe(t *testing.T, ws string, protected bool) {
	check := func(what string, err error) {
		t.Helper()
		if protected && !errors.Is(err, syscall.EPERM) {
			t.Errorf("%s: %v, want EPERM", what, err)
		}
		if !protected && err != nil {
			t.Errorf("%s without git protection: %v, want success", what, err)
		}
	}
	write := func(rel string) error {
		return os.WriteFile(filepath.Join(ws, rel), []byte("#!/bin/sh\ntouch /tmp/pwned\n"), 0o755)
	}
	for _, rel := range []string{
		".git/hooks/pre-commit", ".git/config", ".git/commondir", ".git/config.worktree",
		".git/modules/sub/hooks/post-checkout", ".git/modules/sub/config", ".git/worktrees/wt/commondir",
		"bare.git/hooks/post-receive", "bare.git/config", "deep/er/.git/hooks/pre-commit", ".GIT/HOOKS/pre-push",
	} {
		check("write "+rel, write(rel))
	}
	check("rename .git away", os.Rename(filepath.Join(ws, "deep/er/.git"), filepath.Join(ws, "deep/er/old")))
	check("rename a directory of hooks to .git", os.Rename(filepath.Join(ws, "evil"), filepath.Join(ws, "fresh/.git")))
	check("mkdir .git", os.Mkdir(filepath.Join(ws, "fresh4/.Git"), 0o755))
	check("gitdir: file", os.WriteFile(filepath.Join(ws, "fresh2/.git"), []byte("gitdir: ../evil2\n"), 0o644))
	check("symlink .git", os.Symlink(filepath.Join(ws, "evil2"), filepath.Join(ws, "fresh3/.git")))
	for _, rel := range []string{".git/index", ".git/objects/ab/cdef", ".git/refs/heads/topic", ".git/HEAD", "src/hooks/useThing.js", "config"} {
		if err := write(rel); err != nil {
			t.Errorf("write %s (git or the program needs it): %v", rel, err)
		}
	}
}

// gitWorkspace lays out, unwrapped, the repositories gitProtectProbe
// attacks: a .git with a submodule's and a worktree's git directories, a
// bare NAME.git, a nested .git, and directories of would-be hooks.
func gitWorkspace(t *testing.T) string {
	t.Helper()
	ws := realTempDir(t)
	for _, d := range []string{
		".git/hooks", ".git/objects/ab", ".git/refs/heads", ".git/modules/sub/hooks", ".git/worktrees/wt",
		"bare.git/hooks", "deep/er/.git/hooks", "evil/hooks", "evil2/hooks", "fresh", "fresh2", "fresh3", "fresh4", "src/hooks",
		".GIT/HOOKS", // the same directory as .git/hooks on a case-insensitive volume, the default
	} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "evil/hooks/post-checkout"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return ws
}

// TestDarwinGitProtection: hooks, config and commondir of every git
// directory in a write path are not writable, at any depth, in any case,
// and no .git can be created, renamed or pointed elsewhere; index, objects
// and refs are. With NoGitProtection all of it is writable.
func TestDarwinGitProtection(t *testing.T) {
	requireSandboxExec(t)
	ws := gitWorkspace(t)
	if out, err := runHelper(t, sandbox.Config{AllowedWritePaths: []string{ws}}, ws, "gitprotect", ws); err != nil {
		t.Errorf("protected: %v\n%s", err, out)
	}
	ws = gitWorkspace(t)
	if out, err := runHelper(t, sandbox.Config{AllowedWritePaths: []string{ws}, NoGitProtection: true}, ws, "gitunprotected", ws); err != nil {
		t.Errorf("no_git_protection: %v\n%s", err, out)
	}
}

// TestDarwinGitWorksProtected: real git through the /usr/bin/git shim
// commits in a protected repository, and cannot init one (config is
// denied) unless NoGitProtection.
func TestDarwinGitWorksProtected(t *testing.T) {
	requireSandboxExec(t)
	if cltGit() == "" {
		t.Skip("no Command Line Tools git: nothing to run")
	}
	ws := realTempDir(t)
	for _, args := range [][]string{{"init", "-q"}, {"config", "user.email", "t@example.com"}, {"config", "user.name", "t"}} {
		if out, err := exec.Command("/usr/bin/git", append([]string{"-C", ws}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v unwrapped: %v\n%s", args, err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(ws, "f"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := sandbox.Config{AllowedWritePaths: []string{ws}, AllowProcessSpawn: true}
	run := func(cfg sandbox.Config, args ...string) sandbox.RunResult {
		res, err := sandbox.Run(context.Background(), cfg, "/usr/bin/git", args, sandbox.RunOptions{Dir: ws, Timeout: 60 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := run(cfg, "add", "f"); res.ExitCode != 0 {
		t.Errorf("git add in a protected repository: exit %d, stderr %q", res.ExitCode, res.Stderr)
	}
	if res := run(cfg, "commit", "-q", "-m", "x"); res.ExitCode != 0 {
		t.Errorf("git commit in a protected repository: exit %d, stderr %q", res.ExitCode, res.Stderr)
	}
	if res := run(cfg, "config", "core.fsmonitor", "/tmp/x"); res.ExitCode == 0 {
		t.Error("git config core.fsmonitor succeeded in a protected repository")
	}
	sub := filepath.Join(ws, "new")
	if res := run(cfg, "init", "-q", sub); res.ExitCode == 0 {
		t.Error("git init succeeded under git protection (its config should be denied)")
	}
	cfg.NoGitProtection = true
	sub2 := filepath.Join(ws, "new2")
	if res := run(cfg, "init", "-q", sub2); res.ExitCode != 0 {
		t.Errorf("git init with no_git_protection: exit %d, stderr %q", res.ExitCode, res.Stderr)
	}
}

// TestDarwinMapExecutable: a file can be mapped as code (mmap PROT_EXEC,
// what dlopen does) from an exec path, and from a write path only with
// AllowExecWritePaths; never from a read path.
func TestDarwinMapExecutable(t *testing.T) {
	requireSandboxExec(t)
	data, ws, tools := realTempDir(t), realTempDir(t), realTempDir(t)
	var files []string
	for _, d := range []string{data, ws, tools} {
		f := filepath.Join(d, "code.bin")
		if err := os.WriteFile(f, make([]byte, 4096), 0o755); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if err := mapExec(files[0]); err != nil {
		t.Skipf("mmap(PROT_EXEC) of a plain file fails unwrapped too (%v): the test proves nothing", err)
	}
	cfg := sandbox.Config{AllowedReadPaths: []string{data}, AllowedWritePaths: []string{ws}, AllowedExecPaths: []string{tools}}
	arg := files[0] + "=eperm;" + files[1] + "=eperm;" + files[2] + "=ok"
	if out, err := runHelper(t, cfg, ws, "mapexec", arg); err != nil {
		t.Errorf("without allow_exec_write_paths: %v\n%s", err, out)
	}
	cfg.AllowExecWritePaths = true
	arg = files[0] + "=eperm;" + files[1] + "=ok;" + files[2] + "=ok"
	if out, err := runHelper(t, cfg, ws, "mapexec", arg); err != nil {
		t.Errorf("with allow_exec_write_paths: %v\n%s", err, out)
	}
}

// TestDarwinTargetInWritePath: WrapCommand refuses a program inside a write
// path (the program could replace it), and runs it with
// AllowExecWritePaths.
func TestDarwinTargetInWritePath(t *testing.T) {
	requireSandboxExec(t)
	ws := realTempDir(t)
	prog := filepath.Join(ws, "true")
	data, err := os.ReadFile("/usr/bin/true")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(prog, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(prog)
	if err := sandbox.New().WrapCommand(cmd, sandbox.Config{AllowedWritePaths: []string{ws}}); !errors.Is(err, sandbox.ErrInvalidConfig) {
		t.Errorf("WrapCommand of a program in the write path: %v, want ErrInvalidConfig", err)
	}
	cmd = exec.Command(prog)
	wrap(t, cmd, sandbox.Config{AllowedWritePaths: []string{ws}, AllowExecWritePaths: true})
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("with allow_exec_write_paths: %v\n%s", err, out)
	}
}

// TestDarwinPythonSemaphores: Python's multiprocessing locks (sem_open of
// /mp-XXXXXXXX) work with AllowSharedMemory, and fail without it.
func TestDarwinPythonSemaphores(t *testing.T) {
	requireSandboxExec(t)
	if _, err := os.Stat("/Library/Developer/CommandLineTools/usr/bin/python3"); err != nil {
		t.Skipf("no Command Line Tools python3: %v", err)
	}
	const prog = "import multiprocessing as mp\nl = mp.Lock()\nl.acquire()\nl.release()\nprint('locked')\n"
	run := func(shm bool) sandbox.RunResult {
		res, err := sandbox.Run(context.Background(), sandbox.Config{AllowSharedMemory: shm}, "/usr/bin/python3", []string{"-c", prog},
			sandbox.RunOptions{Timeout: 60 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	if res := run(true); res.ExitCode != 0 || strings.TrimSpace(string(res.Stdout)) != "locked" {
		t.Errorf("with allow_shared_memory: exit %d, stdout %q, stderr %q", res.ExitCode, res.Stdout, res.Stderr)
	}
	if res := run(false); res.ExitCode == 0 || !strings.Contains(string(res.Stderr), "Permission") && !strings.Contains(string(res.Stderr), "not permitted") {
		t.Errorf("without allow_shared_memory: exit %d, stderr %q: want a permission error from sem_open", res.ExitCode, res.Stderr)
	}
}

// TestDarwinRunTTYDevTty: under Run with TTY, /dev/tty is the program's
// controlling terminal and takes tcsetattr (stty </dev/tty), as less and
// password prompts need.
func TestDarwinRunTTYDevTty(t *testing.T) {
	requireTTYRun(t)
	cfg := sandbox.Config{AllowProcessSpawn: true, AllowedExecPaths: []string{"/bin"}}
	res, err := sandbox.Run(context.Background(), cfg, "/bin/sh",
		[]string{"-c", `stty -echo </dev/tty && stty echo </dev/tty && echo tty-ok`},
		sandbox.RunOptions{TTY: true, Env: []string{"PATH=/bin"}, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if got := string(res.Stdout); !strings.Contains(got, "tty-ok") {
		t.Errorf("stty </dev/tty under Run's terminal: stdout %q, exit %d", got, res.ExitCode)
	}
}

// TestDarwinHardLinkInsideWritePath is the converse of
// TestDarwinHardLinkOutOfReadPath: whether a hard link between two files
// of the same write path works. doc.go assumes file-link is never allowed,
// so it fails too (git falls back to rename; pnpm to copying); a Mac where
// it succeeds means file-link is part of the write grant, and
// TestDarwinHardLinkOutOfReadPath then says whether that is an escape.
func TestDarwinHardLinkInsideWritePath(t *testing.T) {
	requireSandboxExec(t)
	ws := realTempDir(t)
	if err := os.WriteFile(filepath.Join(ws, "a"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, err := runWrapped(t, sandbox.Config{AllowedWritePaths: []string{ws}}, ws, nil, "/bin/ln", filepath.Join(ws, "a"), filepath.Join(ws, "b"))
	if err == nil || !strings.Contains(errOut, "Operation not permitted") {
		t.Errorf("ln WS/a WS/b: %v, stderr %q; doc.go assumes EPERM (file-link never allowed): update it and the docs", err, errOut)
	}
}

// TestDarwinGitDirFile: the git directory a ".git" file at the top of a
// write path names is protected too when its name escapes the patterns
// (git init --separate-git-dir).
func TestDarwinGitDirFile(t *testing.T) {
	requireSandboxExec(t)
	ws := realTempDir(t)
	for _, d := range []string{"sep/hooks", "sep/objects", "sep/refs"} {
		if err := os.MkdirAll(filepath.Join(ws, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, text := range map[string]string{".git": "gitdir: sep\n", "sep/HEAD": "ref: refs/heads/main\n"} {
		if err := os.WriteFile(filepath.Join(ws, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := runHelper(t, sandbox.Config{AllowedWritePaths: []string{ws}}, ws, "gitdirfile", ws); err != nil {
		t.Errorf("%v\n%s", err, out)
	}
}
