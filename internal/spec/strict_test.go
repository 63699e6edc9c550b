package spec

import (
	"errors"
	"strings"
	"testing"
)

// TestStrictAccepts: StrictAcceptLoader lets Strict pass the loader's gap
// and nothing else, and needs Strict.
func TestStrictAccepts(t *testing.T) {
	p := Plan{Available: true, Features: []Enforcement{
		{Feature: FeatureExecLoader, Detail: "loader"},
		{Feature: FeatureDenyWrite, Detail: "absent", Scope: ScopeCommand},
	}}
	c := Config{Strict: true, StrictAcceptLoader: true}
	err := CheckApplicable(p, c.Strict, ScopeCommand, c.StrictAccepts()...)
	if !errors.Is(err, ErrNotEnforced) || !strings.Contains(err.Error(), FeatureDenyWrite) || strings.Contains(err.Error(), FeatureExecLoader) {
		t.Errorf("with the option: %v, want only %s refused", err, FeatureDenyWrite)
	}
	p.Features = p.Features[:1]
	if err := CheckApplicable(p, c.Strict, ScopeCommand, c.StrictAccepts()...); err != nil {
		t.Errorf("with the option, the loader alone: %v", err)
	}
	c.StrictAcceptLoader = false
	if len(c.StrictAccepts()) != 0 || CheckApplicable(p, c.Strict, ScopeCommand, c.StrictAccepts()...) == nil {
		t.Error("without the option the loader's gap is accepted")
	}
	if _, err := Resolve(Config{StrictAcceptLoader: true}); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("the option without Strict: %v, want ErrInvalidConfig", err)
	}
}
