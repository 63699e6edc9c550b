package spec

// Probe outcomes (ProbeResult.Status).
const (
	ProbeBlocked = "blocked" // the sandbox denied it, by the exact error that proves so
	ProbeFailed  = "failed"  // it was not denied (or a positive control did not work)
	ProbeSkipped = "skipped" // not applicable here; Error says why
	ProbeAllowed = "allowed" // a positive control worked, as it must
)

// ProbeResult is one attempted operation. A positive control (something the
// sandbox must still allow) has Status "allowed" when it worked and "failed"
// when it did not.
type ProbeResult struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Target string `json:"target,omitempty"`
	Error  string `json:"error,omitempty"`
}
