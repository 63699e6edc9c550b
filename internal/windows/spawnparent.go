package windows

// The decision of the canary's process_spawn_parent probe, as data: built
// and tested on every OS. The Windows half (canary_windows.go) reads the
// facts from the process's own token and tries its parent.

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/openparallax/sandbox/internal/spec"
)

// Integrity levels: the last sub-authority (RID) of a token's mandatory
// label, S-1-16-RID (winnt.h SECURITY_MANDATORY_*_RID).
const (
	IntegrityUntrusted = 0x0000
	IntegrityLow       = 0x1000
	IntegrityMedium    = 0x2000
	IntegrityHigh      = 0x3000
	IntegritySystem    = 0x4000
)

// SIDs that the default DACL of a process grants PROCESS_CREATE_PROCESS to
// (through GENERIC_ALL), besides the process's user: a restricting SID among
// them lets a restricted token pass the second access check too.
const (
	sidSystem         = "S-1-5-18"
	sidAdministrators = "S-1-5-32-544"
)

// TokenFacts is what process_spawn_parent reads from the process's own
// token: whether that token can open the other processes of its user for
// PROCESS_CREATE_PROCESS, the first step of starting a process outside the
// job with one of them as parent (PROC_THREAD_ATTRIBUTE_PARENT_PROCESS).
type TokenFacts struct {
	// Integrity is the RID of the token's mandatory label (Integrity*).
	Integrity uint32
	// AppContainer: the token is an AppContainer token
	// (TokenIsAppContainer).
	AppContainer bool
	// User is the token's user SID, in string form.
	User string
	// RestrictingSIDs are the restricting SIDs of a restricted token
	// (TokenRestrictedSids), in string form; empty when the token is not
	// restricted.
	RestrictingSIDs []string
	// Err, when not nil, says the token could not be read; nothing else
	// is then known. Facts without a User count as unread too.
	Err error
}

// ParentOutcome is what OpenProcess(parent, PROCESS_CREATE_PROCESS) gave.
type ParentOutcome int

const (
	// ParentNotTried: there is no parent process, or it has exited (its ID
	// names no process), so nothing was opened.
	ParentNotTried ParentOutcome = iota
	// ParentOpened: the parent was opened; the route is open through it.
	ParentOpened
	// ParentDenied: ERROR_ACCESS_DENIED.
	ParentDenied
	// ParentOtherError: any other error.
	ParentOtherError
)

// ParentTry is the outcome of opening the parent process for
// PROCESS_CREATE_PROCESS, a control beside the token: the parent may have
// exited, belong to another user, run at a higher integrity level, or be
// another process with a reused ID, so a refusal there says nothing about
// the user's other processes; a success says the route is open.
type ParentTry struct {
	PID     int
	Outcome ParentOutcome
	// Err is the error text of ParentDenied and ParentOtherError.
	Err string
}

// parentRoute is the route the probe is about, named in every result.
const parentRoute = "a process created with one of them as parent (PROC_THREAD_ATTRIBUTE_PARENT_PROCESS) starts outside the job"

