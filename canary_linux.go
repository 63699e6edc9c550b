//go:build linux

package sandbox

import "github.com/openparallax/sandbox/internal/linux"

// verifyPlatform runs the Linux canary (linux.Verify) for cfg.
func verifyPlatform(cfg Config) CanaryResult {
	rc, err := resolve(cfg)
	if err != nil {
		return NewCanaryResult(ModeLandlock, []ProbeResult{{Name: "config", Status: ProbeFailed, Error: err.Error()}})
	}
	return NewCanaryResult(ModeLandlock, linux.Verify(rc))
}
