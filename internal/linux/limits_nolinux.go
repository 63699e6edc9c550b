//go:build !linux

package linux

import (
	"github.com/openparallax/sandbox/internal/spec"
)

// currentCreds is only consulted for Linux plans, which other platforms
// build in tests as data: there is no Linux caller to ask.
func currentCreds() selfCreds { return selfCreds{} }

// commandCgroup: no cgroup outside Linux (Linux plans are built here only as
// data, in tests).
func commandCgroup(spec.Limits) (spec.Cgroup, *struct{}) { return spec.Cgroup{}, nil }

// The resources rlimitsFor names, numbered as on most Linux architectures
// (asm-generic; Linux plans are built here only as data, in tests).
const (
	rlimitCPU    = 0
	rlimitFSIZE  = 1
	rlimitDATA   = 2
	rlimitCORE   = 4
	rlimitNPROC  = 6
	rlimitNOFILE = 7
)
