// Package pty opens pseudo-terminal pairs for Run and `sandbox run --tty`:
// the program gets the pair's terminal end, the caller keeps the other, so
// that no program is ever handed the caller's own terminal (whatever it does
// to its terminal, it does to one the caller owns and closes).
//
// Linux and macOS; elsewhere every function returns an error (or, for
// SetControllingTerminal, does nothing; Refusal says why).
package pty
