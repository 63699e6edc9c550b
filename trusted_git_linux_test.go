package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/openparallax/sandbox"
	"github.com/openparallax/sandbox/internal/childtest"
)

// The trusted side (issue 27): what Run and FinishCommand read and remove
// after a command, and what the next spawn looks at, in places the program
// could write. Each program below shapes the workspace for the caller's
// next look; each test asserts the caller returns within a deadline (a
// hang is a failure here, not the test binary's timeout), with what it met
// reported as a Finding, and that nothing outside the workspace changed.

// gitEnv is the environment of the git the tests run.
var gitEnv = []string{"PATH=/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME=/nonexistent",
	"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t"}

// gitIn returns a runner of the real git in dir with gitEnv, outside
// any sandbox (the user's next git command), whose error carries git's
// output.
func gitIn(git, dir string) func(args ...string) error {
	return func(args ...string) error {
		cmd := exec.Command(git, args...)
		cmd.Dir, cmd.Env = dir, gitEnv
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Errorf("git %v: %v %s", args, err, out)
		}
		return nil
	}
}

// gitRepo makes a repository with one commit (so that it has an index) in
// a fresh directory, and returns the directory, resolved.
func gitRepo(t *testing.T) string {
	t.Helper()
	git := need(t, "/usr/bin/git", "git")
	ws := realTempDir(t)
	for _, args := range [][]string{{"init", "-q"}, {"commit", "-q", "--allow-empty", "-m", "init"}} {
		cmd := exec.Command(git, args...)
		cmd.Dir, cmd.Env = ws, gitEnv
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	os.WriteFile(filepath.Join(ws, "f"), []byte("f\n"), 0o644)
	cmd := exec.Command(git, "add", "f")
	cmd.Dir, cmd.Env = ws, gitEnv
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git add: %v\n%s", err, out)
	}
	return ws
}

// unblockFIFO opens a FIFO for writing and closes it, so that a reader
// left blocked in open (the code this test catches) returns: the test
// binary then goes on with the next test.
func unblockFIFO(p string) {
	if fd, err := syscall.Open(p, syscall.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
		syscall.Close(fd)
	}
}

func hasFinding(fs []sandbox.Finding, kind, path string) bool {
	return slices.ContainsFunc(fs, func(f sandbox.Finding) bool { return f.Kind == kind && f.Path == path })
}

func gitCfg(ws string) sandbox.Config {
	return sandbox.Config{AllowedWritePaths: []string{ws}, AllowProcessSpawn: true, AllowedExecPaths: []string{"/usr/bin", "/bin"}}
}

// gitOutcome is what the caller found after a command.
type gitOutcome struct {
	created, removed []string
	findings         []sandbox.Finding
}

// gitRunIn runs script with sh in ws, confined to ws, by Run (finish false)
// or WrapCommand and FinishCommand, and returns what the caller found. A
// run that does not return within 30 seconds fails t.
func gitRunIn(t *testing.T, ws, script string, finish bool) gitOutcome {
	t.Helper()
	return gitRunAt(t, ws, ws, script, finish)
}

// gitRunAt is gitRunIn with the write path apart from the working
// directory. The run goes on in a goroutine that never touches t: one left
// blocked past the deadline (the code these tests catch) cannot fail a
// test that has completed.
func gitRunAt(t *testing.T, write, ws, script string, finish bool) gitOutcome {
	t.Helper()
	const limit = 30 * time.Second
	sh := need(t, "/bin/sh", "dash")
	type result struct {
		o   gitOutcome
		err error
	}
	ch := make(chan result, 1)
	go func() {
		o, err := gitRun(sh, write, ws, script, finish)
		ch <- result{o, err}
	}()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r.o
	case <-time.After(limit):
		t.Fatalf("%s of %q did not return within %s", pick(finish, "WrapCommand, the command and FinishCommand", "Run"), script, limit)
	}
	return gitOutcome{}
}

