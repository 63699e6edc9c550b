package winjob

// Options are the limits that vary between jobs. This file has no build
// tag, so that the Windows plan (internal/windows), which decides them, is
// built and tested on every OS.
type Options struct {
	// ActiveProcessLimit is the most processes the job may hold at once; 0
	// sets no limit. 1 denies creating processes to the one process put in
	// the job.
	ActiveProcessLimit uint32
	// NoUIRestrictions leaves out [UIRestrictions]. It must be set when the
	// process to be put in the job is in a job already (see [InJob]):
	// Windows refuses to put a process that is in a job into a job with UI
	// restrictions (a nested job may not have them), so the assignment
	// would fail. Wine 8.0 does not refuse.
	NoUIRestrictions bool
}
