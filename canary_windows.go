//go:build windows

package sandbox

// The Windows canary: process_spawn and process_spawn_parent probes, file
// and network probes skipped (windows.Probes says why).

import "github.com/openparallax/sandbox/internal/windows"

func verifyPlatform(cfg Config) CanaryResult {
	rc, err := resolve(cfg)
	if err != nil {
		return NewCanaryResult(ModeJobObject, []ProbeResult{{Name: "config", Status: ProbeFailed, Error: err.Error()}})
	}
	return NewCanaryResult(ModeJobObject, windows.Probes(rc.Config))
}
