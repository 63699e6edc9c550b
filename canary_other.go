//go:build !linux && !darwin && !windows

package sandbox

import "runtime"

func verifyPlatform(Config) CanaryResult {
	why := "no sandbox mechanism on " + runtime.GOOS
	return NewCanaryResult(ModeNone, []ProbeResult{
		{Name: "file_read", Status: ProbeSkipped, Error: why},
		{Name: "file_write", Status: ProbeSkipped, Error: why},
		{Name: "network", Status: ProbeSkipped, Error: why},
		{Name: "process_spawn", Status: ProbeSkipped, Error: why},
	})
}
