//go:build !linux

package sandbox

// runTempPattern is os.MkdirTemp's pattern for a Run's temporary
// directory. Outside Linux it does not name its caller, and no sweep
// removes a killed caller's (not done here: telling a dead caller from a
// live one needs a process identity that survives PID reuse).
func runTempPattern() string { return "sandbox-run-*" }

// sweepRunTemps does nothing outside Linux (see runTempPattern).
func sweepRunTemps() {}