// SpawnParentProbe decides process_spawn_parent from the process's own
// token, never from the parent alone: blocked only when the token cannot
// open the user's processes for PROCESS_CREATE_PROCESS (an AppContainer
// token, an integrity level below medium, or a restricted token none of
// whose restricting SIDs is granted by a process's default DACL) and the
// parent could not be opened either; failed when the parent was opened, when
// the token can open the user's processes (a Job Object alone: whatever
// happened to the parent), and when the token could not be read.
func SpawnParentProbe(tok TokenFacts, parent ParentTry) spec.ProbeResult {
	const name = "process_spawn_parent"
	failed := func(format string, args ...any) spec.ProbeResult {
		return spec.ProbeResult{Name: name, Status: spec.ProbeFailed, Target: "this process's token",
			Error: fmt.Sprintf(format, args...)}
	}
	if tok.Err == nil && tok.User == "" {
		// The zero TokenFacts would read as an untrusted token: facts
		// that were never read must not block anything.
		tok.Err = errors.New("no user SID: the facts were not read")
	}
	if tok.Err != nil {
		return failed("this process's token could not be read (%v), so nothing shows that it cannot open the user's processes "+
			"for PROCESS_CREATE_PROCESS, and %s; %s", tok.Err, parentRoute, parentNote(parent))
	}
	closes, why := tokenClosesParentRoute(tok)
	switch {
	case !closes:
		return failed("not denied: %s, so it can open the user's other processes for PROCESS_CREATE_PROCESS, and %s "+
			"(a Job Object does not stop that); %s", why, parentRoute, parentNote(parent))
	case parent.Outcome == ParentOpened:
		return failed("not denied: %s, but %s, and %s", why, parentNote(parent), parentRoute)
	}
	return spec.ProbeResult{Name: name, Status: spec.ProbeBlocked, Target: "this process's token",
		Error: why + "; " + parentNote(parent)}
}

// tokenClosesParentRoute says whether a token with these facts is refused
// PROCESS_CREATE_PROCESS on the processes of its user, and why.
func tokenClosesParentRoute(tok TokenFacts) (bool, string) {
	switch {
	case tok.AppContainer:
		return true, "AppContainer token: the user's processes grant an AppContainer no access (their DACLs name no package SID)"
	case tok.Integrity < IntegrityMedium:
		return true, fmt.Sprintf("integrity level %s, below medium: the mandatory policy (no-write-up) refuses "+
			"PROCESS_CREATE_PROCESS on the user's processes of medium integrity and above "+
			"(processes of the user at the same level or below stay open to it)", integrityName(tok.Integrity))
	case len(tok.RestrictingSIDs) > 0:
		granted := slices.DeleteFunc(slices.Clone(tok.RestrictingSIDs), func(s string) bool {
			return !strings.EqualFold(s, tok.User) && s != sidSystem && s != sidAdministrators
		})
		if len(granted) > 0 {
			return false, fmt.Sprintf("this process's token is restricted, but its restricting SIDs include %s, "+
				"which a process's default DACL grants full access", strings.Join(granted, ", "))
		}
		return true, fmt.Sprintf("restricted token whose restricting SIDs (%s) do not include the user, SYSTEM or Administrators: "+
			"the second access check refuses PROCESS_CREATE_PROCESS on the user's processes "+
			"(unless one of them grants more than the default DACL)", strings.Join(tok.RestrictingSIDs, ", "))
	}
	return false, fmt.Sprintf("this process's token has integrity level %s, is not restricted and is not an AppContainer token",
		integrityName(tok.Integrity))
}

// parentNote describes the parent control for a result's error text.
func parentNote(parent ParentTry) string {
	switch parent.Outcome {
	case ParentOpened:
		return fmt.Sprintf("OpenProcess(parent process %d, PROCESS_CREATE_PROCESS) succeeded", parent.PID)
	case ParentDenied:
		return fmt.Sprintf("OpenProcess(parent process %d, PROCESS_CREATE_PROCESS) was denied: %s", parent.PID, parent.Err)
	case ParentOtherError:
		return fmt.Sprintf("OpenProcess(parent process %d, PROCESS_CREATE_PROCESS) failed: %s", parent.PID, parent.Err)
	}
	return "the parent process has exited or there is none, so it was not tried"
}

// integrityName names an integrity level RID.
func integrityName(rid uint32) string {
	switch rid {
	case IntegrityUntrusted:
		return "untrusted"
	case IntegrityLow:
		return "low"
	case IntegrityMedium:
		return "medium"
	case IntegrityMedium + 0x100:
		return "medium plus"
	case IntegrityHigh:
		return "high"
	case IntegritySystem:
		return "system"
	}
	return fmt.Sprintf("%#x", rid)
}
