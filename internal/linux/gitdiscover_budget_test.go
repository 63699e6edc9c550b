package linux

import (
	"fmt"
	"slices"
	"testing"
)

// The per-spawn budget of protected repositories: past gitMaxRepos (or
// gitMountBudget mounts), the rest are skipped, shallowest first kept.
func TestChooseGitReposBudget(t *testing.T) {
	var cands []gitCandidate
	for i := range gitMaxRepos + 3 {
		d := fmt.Sprintf("/ws/r%03d", i)
		cands = append(cands, gitCandidate{dir: d, protect: []string{d + "/.git/hooks", d + "/.git/config"}, pin: []string{d + "/.git"}})
	}
	c := chooseGitRepos(cands, []string{"/ws"})
	if len(c.dotgits) != gitMaxRepos || len(c.skipped) != 3 || c.skipped[0] != fmt.Sprintf("/ws/r%03d", gitMaxRepos) {
		t.Errorf("%d protected, skipped %q; want %d and the last 3", len(c.dotgits), c.skipped, gitMaxRepos)
	}
	// Mounts: one repository with many submodules takes the budget.
	big := gitCandidate{dir: "/ws/big", pin: []string{"/ws/big/.git"}}
	for i := range gitMountBudget {
		big.protect = append(big.protect, fmt.Sprintf("/ws/big/.git/modules/m%d/hooks", i))
	}
	c = chooseGitRepos([]gitCandidate{cands[0], big, cands[1]}, []string{"/ws"})
	if !slices.Equal(c.skipped, []string{"/ws/big"}) || len(c.dotgits) != 2 {
		t.Errorf("skipped %q, protected %q; want only /ws/big skipped", c.skipped, c.dotgits)
	}
}
