//go:build darwin

package sandbox

// The macOS canary, run inside a process started by WrapCommand: the probes
// are internal/darwin's (canary_darwin.go there says what each attempts and
// which errno counts as blocked).

import "github.com/openparallax/sandbox/internal/darwin"

func verifyPlatform(cfg Config) CanaryResult {
	return NewCanaryResult(ModeSandboxExec, darwin.Verify(cfg.spec()))
}
