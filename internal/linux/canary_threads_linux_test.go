//go:build linux

package linux

import (
	"strings"
	"testing"

	"github.com/openparallax/sandbox/internal/spec"
)

// probeCapabilities on thread states as /proc reports them: the bounding
// set a root thread keeps is accepted only under no_new_privs, and reported.
func TestProbeCapabilitiesBoundingSet(t *testing.T) {
	const full = 0x1ffffffffff
	thread := func(uids []string, nnp string, bnd uint64) threadState {
		return threadState{tid: "1", noNewPrivs: nnp, uids: uids,
			caps: map[string]uint64{"CapEff": 0, "CapPrm": 0, "CapInh": 0, "CapAmb": 0, "CapBnd": bnd}}
	}
	root := []string{"0", "0", "0", "0"}
	nobody := []string{"65534", "65534", "65534", "65534"}
	held := thread(root, "1", full)
	held.caps["CapPrm"] = 1 << 21
	cases := []struct {
		name     string
		threads  []threadState
		want     string
		errorHas string
	}{
		{"root, bounding set empty", []threadState{thread(root, "1", 0)}, spec.ProbeBlocked, "bounding set empty"},
		{"root, bounding set kept, no_new_privs", []threadState{thread(root, "1", full)}, spec.ProbeBlocked, "bounding set 000001ffffffffff left, which grants nothing under no_new_privs"},
		{"root, bounding set kept, no no_new_privs", []threadState{thread(root, "1", full), thread(root, "0", full)}, spec.ProbeFailed, "without no_new_privs"},
		{"root, no_new_privs, bounding set empty without it", []threadState{thread(root, "0", 0)}, spec.ProbeBlocked, "bounding set empty"},
		{"root, a permitted capability", []threadState{held}, spec.ProbeFailed, "CapPrm"},
		{"nobody, bounding set kept", []threadState{thread(nobody, "1", full)}, spec.ProbeSkipped, "not root"},
		{"nobody without no_new_privs", []threadState{thread(nobody, "0", full)}, spec.ProbeSkipped, "not root"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := probeCapabilities(c.threads, nil)
			if r.Status != c.want || !strings.Contains(r.Error, c.errorHas) {
				t.Errorf("got %s %q, want %s mentioning %q", r.Status, r.Error, c.want, c.errorHas)
			}
		})
	}
}
