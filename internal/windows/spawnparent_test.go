package windows

import (
	"errors"
	"strings"
	"testing"

	"github.com/openparallax/sandbox/internal/spec"
)

// The process_spawn_parent decision as data: token facts and the parent
// control in, the probe's outcome out. A Job Object alone (a medium or high
// integrity token, unrestricted) must fail whatever happened to the parent:
// exited, another user's, elevated, or a reused ID (all of which refuse
// OpenProcess or name no process).
func TestSpawnParentProbe(t *testing.T) {
	const user = "S-1-5-21-1-2-3-1001"
	plain := TokenFacts{Integrity: IntegrityMedium, User: user}
	gone := ParentTry{PID: 4242, Outcome: ParentNotTried}
	denied := ParentTry{PID: 4242, Outcome: ParentDenied, Err: "Access is denied."}
	opened := ParentTry{PID: 4242, Outcome: ParentOpened}
	other := ParentTry{PID: 4242, Outcome: ParentOtherError, Err: "The handle is invalid."}
	for _, c := range []struct {
		name   string
		tok    TokenFacts
		parent ParentTry
		want   string
		why    string // in the error text
	}{
		{"job alone, parent gone", plain, gone, spec.ProbeFailed, "integrity level medium, is not restricted"},
		{"job alone, parent denied (another user, elevated, reused ID)", plain, denied, spec.ProbeFailed, "was denied"},
		{"job alone, parent opened", plain, opened, spec.ProbeFailed, "is not restricted"},
		{"job alone, parent error", plain, other, spec.ProbeFailed, "The handle is invalid."},
		{"elevated, parent gone", TokenFacts{Integrity: IntegrityHigh, User: user}, gone, spec.ProbeFailed, "integrity level high"},
		{"token unreadable", TokenFacts{Err: errors.New("boom")}, denied, spec.ProbeFailed, "could not be read (boom)"},
		{"zero facts (never read)", TokenFacts{}, gone, spec.ProbeFailed, "the facts were not read"},
		{"low integrity, parent gone", TokenFacts{Integrity: IntegrityLow, User: user}, gone, spec.ProbeBlocked, "below medium"},
		{"low integrity, parent denied", TokenFacts{Integrity: IntegrityLow, User: user}, denied, spec.ProbeBlocked, "was denied"},
		{"untrusted, parent error", TokenFacts{Integrity: IntegrityUntrusted, User: user}, other, spec.ProbeBlocked, "untrusted"},
		// Evidence beats inference: a low token whose parent opens (a
		// low-integrity parent) leaves the route open.
		{"low integrity, parent opened", TokenFacts{Integrity: IntegrityLow, User: user}, opened, spec.ProbeFailed, "succeeded"},
		{"AppContainer", TokenFacts{Integrity: IntegrityLow, AppContainer: true, User: user}, gone, spec.ProbeBlocked, "AppContainer"},
		{"restricted, NULL SID only", TokenFacts{Integrity: IntegrityMedium, User: user, RestrictingSIDs: []string{"S-1-0-0"}},
			gone, spec.ProbeBlocked, "restricted token whose restricting SIDs (S-1-0-0)"},
		{"restricted, user among restricting SIDs", TokenFacts{Integrity: IntegrityMedium, User: user,
			RestrictingSIDs: []string{"S-1-1-0", strings.ToLower(user)}}, gone, spec.ProbeFailed, "include " + strings.ToLower(user)},
		{"restricted, SYSTEM among restricting SIDs", TokenFacts{Integrity: IntegrityMedium, User: user,
			RestrictingSIDs: []string{sidSystem}}, denied, spec.ProbeFailed, "include S-1-5-18"},
		{"restricted, Administrators among restricting SIDs", TokenFacts{Integrity: IntegrityMedium, User: user,
			RestrictingSIDs: []string{"S-1-5-12", sidAdministrators}}, gone, spec.ProbeFailed, "include S-1-5-32-544"},
	} {
		r := SpawnParentProbe(c.tok, c.parent)
		if r.Name != "process_spawn_parent" || r.Status != c.want || !strings.Contains(r.Error, c.why) {
			t.Errorf("%s: %s %q, want %s containing %q", c.name, r.Status, r.Error, c.want, c.why)
		}
		if r.Status == spec.ProbeFailed && !strings.Contains(r.Error, "PROC_THREAD_ATTRIBUTE_PARENT_PROCESS") {
			t.Errorf("%s: failed without naming the route: %q", c.name, r.Error)
		}
	}
}