func gitRun(sh, write, ws, script string, finish bool) (gitOutcome, error) {
	if !finish {
		res, err := sandbox.Run(context.Background(), gitCfg(write), sh, []string{"-c", script}, sandbox.RunOptions{Dir: ws, Env: gitEnv})
		if err != nil || res.ExitCode != 0 {
			return gitOutcome{}, fmt.Errorf("Run %q: %v: exit %d, stderr %s", script, err, res.ExitCode, res.Stderr)
		}
		return gitOutcome{res.GitCreated, res.Removed, res.Findings}, nil
	}
	cmd := exec.Command(sh, "-c", script)
	cmd.Dir, cmd.Env = ws, gitEnv
	if err := sandbox.New().WrapCommand(cmd, gitCfg(write)); err != nil {
		return gitOutcome{}, err
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return gitOutcome{}, fmt.Errorf("%s: %v %s", script, err, out)
	}
	r, err := sandbox.FinishCommand(cmd)
	if err != nil {
		return gitOutcome{}, fmt.Errorf("FinishCommand: %w", err)
	}
	return gitOutcome{r.GitCreated, r.Removed, r.Findings}, nil
}

// TestGitIndexFIFO: the program replaces .git/index by a FIFO. Before,
// Run and FinishCommand opened it to look for submodules and waited for a
// writer forever (--timeout and SIGTERM did nothing). Now they return,
// with a special_file Finding.
func TestGitIndexFIFO(t *testing.T) {
	requireNamespaces(t)
	checkGitIndexFIFO(t)
}

func TestGitIndexFIFOAsNobody(t *testing.T) {
	requireNamespaces(t)
	if !childtest.AsNobody(t) {
		return
	}
	checkGitIndexFIFO(t)
}

func checkGitIndexFIFO(t *testing.T) {
	for _, finish := range []bool{false, true} {
		t.Run(pick(finish, "FinishCommand", "Run"), func(t *testing.T) {
			ws := gitRepo(t)
			index := filepath.Join(ws, ".git", "index")
			t.Cleanup(func() { unblockFIFO(index) })
			findings := gitRunIn(t, ws, "rm .git/index && mkfifo .git/index", finish).findings
			if !hasFinding(findings, sandbox.FindingSpecialFile, index) {
				t.Errorf("findings %+v, want %s for %s", findings, sandbox.FindingSpecialFile, index)
			}
		})
	}
}

// TestGitIndexDevZero: the program links .git/index to /dev/zero. Before,
// the caller read it without end until the OOM killer took it. Now the
// link is not followed, and says so.
func TestGitIndexDevZero(t *testing.T) {
	requireNamespaces(t)
	ws := gitRepo(t)
	index := filepath.Join(ws, ".git", "index")
	findings := gitRunIn(t, ws, "rm .git/index && ln -s /dev/zero .git/index", false).findings
	if !hasFinding(findings, sandbox.FindingSymlink, index) {
		t.Errorf("findings %+v, want %s for %s", findings, sandbox.FindingSymlink, index)
	}
}

// TestGitRepointedLink: a repository whose .git is a symbolic link to its
// git directory (as the user made it, or a previous run planted it). The
// program re-points the link at a victim directory, outside every grant,
// that has a commondir of its own. Before, the caller looked for a new
// commondir through the link after the run, and removed the victim's. Now
// it works in the git directory pinned before the spawn: the victim's
// commondir stays, and the re-pointed link is a Finding.
func TestGitRepointedLink(t *testing.T) {
	requireNamespaces(t)
	checkGitRepointedLink(t)
}

func TestGitRepointedLinkAsNobody(t *testing.T) {
	requireNamespaces(t)
	if !childtest.AsNobody(t) {
		return
	}
	checkGitRepointedLink(t)
}

