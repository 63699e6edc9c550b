package linux

// What the tests moved here from the root package call by their old
// names: the Config as plain data, resolve, the Strict gate, and a Sandbox
// of this engine alone.

import (
	"github.com/openparallax/sandbox/internal/spec"
)

type (
	Config = spec.Config
	Limits = spec.Limits
)

func resolve(cfg Config) (*spec.Resolved, error) { return spec.Resolve(cfg) }

func checkApplicable(p spec.Plan, cfg Config) error {
	return spec.CheckApplicable(p, cfg.Strict, spec.ScopeCommand)
}

func checkApplicableIn(p spec.Plan, cfg Config, scope string) error {
	return spec.CheckApplicable(p, cfg.Strict, scope)
}

// testSandbox is sandbox.New() on Linux without the root package: the
// engine's ApplySelf and WrapCommand on a Config.
type testSandbox struct{}

func New() testSandbox { return testSandbox{} }
