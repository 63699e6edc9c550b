package linux

import "github.com/openparallax/sandbox/internal/spec"

// GitReport is what the git checks after a command found (see gitEnd):
// CommandReport's and RunResult's Removed, GitCreated and Findings.
type GitReport struct {
	Removed  []string       // commondirs the checks removed
	Created  []string       // a .git that appeared at a spot (GitCreated)
	Findings []spec.Finding // what else the checks found
}

// CreatedGitEntryRisk says what a commondir, hooks or config the program
// created in a protected git directory would have done at the user's next
// git command there (RunResult.Removed lists each one removed).
func CreatedGitEntryRisk(name string) string {
	switch name {
	case "hooks":
		return "a later git run in that repository would have run the hooks in it, outside the sandbox"
	case "config":
		return "a later git run in that repository would have read it (core.hooksPath, core.fsmonitor, aliases run programs), outside the sandbox"
	}
	return "a later git run in that repository would have taken hooks and config from where it pointed"
}