func checkGitRepointedLink(t *testing.T) {
	for _, finish := range []bool{false, true} {
		t.Run(pick(finish, "FinishCommand", "Run"), func(t *testing.T) {
			repo := gitRepo(t)
			// The write path holds the repository (ws) and its git
			// directory (which must be visible inside: the private /tmp
			// hides the rest of /tmp); the victim lies outside it.
			base := realTempDir(t)
			other := realTempDir(t)
			gitdir, ws, victim := filepath.Join(base, "gitdir"), filepath.Join(base, "ws"), filepath.Join(other, "victim")
			if err := os.Rename(filepath.Join(repo, ".git"), gitdir); err != nil {
				t.Fatal(err)
			}
			for _, d := range []string{ws, victim} {
				os.Mkdir(d, 0o755)
			}
			if err := os.Symlink(gitdir, filepath.Join(ws, ".git")); err != nil {
				t.Fatal(err)
			}
			victimFile := filepath.Join(victim, "commondir")
			if err := os.WriteFile(victimFile, []byte("../main\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			o := gitRunAt(t, base, ws, "rm .git && ln -s "+victim+" .git", finish)
			removed, findings := o.removed, o.findings
			if _, err := os.Lstat(victimFile); err != nil {
				t.Errorf("the victim's commondir, outside every grant, is gone (%v); Removed %q", err, removed)
			}
			if len(removed) != 0 {
				t.Errorf("Removed %q, want nothing: the program created no commondir in the git directory", removed)
			}
			if !hasFinding(findings, sandbox.FindingSymlink, filepath.Join(ws, ".git")) {
				t.Errorf("findings %+v, want %s for the re-pointed %s", findings, sandbox.FindingSymlink, filepath.Join(ws, ".git"))
			}
		})
	}
}

// TestGitPlantedCommonDirThroughLink is the control for the test above:
// with .git a link that stays, a commondir the program plants in the git
// directory is still removed (through the pinned descriptor).
func TestGitPlantedCommonDirThroughLink(t *testing.T) {
	requireNamespaces(t)
	repo := gitRepo(t)
	base := realTempDir(t)
	gitdir, ws := filepath.Join(base, "gitdir"), filepath.Join(base, "ws")
	if err := os.Rename(filepath.Join(repo, ".git"), gitdir); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(ws, 0o755)
	if err := os.Symlink(gitdir, filepath.Join(ws, ".git")); err != nil {
		t.Fatal(err)
	}
	removed := gitRunAt(t, base, ws, "echo ../evil > .git/commondir", false).removed
	want := filepath.Join(gitdir, "commondir")
	if !slices.Equal(removed, []string{want}) {
		t.Errorf("Removed %q, want [%s]", removed, want)
	}
	if _, err := os.Lstat(want); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s is still there: %v", want, err)
	}
}

// TestWrapAfterGitFIFO: a program plants a FIFO as .git at its write
// path's top. Before, every later WrapCommand on that path blocked before
// starting anything, reading it as a gitdir file. Now the next one
// returns, and its program runs.
func TestWrapAfterGitFIFO(t *testing.T) {
	requireNamespaces(t)
	need(t, "/bin/mkfifo", "coreutils") // the program plants the FIFO with it
	ws := realTempDir(t)
	dotgit := filepath.Join(ws, ".git")
	t.Cleanup(func() { unblockFIFO(dotgit) })
	created := gitRunIn(t, ws, "mkfifo .git", false).created
	if !slices.Equal(created, []string{dotgit}) {
		t.Errorf("GitCreated %q, want [%s]", created, dotgit)
	}
	gitRunIn(t, ws, "true", true) // fails t past its deadline
}

// TestSpawnAfterModulesLinks: a program fills .git/modules of a protected
// repository with links to ".". Before, every later spawn walked them as
// directories, 20 a level, 16 levels deep, at 100% CPU. Now the next Run
// returns promptly.
func TestSpawnAfterModulesLinks(t *testing.T) {
	requireNamespaces(t)
	ws := gitRepo(t)
	gitRunIn(t, ws, `mkdir -p .git/modules && cd .git/modules && for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do ln -s . l$i; done`, false)
	start := time.Now()
	gitRunIn(t, ws, "true", false) // fails t past its deadline
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the next Run took %s: the modules walk is not bounded", d)
	}
}
