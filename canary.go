package sandbox

import (
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/openparallax/sandbox/internal/spec"
)

// Canary statuses (CanaryResult.Status).
const (
	CanarySandboxed   = "sandboxed"   // every applicable probe blocked: the only verified status
	CanaryPartial     = "partial"     // some blocked, some not
	CanaryUnsandboxed = "unsandboxed" // nothing blocked
	CanaryUnavailable = "unavailable" // no probe was applicable
	CanaryUnknown     = "unknown"     // no readable result (ReadCanaryResult)
)

// Probe outcomes (ProbeResult.Status).
const (
	ProbeBlocked = spec.ProbeBlocked // the sandbox denied it, by the exact error that proves so
	ProbeFailed  = spec.ProbeFailed  // it was not denied (or a positive control did not work)
	ProbeSkipped = spec.ProbeSkipped // not applicable here; Error says why
	ProbeAllowed = spec.ProbeAllowed // a positive control worked, as it must
)

// CanaryResult is the outcome of one canary run.
type CanaryResult struct {
	Verified  bool          `json:"verified"`
	Status    string        `json:"status"`
	Platform  string        `json:"platform"`
	Mechanism string        `json:"mechanism"`
	Probes    []ProbeResult `json:"probes"`
	Summary   string        `json:"summary"`
	Timestamp time.Time     `json:"timestamp"`
	// Nonce is the value the Engine handed the Agent for this run (see
	// [NewCanaryNonce]); the Agent copies it here before writing the
	// result, and [ReadFreshCanaryResult] refuses a result without it.
	Nonce string `json:"nonce,omitempty"`
}

// ProbeResult is one attempted operation: Name, Status (a Probe*
// outcome), Target, Error. A positive control (something the sandbox must
// still allow) has Status "allowed" when it worked and "failed" when it did
// not.
type ProbeResult = spec.ProbeResult

func (r CanaryResult) count(status string) int {
	n := 0
	for _, p := range r.Probes {
		if p.Status == status {
			n++
		}
	}
	return n
}

// Blocked counts the probes the sandbox denied.
func (r CanaryResult) Blocked() int { return r.count(ProbeBlocked) }

// Failed counts the probes that were not denied and the positive controls
// that did not work.
func (r CanaryResult) Failed() int { return r.count(ProbeFailed) }

// Skipped counts the probes that did not apply here.
func (r CanaryResult) Skipped() int { return r.count(ProbeSkipped) }

// rollup is the status of a set of probes: applicable = blocked + failed;
// none applicable → unavailable; none failed → sandboxed; some blocked →
// partial; else unsandboxed.
func rollup(probes []ProbeResult) string {
	r := CanaryResult{Probes: probes}
	switch b, f := r.Blocked(), r.Failed(); {
	case b+f == 0:
		return CanaryUnavailable
	case f == 0:
		return CanarySandboxed
	case b > 0:
		return CanaryPartial
	default:
		return CanaryUnsandboxed
	}
}

// summarize is the one-line summary, e.g.
// "Sandbox verified: 2/2 probes blocked (file_read, file_write). Skipped: network."
// Only a result whose status is sandboxed begins "Sandbox verified"; every
// other begins "Sandbox not verified", so that no log line of a failed or
// partial run can be read as a success.
func summarize(probes []ProbeResult) string {
	var blocked, failed, skipped []string
	for _, p := range probes {
		switch p.Status {
		case ProbeBlocked:
			blocked = append(blocked, p.Name)
		case ProbeFailed:
			failed = append(failed, p.Name)
		case ProbeSkipped:
			skipped = append(skipped, p.Name)
		}
	}
	var b strings.Builder
	verdict := "Sandbox not verified"
	if rollup(probes) == CanarySandboxed {
		verdict = "Sandbox verified"
	}
	fmt.Fprintf(&b, "%s: %d/%d probes blocked", verdict, len(blocked), len(blocked)+len(failed))
	if len(blocked) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(blocked, ", "))
	}
	b.WriteString(".")
	if len(failed) > 0 {
		fmt.Fprintf(&b, " Failed: %s.", strings.Join(failed, ", "))
	}
	if len(skipped) > 0 {
		fmt.Fprintf(&b, " Skipped: %s.", strings.Join(skipped, ", "))
	}
	return b.String()
}

// NewCanaryResult rolls probes up into a result: status, verified flag and
// summary are derived, never set by hand.
func NewCanaryResult(mechanism string, probes []ProbeResult) CanaryResult {
	status := rollup(probes)
	return CanaryResult{
		Verified:  status == CanarySandboxed,
		Status:    status,
		Platform:  runtime.GOOS,
		Mechanism: mechanism,
		Probes:    probes,
		Summary:   summarize(probes),
		Timestamp: time.Now().UTC(),
	}
}

// VerifyCanary runs the canary probes in the calling process, which should
// already be sandboxed. In a process that confined itself with ApplySelf
// (of a Sandbox from [New]) it verifies against the Config that was
// applied, the last one if ApplySelf was called more than once: the same
// as VerifyCanaryFor(cfg). Otherwise it chooses targets as for an empty
// Config, nothing granted beyond the system paths, and a probe may then hit
// something the sandbox grants (a granted port, say) and fail.
//
// A program started with WrapCommand has not called ApplySelf and does not
// know its Config: the Engine should hand it over, for example as JSON in
// an environment variable or a file the program reads, and the program
// then calls VerifyCanaryFor with it (examples/engine and examples/agent
// do this with SANDBOX_CONFIG). A Config so received only picks the
// probes' targets; a wrong one can make probes skip or controls fail, never
// turn a denial the sandbox did not make into "blocked".
func VerifyCanary() CanaryResult {
	if c := appliedConfig.Load(); c != nil {
		return VerifyCanaryFor(*c)
	}
	return VerifyCanaryFor(Config{})
}

// VerifyCanaryFor runs the canary probes for a process sandboxed with cfg:
// each probe attempts something cfg does not grant and counts as blocked only
// on the exact error that proves the sandbox denied it; positive controls
// check that what cfg grants still works (a failed control fails the
// result). A run takes milliseconds and leaves nothing behind.
//
// cfg's paths are resolved again inside the sandbox: on macOS, where a
// sandboxed process may not be able to read the symlinks above a path, pass
// paths already resolved (/private/tmp, not /tmp).
func VerifyCanaryFor(cfg Config) CanaryResult { return verifyPlatform(cfg) }

// What ApplySelf remembers: the Config that left this process restricted,
// which VerifyCanary then verifies against.
