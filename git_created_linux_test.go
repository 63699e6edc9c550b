package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/openparallax/sandbox"
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
			ws, err := filepath.EvalSymlinks(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
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
