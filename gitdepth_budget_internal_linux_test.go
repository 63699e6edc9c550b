//go:build linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The walk's budget (made small here: the real one is 32,768 directories):
// a workspace over it is not walked in full, and that is said, never
// silently skipped: the plan's git_protection entry is not enforced and
// names the directories not walked, Strict refuses to start the program,
// and without Strict Run starts it and reports the part not walked as
// Findings. A repository in the part walked is protected all the same.
func TestGitWalkOverBudget(t *testing.T) {
	if k := kernel(); k.abi < 1 || !k.seccomp {
		t.Skipf("sandbox unavailable here: %s", k.abiReason)
	}
	if ns := namespaces(); !ns.ok {
		t.Skipf("the mount-namespace layer is unavailable here: %s", ns.reason)
	}
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		os.MkdirAll(filepath.Join(ws, fmt.Sprintf("d%02d", i), "below"), 0o755)
	}
	if out, err := exec.Command(git, "init", "-q", filepath.Join(ws, "d00")).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	defer setGitWalkBudget(10, 1000)()

	cfg := Config{AllowedWritePaths: []string{ws}}
	plan, err := PlanFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var entry *Enforcement
	for i, f := range plan.Features {
		if f.Feature == FeatureGitProtect && f.Scope == ScopeCommand {
			entry = &plan.Features[i]
		}
	}
	switch {
	case entry == nil:
		t.Fatalf("no git_protection entry: %+v", plan.Features)
	case entry.Enforced || !strings.Contains(entry.Detail, "not walked") || !strings.Contains(entry.Detail, filepath.Join(ws, "d09")+",") ||
		!strings.Contains(entry.Detail, filepath.Join(ws, "d00", ".git")):
		t.Errorf("git_protection: %+v; want not enforced, naming d09 (not walked: the top and d00 to d08 are the 10 walked) and d00/.git (protected)", *entry)
	}

	strict := cfg
	strict.Strict = true
	if _, err := Run(context.Background(), strict, "/bin/true", nil, RunOptions{Dir: ws}); !errors.Is(err, ErrNotEnforced) {
		t.Errorf("Strict Run over the walk's budget: %v, want ErrNotEnforced", err)
	}
	res, err := Run(context.Background(), cfg, "/bin/sh", []string{"-c", "echo x > " + filepath.Join(ws, "d00", ".git", "config")},
		RunOptions{Dir: ws})
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode == 0 || !strings.Contains(string(res.Stderr), "Read-only file system") {
		t.Errorf("writing d00/.git/config: exit %d %q; want EROFS (the part walked is protected)", res.ExitCode, res.Stderr)
	}
	var notWalked []string
	for _, f := range res.Findings {
		if f.Kind == FindingGitNotWalked {
			notWalked = append(notWalked, f.Path)
		}
	}
	if !slices.Contains(notWalked, filepath.Join(ws, "d09")) || len(notWalked) != gitNotWalkedNamed {
		t.Errorf("%s findings %q; want %s among them, and %d (those named at the start, once)", FindingGitNotWalked, notWalked, filepath.Join(ws, "d09"), gitNotWalkedNamed)
	}
}
