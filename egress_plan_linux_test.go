//go:build linux

package sandbox_test

import (
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/openparallax/sandbox"
)

// A Config that binds P and connects to the caller's localhost:P is
// refused under the egress namespace by WrapCommand and Run alike (issue
// 28; the plan's side is internal/linux's TestEgressPlanAsData).
func TestEgressLoopbackBindRefused(t *testing.T) {
	if sandbox.Probe().Version < 1 {
		t.Skip("no Landlock here: WrapCommand fails before egress")
	}
	cfg := sandbox.Config{AllowedTCPConnect: []string{"localhost:8080"}, AllowedTCPBind: []uint16{8080}}
	var ce *sandbox.ConfigError
	if err := sandbox.New().WrapCommand(exec.Command("/bin/true"), cfg); !errors.As(err, &ce) || ce.Value != "localhost:8080" {
		t.Errorf("WrapCommand: %v, want the ConfigError for localhost:8080", err)
	}
	if _, err := sandbox.Run(t.Context(), cfg, "/bin/true", nil, sandbox.RunOptions{}); !errors.As(err, &ce) || ce.Value != "localhost:8080" {
		t.Errorf("Run: %v, want the ConfigError for localhost:8080", err)
	}
}

// PlanFor's plan with a host name: the WrapCommand/Run tcp_connect_host
// entry first, which Describe reads (moved from internal/linux's
// TestEgressPlanAsData, which tests the plan as data).
func TestEgressPlanDescribed(t *testing.T) {
	// PlanFor's plan: the WrapCommand/Run entry first, which
	// Describe (written for a program started with Run) reads.
	p, err := sandbox.PlanFor(sandbox.Config{AllowedTCPConnect: []string{"example.com:443"}})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Available {
		t.Skip("no sandbox here")
	}
	var scopes []string
	for _, f := range p.Features {
		if f.Feature == sandbox.FeatureTCPHost {
			scopes = append(scopes, f.Scope)
		}
	}
	if !slices.Equal(scopes, []string{sandbox.ScopeCommand, sandbox.ScopeApplySelf}) {
		t.Errorf("tcp_connect_host entries: scopes %v, want command then apply_self", scopes)
	}
	if d := p.Describe(); strings.Contains(d, "Only the ports are enforced") {
		t.Errorf("Describe with the proxy in force says hosts are not enforced:\n%s", d)
	}
}
