package sandbox_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/openparallax/sandbox"
	"github.com/openparallax/sandbox/internal/childtest"
)

// TestRunReportsCreatedRepository: a .git the program makes where git
// would find it for the workspace or the working directory, and where none
// was at the start, is listed in RunResult.GitCreated (nothing can keep it
// out, and git runs its hooks and config outside the sandbox later); one
// made where git would not find it first, one that existed before, and any
// with NoGitProtection are not. Real git makes the repositories.
func TestRunReportsCreatedRepository(t *testing.T) {
	requireSandbox(t)
	git := need(t, "/usr/bin/git", "git")
	sh := need(t, "/bin/sh", "dash")
	env := []string{"PATH=/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM=1"}
	for _, c := range []struct {
		name   string
		pre    func(ws string) // before the run, outside the sandbox
		dir    string          // the program's working directory, in ws
		script string
		noGit  bool
		want   []string // relative to ws
	}{
		{name: "git init in an empty workspace", script: git + " init -q", want: []string{".git"}},
		{name: "a gitdir file planted", script: "echo 'gitdir: /elsewhere' > .git", want: []string{".git"}},
		{name: "a repository in the working directory's parent", dir: "a/b", script: git + " init -q ..", want: []string{"a/.git"}},
		{name: "a repository below the working directory", script: git + " init -q sub"},
		{name: "the workspace was a repository already", pre: func(ws string) {
			if err := os.Mkdir(filepath.Join(ws, ".git"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, script: "rm -rf .git/* && " + git + " init -q"},
		{name: "no_git_protection", script: git + " init -q", noGit: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			ws := realTempDir(t)
			if c.pre != nil {
				c.pre(ws)
			}
			dir := filepath.Join(ws, c.dir)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			cfg := sandbox.Config{AllowedWritePaths: []string{ws}, AllowProcessSpawn: true,
				AllowedExecPaths: []string{"/usr/bin", "/bin"}, NoGitProtection: c.noGit}
			res, err := sandbox.Run(context.Background(), cfg, sh, []string{"-c", c.script}, sandbox.RunOptions{Dir: dir, Env: env})
			if err != nil || res.ExitCode != 0 {
				t.Fatalf("%v: exit %d, stderr %s", err, res.ExitCode, res.Stderr)
			}
			var want []string
			for _, w := range c.want {
				want = append(want, filepath.Join(ws, w))
			}
			if !slices.Equal(res.GitCreated, want) {
				t.Errorf("GitCreated = %q, want %q", res.GitCreated, want)
			}
			for _, g := range res.GitCreated {
				if _, err := os.Lstat(g); err != nil {
					t.Errorf("%s was reported but is not there (Run must not remove it): %v", g, err)
				}
			}
		})
	}
}

// Submodules (issue 17): git status in a repository runs git status in
// each checked-out submodule, with the submodule's own config, where
// core.fsmonitor names a program. The git directories of the submodules a
// protected repository has at the start get the same read-only hooks and
// config as the repository's; a submodule or embedded repository the
// program adds (a gitlink in the index, which stays writable) has a git
// directory of the program's making, which Run reports in GitCreated.
// The test shows the threat is real: the host's git status in the
// workspace runs the fsmonitor the program set in its embedded repository.
func TestRunGitSubmodules(t *testing.T) {
	requireSandbox(t)
	checkGitSubmodules(t)
}

func TestRunGitSubmodulesAsNobody(t *testing.T) {
	requireSandbox(t)
	if !childtest.AsNobody(t) {
		return
	}
	checkGitSubmodules(t)
}

func checkGitSubmodules(t *testing.T) {
	git := need(t, "/usr/bin/git", "git")
	sh := need(t, "/bin/sh", "dash")
	env := []string{"PATH=/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "HOME=/nonexistent",
		"GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t"}
	host := func(dir string, args ...string) string {
		t.Helper()
		cmd := exec.Command(git, args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	tmp := realTempDir(t)
	upstream, ws := filepath.Join(tmp, "upstream"), filepath.Join(tmp, "ws")
	for _, d := range []string{upstream, ws} {
		os.Mkdir(d, 0o755)
		host(d, "init", "-q")
		host(d, "commit", "-q", "--allow-empty", "-m", "init")
	}
	host(ws, "-c", "protocol.file.allow=always", "submodule", "add", "-q", upstream, "sub")
	host(ws, "commit", "-q", "-m", "submodule")
	marker := filepath.Join(tmp, "fsmonitor-ran")
	monitor := filepath.Join(tmp, "monitor.sh")
	if err := os.WriteFile(monitor, []byte("#!/bin/sh\ntouch "+marker+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}

	cfg := sandbox.Config{AllowedWritePaths: []string{ws}, AllowProcessSpawn: true, AllowedExecPaths: []string{"/usr/bin", "/bin"}}
	if p, err := sandbox.PlanFor(cfg); err != nil || !p.Available {
		t.Fatalf("plan: %v", err)
	}
	script := `for f in .git/modules/sub/config .git/modules/sub/hooks/pre-commit; do
	  if echo x >> $f; then echo "wrote $f"; fi
	done
	` + git + ` init -q x && ` + git + ` -C x commit -q --allow-empty -m x && ` + git + ` add x 2>/dev/null &&
	` + git + ` -C x config core.fsmonitor ` + monitor
	res, err := sandbox.Run(context.Background(), cfg, sh, []string{"-c", script}, sandbox.RunOptions{Dir: ws, Env: env})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("%v: exit %d, stdout %s, stderr %s", err, res.ExitCode, res.Stdout, res.Stderr)
	}
	if strings.Contains(string(res.Stdout), "wrote") || strings.Count(string(res.Stderr), "Read-only file system") != 2 {
		t.Errorf("the existing submodule's config and hooks: stdout %q, stderr %q; want both refused with EROFS", res.Stdout, res.Stderr)
	}
	if want := []string{filepath.Join(ws, "x", ".git")}; !slices.Equal(res.GitCreated, want) {
		t.Errorf("GitCreated = %q, want %q (the embedded repository git status enters, not the protected submodule)", res.GitCreated, want)
	}
	// What the report is for: outside the sandbox, git status in the
	// protected repository runs the program's fsmonitor.
	host(ws, "status", "--porcelain")
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the host's git status did not run the embedded repository's fsmonitor (%v): the threat this test is about is not what it says", err)
	}
}
