//go:build linux

package sandbox_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/openparallax/sandbox"
)

// notEnforcedCommand lists the features PlanFor reports not enforced for
// WrapCommand and Run (the entries Strict considers there).
func notEnforcedCommand(t *testing.T, cfg sandbox.Config) []string {
	t.Helper()
	p, err := sandbox.PlanFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range p.NotEnforced() {
		if f.Scope == "" || f.Scope == sandbox.ScopeCommand {
			out = append(out, f.Feature)
		}
	}
	return out
}

// TestStrictAcceptLoader: Strict alone refuses a dynamically linked program
// granted by the exec allowlist (its loader is a gap no Config closes);
// StrictAcceptLoader runs it; and the option accepts that gap only: a deny
// path that cannot be enforced is still refused.
func TestStrictAcceptLoader(t *testing.T) {
	requireSandbox(t)
	cfg := sandbox.Config{AllowedExecPaths: []string{"/bin", "/usr/bin"}, Strict: true}
	gaps := notEnforcedCommand(t, cfg)
	if !slices.Contains(gaps, sandbox.FeatureExecLoader) {
		t.Skipf("no dynamic loader gap here (/bin/true statically linked, or no loader found): not enforced %v", gaps)
	}
	run := func(cfg sandbox.Config) error {
		res, err := sandbox.Run(context.Background(), cfg, "/bin/true", nil, sandbox.RunOptions{Env: []string{"PATH=/usr/bin:/bin"}})
		if err == nil && res.ExitCode != 0 {
			t.Fatalf("/bin/true: exit %d (%s), stderr %s", res.ExitCode, res.State, res.Stderr)
		}
		return err
	}

	err := run(cfg)
	if !errors.Is(err, sandbox.ErrNotEnforced) || !strings.Contains(err.Error(), sandbox.FeatureExecLoader+" (") {
		t.Fatalf("Strict alone: %v, want ErrNotEnforced naming %s", err, sandbox.FeatureExecLoader)
	}

	cfg.StrictAcceptLoader = true
	others := slices.DeleteFunc(slices.Clone(gaps), func(f string) bool { return f == sandbox.FeatureExecLoader })
	err = run(cfg)
	switch {
	case len(others) == 0 && err != nil:
		t.Fatalf("Strict + StrictAcceptLoader: %v, want /bin/true to run", err)
	case len(others) > 0 && (!errors.Is(err, sandbox.ErrNotEnforced) || strings.Contains(err.Error(), sandbox.FeatureExecLoader+" (")):
		t.Fatalf("Strict + StrictAcceptLoader with %v not enforced on this kernel: %v, want those refused and not the loader", others, err)
	}

	// Every other gap is still refused: a deny path that does not exist
	// inside a write path cannot be mounted read-only.
	ws := realTempDir(t)
	cfg.AllowedWritePaths = []string{ws}
	cfg.DenyWritePaths = []string{filepath.Join(ws, "absent")}
	cfg.NoGitProtection = true
	if !slices.Contains(notEnforcedCommand(t, cfg), sandbox.FeatureDenyWrite) {
		t.Fatalf("the plan enforces a deny path that does not exist: %v", notEnforcedCommand(t, cfg))
	}
	err = run(cfg)
	if !errors.Is(err, sandbox.ErrNotEnforced) || !strings.Contains(err.Error(), sandbox.FeatureDenyWrite+" (") || strings.Contains(err.Error(), sandbox.FeatureExecLoader+" (") {
		t.Errorf("Strict + StrictAcceptLoader with an absent deny path: %v, want ErrNotEnforced naming %s and not %s", err, sandbox.FeatureDenyWrite, sandbox.FeatureExecLoader)
	}
	if _, err := os.Stat(filepath.Join(ws, "absent")); err == nil {
		t.Error("the refused run created the deny path")
	}
}

// TestStrictAcceptLoaderNeedsStrict: the option alone is refused, not
// taken as "no Strict".
func TestStrictAcceptLoaderNeedsStrict(t *testing.T) {
	err := sandbox.Config{StrictAcceptLoader: true}.Validate()
	if !errors.Is(err, sandbox.ErrInvalidConfig) || !strings.Contains(err.Error(), "strict_accept_loader") {
		t.Errorf("StrictAcceptLoader without Strict: %v, want ErrInvalidConfig naming strict_accept_loader", err)
	}
}
