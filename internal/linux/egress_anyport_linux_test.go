//go:build linux

package linux

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/openparallax/sandbox/internal/spec"
)

// Strict refuses an any-port entry's partial grant under WrapCommand (see
// TestEgressPlanAnyPort for the plan as data).
func TestEgressPlanAnyPortStrictWrapCommand(t *testing.T) {
	if kernel().abi < 1 {
		t.Skip("no Landlock here: WrapCommand fails before the plan is checked")
	}
	cmd := exec.Command("/bin/true")
	err := New().WrapCommand(cmd, Config{AllowedTCPConnect: []string{"localhost:*"}, Strict: true})
	if !errors.Is(err, spec.ErrNotEnforced) || !strings.Contains(err.Error(), spec.FeatureTCPAnyPort) {
		t.Errorf("Strict WrapCommand with localhost:*: %v, want ErrNotEnforced naming %s", err, spec.FeatureTCPAnyPort)
	}
}
