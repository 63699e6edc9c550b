//go:build !linux

package runtemp

// Pattern is os.MkdirTemp's pattern for a Run's temporary
// directory. Outside Linux it does not name its caller, and no sweep
// removes a killed caller's (not done here: telling a dead caller from a
// live one needs a process identity that survives PID reuse).
func Pattern() string { return "sandbox-run-*" }

// sweepLazily does nothing outside Linux (see Pattern).
func sweepLazily(string) {}
