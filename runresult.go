package sandbox

import (
	"encoding/json"
	"io"
	"time"
)

// What Run takes besides the Config (RunOptions) and what it returns
// (RunResult, with the CommandReport it embeds).

// RunOptions configure [Run]. The zero value runs the program with an empty
// environment, standard input from /dev/null (NUL on Windows), in the
// caller's working directory, with no time limit beyond the context, and
// keeps at most DefaultMaxOutput bytes of each output stream.
type RunOptions struct {
	// Dir is the working directory; "" is the caller's. The sandbox must
	// grant access to it for the program to use it.
	Dir string

	// Env is the program's environment, "KEY=value" entries, to which Run
	// adds only its temporary directory (TMPDIR, TMP, TEMP, GOTMPDIR) and,
	// when Env has none, HOME: see Run. Nothing is inherited from the
	// caller: nil means no PATH, for instance. A non-nil Config.Env takes
	// its place (setting both is an error).
	Env []string

	// Stdin is the program's standard input; nil reads from the null
	// device. An *os.File that is a regular file or a pipe is passed to
	// the program as it is (not with Config.Strict: see below); any other reader, and any other file (a
	// terminal or a console above all: the caller's terminal is never
	// handed to the program), is copied through a pipe, and Run does not
	// wait for a Read on it that is still blocked when the program ends.
	// With Config.Strict every *os.File is copied through a pipe as well:
	// a descriptor of a host file would let the program change the
	// file's mode, times and extended attributes (fchmod, futimens,
	// fsetxattr), which the mount layer's read-only view does not reach.
	Stdin io.Reader

	// Stdout and Stderr, when set, receive the program's standard output
	// and standard error as they are written, in full, each from its own
	// pipe (so the two stay apart). The result keeps its first MaxOutput
	// bytes of each as well. Run does not return before the last write;
	// a writer that returns an error receives nothing more, and the
	// output is still kept and drained.
	Stdout, Stderr io.Writer

	// TTY gives the program a pseudo-terminal that Run owns, as its
	// standard input, output and error and its controlling terminal:
	// for programs that behave differently on a terminal (REPLs, progress
	// bars, colour). Terminal output has one stream, so everything the
	// program writes goes to Stdout and RunResult.Stdout; Stderr stays
	// empty. Stdin is copied to the terminal. Linux only for now: elsewhere
	// Run returns an error. Whatever the program does to this terminal
	// (modes, window size, hang-up) stays with it: the caller's terminal
	// is not the program's.
	TTY bool

	// Resize, with TTY, delivers window sizes for the program's terminal:
	// send the caller's size before or at the start, and again on each
	// SIGWINCH. nil leaves the kernel's default (0x0).
	Resize <-chan WindowSize

	// Timeout, when positive, kills the program and all its processes
	// that long after it started; the error then wraps
	// context.DeadlineExceeded.
	Timeout time.Duration

	// MaxOutput is how many bytes of standard output, and separately of
	// standard error, are kept; the rest is read and discarded, so a
	// program that writes without end neither blocks nor exhausts memory,
	// and the result says so (StdoutTruncated, StderrTruncated). 0 means
	// DefaultMaxOutput; negative is an error.
	MaxOutput int
}

// WindowSize is a terminal's size in character cells.
type WindowSize struct{ Rows, Cols uint16 }

// RunResult is what [Run] reports about one program.
type RunResult struct {
	// ExitCode is the program's exit status, or -1 when it did not exit
	// on its own (killed by a signal, on timeout or cancellation) or never
	// started.
	ExitCode int
	// Stdout and Stderr are the first MaxOutput bytes the program (and its
	// children) wrote to each stream.
	Stdout, Stderr []byte
	// StdoutTruncated and StderrTruncated report that more was written
	// than was kept.
	StdoutTruncated, StderrTruncated bool
	// State says how the program ended as os.ProcessState.String does,
	// e.g. "exit status 1" or "signal: killed"; "" if it never started.
	State string
	// Duration is the time from start to exit.
	Duration time.Duration
	// CommandReport is what Run found and did once the program's whole
	// tree was gone, as [FinishCommand] reports it for a command
	// WrapCommand prepared: LimitExceeded, DeniedRequests, Removed,
	// GitCreated and Findings, promoted (res.LimitExceeded works). Under
	// Run, LimitExceeded has one more case: when Run's deadline or
	// cancellation ended the program (Run's error wraps the context's), a
	// limit the tree's cgroup counted before that is still named: the
	// deadline is what ended the program, and the limit is likely why it
	// had not finished (a program that retries forks refused at
	// Processes, or waits for a worker the out-of-memory killer ended). A
	// caller tells the two apart by the error.
	//
	// In JSON the report's fields stand beside ExitCode under their Go
	// names, as they did before RunResult embedded it (see MarshalJSON).
	CommandReport
}

// runResultJSON is RunResult as JSON writes it: every field under its Go
// name, the report's fields at the top level.
type runResultJSON struct {
	ExitCode                         int
	Stdout, Stderr                   []byte
	StdoutTruncated, StderrTruncated bool
	State                            string
	Duration                         time.Duration
	LimitExceeded                    string
	DeniedRequests                   []DeniedRequest
	Removed, GitCreated              []string
	Findings                         []Finding
}

// MarshalJSON writes r with the field names it has always had: ExitCode,
// …, LimitExceeded, DeniedRequests, Removed, GitCreated, Findings at the
// top level (the embedded CommandReport's own tags are not used here).
func (r RunResult) MarshalJSON() ([]byte, error) {
	return json.Marshal(runResultJSON{
		ExitCode: r.ExitCode, Stdout: r.Stdout, Stderr: r.Stderr,
		StdoutTruncated: r.StdoutTruncated, StderrTruncated: r.StderrTruncated,
		State: r.State, Duration: r.Duration, LimitExceeded: r.LimitExceeded,
		DeniedRequests: r.DeniedRequests, Removed: r.Removed, GitCreated: r.GitCreated, Findings: r.Findings,
	})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *RunResult) UnmarshalJSON(b []byte) error {
	var j runResultJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*r = RunResult{
		ExitCode: j.ExitCode, Stdout: j.Stdout, Stderr: j.Stderr,
		StdoutTruncated: j.StdoutTruncated, StderrTruncated: j.StderrTruncated,
		State: j.State, Duration: j.Duration,
		CommandReport: CommandReport{LimitExceeded: j.LimitExceeded, DeniedRequests: j.DeniedRequests,
			Removed: j.Removed, GitCreated: j.GitCreated, Findings: j.Findings},
	}
	return nil
}
