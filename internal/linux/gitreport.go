package linux

import "github.com/openparallax/sandbox/internal/spec"

// GitReport is what the git checks after a command found (see gitEnd):
// CommandReport's and RunResult's Removed, GitCreated and Findings.
type GitReport struct {
	Removed  []string       // commondirs the checks removed
	Created  []string       // a .git that appeared at a spot (GitCreated)
	Findings []spec.Finding // what else the checks found
}
