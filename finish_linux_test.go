package sandbox_test

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/openparallax/sandbox"
)

// TestFinishCommand: a WrapCommand caller learns through FinishCommand what
// Run reports in its result: a commondir the program planted in a
// protected repository's git directory is removed (git would otherwise run
// the program's hooks outside the sandbox), a .git the program created at
// the workspace's top is reported and left, and a second call reports
// nothing. Real git makes the repositories.
func TestFinishCommand(t *testing.T) {
	requireNamespaces(t)
	git := need(t, "/usr/bin/git", "git")
	sh := need(t, "/bin/sh", "dash")
	sb := sandbox.New()
	run := func(ws, script string) sandbox.CommandReport {
		t.Helper()
		cfg := sandbox.Config{AllowedWritePaths: []string{ws}, AllowProcessSpawn: true, AllowedExecPaths: []string{"/usr/bin", "/bin"}}
		cmd := exec.Command(sh, "-c", script)
		cmd.Dir = ws
		cmd.Env = []string{"PATH=/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM=1", "HOME=" + ws}
		if err := sb.WrapCommand(cmd, cfg); err != nil {
			t.Fatal(err)
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v %s", script, err, out)
		}
		r, err := sandbox.FinishCommand(cmd)
		if err != nil {
			t.Fatal(err)
		}
		if again, err := sandbox.FinishCommand(cmd); err != nil || again.Removed != nil || again.GitCreated != nil {
			t.Errorf("a second FinishCommand reported %+v, %v", again, err)
		}
		return r
	}

	t.Run("a planted commondir is removed", func(t *testing.T) {
		ws := realTempDir(t)
		if out, err := exec.Command(git, "init", "-q", ws).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v %s", err, out)
		}
		r := run(ws, "cp -r .git evil && echo ../evil > .git/commondir")
		commondir := filepath.Join(ws, ".git", "commondir")
		if !slices.Equal(r.Removed, []string{commondir}) || r.GitCreated != nil {
			t.Errorf("report %+v, want Removed [%s] and nothing created", r, commondir)
		}
		if _, err := os.Lstat(commondir); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s is still there after FinishCommand: %v", commondir, err)
		}
	})
	t.Run("a new repository is reported and left", func(t *testing.T) {
		ws := realTempDir(t)
		r := run(ws, git+" init -q")
		created := filepath.Join(ws, ".git")
		if !slices.Equal(r.GitCreated, []string{created}) || r.Removed != nil {
			t.Errorf("report %+v, want GitCreated [%s] and nothing removed", r, created)
		}
		if _, err := os.Stat(filepath.Join(created, "HEAD")); err != nil {
			t.Errorf("the new repository was not left in place: %v", err)
		}
	})
	t.Run("a command WrapCommand did not prepare", func(t *testing.T) {
		r, err := sandbox.FinishCommand(exec.Command(sh, "-c", "true"))
		if err != nil || r.LimitExceeded != "" || r.DeniedRequests != nil || r.Removed != nil || r.GitCreated != nil {
			t.Errorf("%+v, %v", r, err)
		}
	})
}
