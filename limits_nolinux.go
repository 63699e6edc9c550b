//go:build !linux

package sandbox

import (
	"os/exec"

	"github.com/openparallax/sandbox/internal/spec"
)

// currentCreds is only consulted for Linux plans, which other platforms
// build in tests as data: there is no Linux caller to ask.
func currentCreds() selfCreds { return selfCreds{} }

// commandCgroup: no cgroup outside Linux (Linux plans are built here only as
// data, in tests).
func commandCgroup(spec.Limits) (cgroupAvail, *struct{}) { return cgroupAvail{}, nil }

// releaseCommand: WrapCommand makes no cgroup on this platform.
func releaseCommand(*exec.Cmd) (string, error) { return "", nil }
