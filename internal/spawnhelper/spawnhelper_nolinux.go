//go:build !linux

package spawnhelper

import "os"

// Executable reports that there is no helper outside Linux.
func Executable() (*os.File, string) { return nil, "no helper outside Linux" }

// Unproven reports that there is no helper outside Linux.
func Unproven() (*os.File, string) { return nil, "no helper outside Linux" }

// Proven does nothing outside Linux.
func Proven(*os.File) {}

// Decided is true outside Linux: there is no helper to probe.
func Decided() bool { return true }

// ProbeRuns is 0 outside Linux.
func ProbeRuns() int { return 0 }
