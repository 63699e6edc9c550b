package sandbox_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/openparallax/sandbox"
)

// A repository whose git directory has no hooks directory, or no config,
// cannot have it kept read-only (a mount needs a mount point, never made
// on the host): the plan says so, and Run removes one the program created
// once its tree is gone, listing it in RunResult.Removed, so that the
// user's next git command outside does not run the program's hook. The
// control shows the same hook, left in place, does run.
func TestRunRemovesCreatedHooksAndConfig(t *testing.T) {
	requireNamespaces(t)
	git := need(t, "/usr/bin/git", "git")
	sh := need(t, "/bin/sh", "dash")
	for _, missing := range []string{"hooks", "config"} {
		t.Run(missing, func(t *testing.T) {
			ws := realTempDir(t)
			gitOut := gitIn(git, ws)
			if err := gitOut("init", "-q"); err != nil {
				t.Fatal(err)
			}
			entry := filepath.Join(ws, ".git", missing)
			if err := os.RemoveAll(entry); err != nil {
				t.Fatal(err)
			}
			cfg := sandbox.Config{AllowedWritePaths: []string{ws}, AllowProcessSpawn: true, AllowedExecPaths: []string{"/usr/bin", "/bin"}}
			plan, err := sandbox.PlanFor(cfg)
			if err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(plan.Features, func(e sandbox.Enforcement) bool {
				return e.Feature == sandbox.FeatureGitProtect && e.Scope == sandbox.ScopeCommand
			})
			if i < 0 || plan.Features[i].Enforced {
				t.Errorf("the plan does not report %s as unprotected: %+v", entry, plan.Features)
			}
			plant := map[string]string{
				"hooks":  `mkdir .git/hooks && printf '#!/bin/sh\ntouch MARK\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit`,
				"config": `mkdir -p evilhooks && printf '#!/bin/sh\ntouch MARK\n' > evilhooks/pre-commit && chmod +x evilhooks/pre-commit && printf '[core]\n\thooksPath = evilhooks\n' > .git/config`,
			}[missing]
			res, err := sandbox.Run(context.Background(), cfg, sh, []string{"-c", plant}, sandbox.RunOptions{Dir: ws, Env: []string{"PATH=/usr/bin:/bin"}})
			if err != nil || res.ExitCode != 0 {
				t.Fatalf("the program could not plant %s: %v %+v %s", missing, err, res, res.Stderr)
			}
			if !slices.Equal(res.Removed, []string{entry}) {
				t.Errorf("RunResult.Removed = %v, want [%s]", res.Removed, entry)
			}
			if _, err := os.Lstat(entry); !errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("%s is still there after Run: %v", entry, err)
			}
			mark := filepath.Join(ws, "MARK")
			if err := gitOut("commit", "-q", "--allow-empty", "-m", "after the run"); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(mark); err == nil {
				t.Fatal("git outside the sandbox ran the program's hook after Run")
			}
			// Control: the program's command, run unconfined, makes git
			// run the hook.
			if out, err := exec.Command(sh, "-c", "cd "+ws+" && rm -rf evilhooks && "+plant).CombinedOutput(); err != nil {
				t.Fatalf("control: planting: %v %s", err, out)
			}
			if err := gitOut("commit", "-q", "--allow-empty", "-m", "control"); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(mark); err != nil {
				t.Errorf("control: with the %s in place git did not run the planted hook (%v): the test shows nothing", missing, err)
			}
		})
	}
}

// The hooks the program creates may be a symbolic link to a directory
// outside every grant: the removal takes the link, never what it points
// at (it goes through the git directory pinned at the start, following
// no link).
func TestRunRemovesCreatedHooksLink(t *testing.T) {
	requireNamespaces(t)
	git := need(t, "/usr/bin/git", "git")
	sh := need(t, "/bin/sh", "dash")
	ws := realTempDir(t)
	victim := realTempDir(t)
	keep := filepath.Join(victim, "pre-commit")
	if err := os.WriteFile(keep, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := gitIn(git, ws)("init", "-q"); err != nil {
		t.Fatal(err)
	}
	hooks := filepath.Join(ws, ".git", "hooks")
	if err := os.RemoveAll(hooks); err != nil {
		t.Fatal(err)
	}
	cfg := sandbox.Config{AllowedWritePaths: []string{ws}, AllowProcessSpawn: true, AllowedExecPaths: []string{"/usr/bin", "/bin"}}
	res, err := sandbox.Run(context.Background(), cfg, sh, []string{"-c", "ln -s " + victim + " .git/hooks"},
		sandbox.RunOptions{Dir: ws, Env: []string{"PATH=/usr/bin:/bin"}})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("the program could not plant the link: %v %+v %s", err, res, res.Stderr)
	}
	if !slices.Equal(res.Removed, []string{hooks}) {
		t.Errorf("RunResult.Removed = %v, want [%s]", res.Removed, hooks)
	}
	if _, err := os.Lstat(hooks); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the link %s is still there: %v", hooks, err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("the removal followed the link and took %s: %v", keep, err)
	}
}
