//go:build darwin

package sandbox

// The darwin canary is not written yet: every probe is skipped, so the result
// is "unavailable" and never verified.
func verifyPlatform(Config) CanaryResult {
	why := "the darwin canary is not implemented yet"
	return NewCanaryResult(ModeSandboxExec, []ProbeResult{
		{Name: "file_read", Status: ProbeSkipped, Error: why},
		{Name: "file_write", Status: ProbeSkipped, Error: why},
		{Name: "network", Status: ProbeSkipped, Error: why},
		{Name: "process_spawn", Status: ProbeSkipped, Error: why},
	})
}
