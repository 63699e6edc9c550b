package sandbox

import (
	"strings"
	"testing"

	"github.com/openparallax/sandbox/internal/linux"
)

// Describe (written for Run) lists the WrapCommand/Run gap of file_metadata
// in a Linux plan, for each state of the mount layer (the plan's side is
// internal/linux's TestMetadataPlanPerEntryPoint).
func TestDescribeMetadataGap(t *testing.T) {
	for _, c := range []struct {
		name  string
		cfg   Config
		layer string
	}{
		{"layer not used", Config{}, "not needed"},
		{"layer used", Config{}, "used"},
		{"layer unavailable", Config{}, "unavailable"},
		{"allow_chown, layer used", Config{AllowChown: true}, "used"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rc, err := resolve(c.cfg)
			if err != nil {
				t.Fatal(err)
			}
			plan := Plan(linux.TestMetadataPlan(rc, c.layer))
			var cmd *Enforcement
			for i, f := range plan.Features {
				if f.Feature == FeatureMetadata && f.Scope == ScopeCommand {
					cmd = &plan.Features[i]
					break
				}
			}
			if cmd == nil {
				t.Fatalf("no WrapCommand/Run file_metadata entry: %+v", plan.Features)
			}
			if d := plan.Describe(); !cmd.Enforced && !strings.Contains(d, FeatureMetadata+": "+cmd.Detail) {
				t.Errorf("Describe does not name the WrapCommand/Run gap:\n%s", d)
			}
		})
	}
}
