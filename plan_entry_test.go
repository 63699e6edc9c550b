package sandbox_test

import (
	"runtime"
	"strings"
	"testing"

	"github.com/openparallax/sandbox"
)

// Plan.For keeps the entries of one entry point and those of both, so
// that a feature is listed at most once, and Describe of it names no gap
// of the other entry point (issue 31, item 8: ApplySelf's "any host" gap
// is not Run's).
func TestPlanFor(t *testing.T) {
	p := sandbox.Plan{Available: true, Grants: sandbox.Grants{Connect: []string{"example.com:443"}}, Features: []sandbox.Enforcement{
		{Feature: sandbox.FeatureFilesystem, Enforced: true},
		{Feature: sandbox.FeatureTCPHost, Scope: sandbox.ScopeApplySelf, Detail: "ApplySelf: any host on those ports"},
		{Feature: sandbox.FeatureTCPHost, Scope: sandbox.ScopeCommand, Enforced: true, Detail: "egress layer"},
	}, MountLayer: []string{"bind"}, ChildHalf: "helper", Egress: &sandbox.EgressPlan{Mode: sandbox.EgressProxy}}
	for _, c := range []struct {
		scope string
		want  int
		gap   bool
	}{{sandbox.ScopeCommand, 2, false}, {sandbox.ScopeApplySelf, 2, true}, {"", 3, true}} {
		got := p.For(c.scope)
		if len(got.Features) != c.want {
			t.Errorf("For(%q): %d features, want %d: %+v", c.scope, len(got.Features), c.want, got.Features)
		}
		for _, f := range got.Features {
			if f.Scope != "" && c.scope != "" && f.Scope != c.scope {
				t.Errorf("For(%q) kept %+v", c.scope, f)
			}
		}
		if d := got.Describe(); strings.Contains(d, "any host on those ports") != c.gap {
			t.Errorf("For(%q).Describe() names ApplySelf's gap: %v, want %v:\n%s", c.scope, !c.gap, c.gap, d)
		}
	}
	if self := p.For(sandbox.ScopeApplySelf); self.MountLayer != nil || self.ChildHalf != "" || self.Egress != nil {
		t.Errorf("ApplySelf's plan keeps what only WrapCommand and Run do: %+v", self)
	}
	if cmd := p.For(sandbox.ScopeCommand); cmd.MountLayer == nil || cmd.ChildHalf == "" || cmd.Egress == nil {
		t.Errorf("WrapCommand's plan lost its layers: %+v", cmd)
	}
	if len(p.Features) != 3 {
		t.Errorf("For changed the plan it was called on: %+v", p.Features)
	}
}

// PlanForPlatform computes the macOS and Windows plans on any OS, as
// data, and is PlanFor on this OS's own platform.
func TestPlanForPlatform(t *testing.T) {
	dir := t.TempDir()
	cfg := sandbox.Config{AllowedWritePaths: []string{dir}, AllowedTCPConnect: []string{"localhost:8080"}}
	for _, goos := range []string{"darwin", "windows", runtime.GOOS} {
		p, err := sandbox.PlanForPlatform(cfg, goos)
		if err != nil {
			t.Fatalf("%s: %v", goos, err)
		}
		if p.Platform != goos || len(p.Features) == 0 || len(p.Grants.Write) != 1 {
			t.Errorf("%s: %+v", goos, p)
		}
	}
	if p, _ := sandbox.PlanForPlatform(cfg, "windows"); runtime.GOOS != "windows" && (p.Mechanism != sandbox.ModeJobObject || !p.Available) {
		t.Errorf("the Windows plan computed here: %+v", p)
	}
	if p, _ := sandbox.PlanForPlatform(cfg, "darwin"); runtime.GOOS != "darwin" && (p.Mechanism != sandbox.ModeSandboxExec || !p.Available) {
		t.Errorf("the macOS plan computed here: %+v", p)
	}
	if _, err := sandbox.PlanForPlatform(cfg, "plan9"); err == nil {
		t.Error("plan9: no error")
	}
	if runtime.GOOS != "linux" {
		if _, err := sandbox.PlanForPlatform(cfg, "linux"); err == nil || !strings.Contains(err.Error(), "only on Linux") {
			t.Errorf("linux on %s: %v", runtime.GOOS, err)
		}
	}
	if _, err := sandbox.PlanForPlatform(sandbox.Config{AllowedReadPaths: []string{"relative"}}, "windows"); err == nil {
		t.Error("a refused Config: no error")
	}
}
