package main

// run and plan with --endowments: seed 004's descriptor (see
// sandbox.Endowments) instead of config flags, for the Endo plugin in
// examples/endo and any other caller that speaks JSON.
//
//	sandbox run --endowments FILE|- [--cwd DIR] [--timeout D] -- CMD [ARGS...]
//	sandbox plan --endowments FILE|- [--json]
//
// run prints one JSON object on stdout (endowmentsResult) and exits 0
// whenever the program was started, whatever its own exit code; 2 when
// the descriptor or the command is refused (one line on stderr, written
// for whoever wrote the descriptor); 125 when it could not be run
// confined (no sandbox here, a refusal at spawn). The program's standard
// input is the null device.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/openparallax/sandbox"
)

// maxEndowments bounds the descriptor read from a file or stdin.
const maxEndowments = 1 << 20

// endowmentsMaxOutput is how many bytes of each of the program's streams
// the result keeps (sandbox.DefaultMaxOutput); the rest is read and
// dropped, and stdoutTruncated or stderrTruncated says so.
const endowmentsMaxOutput = sandbox.DefaultMaxOutput

// usesEndowments reports whether args, before "--", hold --endowments:
// run and plan then take the descriptor and none of the config flags.
func usesEndowments(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if strings.HasPrefix(a, "-") && name == "endowments" {
			return true
		}
	}
	return false
}

// endowmentsResult is `sandbox run --endowments`'s JSON on stdout.
type endowmentsResult struct {
	// ExitCode is the program's exit status; -1 when it did not exit on
	// its own (killed on timeout, or by a signal); 127 when it was not
	// found, 126 when it could not be executed (Error says why).
	ExitCode int `json:"exitCode"`
	// Stdout and Stderr are the first maxOutput bytes of each stream,
	// as UTF-8 (bytes that are not UTF-8 become U+FFFD; stdoutBinary or
	// stderrBinary is then true).
	Stdout          string `json:"stdout"`
	Stderr          string `json:"stderr"`
	StdoutTruncated bool   `json:"stdoutTruncated"`
	StderrTruncated bool   `json:"stderrTruncated"`
	StdoutBinary    bool   `json:"stdoutBinary,omitempty"`
	StderrBinary    bool   `json:"stderrBinary,omitempty"`
	MaxOutput       int    `json:"maxOutput"`
	// TimedOut: the timeout killed the program and every process it
	// started.
	TimedOut bool `json:"timedOut"`
	// Signal names the signal that ended the program, if one did.
	Signal     string `json:"signal,omitempty"`
	Error      string `json:"error,omitempty"`
	DurationMs int64  `json:"durationMs"`
	// LimitExceeded, DeniedRequests and Findings are Run's report (see
	// sandbox.CommandReport).
	LimitExceeded  string                  `json:"limitExceeded,omitempty"`
	DeniedRequests []sandbox.DeniedRequest `json:"deniedRequests,omitempty"`
	Findings       []sandbox.Finding       `json:"findings,omitempty"`
}

// runEndowments is `sandbox run --endowments`.
func runEndowments(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("run", stderr)
	var file, cwd string
	var timeout time.Duration
	fs.StringVar(&file, "endowments", "", "read seed 004's endowments descriptor from `FILE` (- for stdin)")
	fs.StringVar(&cwd, "cwd", "", "run the program in `DIR` (absolute; the descriptor must grant it)")
	fs.Func("timeout", "kill the program and its processes after `D` (default 30s)", durationFlag(&timeout, true))
	if code, ok := parse(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() == 0 {
		return usageError(stderr, "run", "missing CMD (write it after --)")
	}
	e, err := readEndowments(file, stdin)
	if err != nil {
		return usageError(stderr, "run", "%v", err)
	}
	req, err := e.Request(fs.Args(), cwd, timeout)
	if err != nil {
		return usageError(stderr, "run", "%v", err)
	}
	// A grant this machine cannot make (mountAt, a device) is refused
	// here as by plan, not run without it.
	p, err := sandbox.PlanFor(req.Config)
	if err != nil {
		return usageError(stderr, "run", "endowments: %v", err)
	}
	if _, _, err := e.Effective(p); err != nil {
		return usageError(stderr, "run", "%v", err)
	}
	opts := req.Options()
	opts.MaxOutput = endowmentsMaxOutput
	res, err := sandbox.Run(context.Background(), req.Config, req.Command[0], req.Command[1:], opts)
	out := endowmentsResult{
		ExitCode: res.ExitCode, StdoutTruncated: res.StdoutTruncated, StderrTruncated: res.StderrTruncated,
		MaxOutput: endowmentsMaxOutput, DurationMs: res.Duration.Milliseconds(),
		LimitExceeded: res.LimitExceeded, DeniedRequests: res.DeniedRequests, Findings: res.Findings,
	}
	out.Stdout, out.StdoutBinary = text(res.Stdout)
	out.Stderr, out.StderrBinary = text(res.Stderr)
	if sig, ok := strings.CutPrefix(res.State, "signal: "); ok {
		out.Signal = sig
	}
	switch {
	case err == nil:
	case errors.Is(err, context.DeadlineExceeded):
		out.TimedOut = true
		out.Error = fmt.Sprintf("killed, with every process it started, after the timeout of %v", req.Timeout)
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, os.ErrNotExist):
		out.ExitCode, out.Error = 127, err.Error()
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EPERM):
		out.ExitCode, out.Error = 126, err.Error()
	default:
		fmt.Fprintf(stderr, "sandbox run: %v\n", err)
		return exitRunFailed
	}
	printJSON(stdout, out)
	return exitOK
}

// text is b as a JSON string's content, and whether b was not UTF-8.
func text(b []byte) (string, bool) {
	if utf8.Valid(b) {
		return string(b), false
	}
	return strings.ToValidUTF8(string(b), "\uFFFD"), true
}

// endowmentsPlan is `sandbox plan --endowments --json`'s output: what the
// plugin's describe() and help() are made of.
type endowmentsPlan struct {
	// Endowments is the descriptor as checked (paths cleaned, version
	// set).
	Endowments sandbox.Endowments `json:"endowments"`
	// Effective is what the program really gets here (see
	// sandbox.Endowments.Effective), NotEnforced the reasons.
	Effective   sandbox.Endowments    `json:"effective"`
	NotEnforced []sandbox.Enforcement `json:"notEnforced"`
	// Describe is the plan in plain sentences (sandbox.Plan.Describe) for
	// a program run with sandbox run (ApplySelf's entries left out), with
	// the default timeout.
	Describe string `json:"describe"`
	// DefaultTimeoutMs and MaxOutput are run's defaults and bound.
	DefaultTimeoutMs int64 `json:"defaultTimeoutMs"`
	MaxOutput        int   `json:"maxOutput"`
	// Config and Plan are the Config the descriptor maps to and its plan.
	Config sandbox.Config `json:"config"`
	Plan   sandbox.Plan   `json:"plan"`
}

// planEndowments is `sandbox plan --endowments`: the effective
// endowments and the plan in plain sentences, or all of it as JSON.
func planEndowments(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("plan", stderr)
	var file string
	var asJSON bool
	fs.StringVar(&file, "endowments", "", "read seed 004's endowments descriptor from `FILE` (- for stdin)")
	fs.BoolVar(&asJSON, "json", false, "print the descriptor, the effective endowments, what is not enforced, the description, the Config and the plan as JSON")
	if code, ok := parse(fs, args, stdout, stderr); !ok {
		return code
	}
	if fs.NArg() > 0 {
		return usageError(stderr, "plan", "unexpected argument %q", fs.Arg(0))
	}
	e, err := readEndowments(file, stdin)
	if err != nil {
		return usageError(stderr, "plan", "%v", err)
	}
	cfg := e.Config()
	p, err := sandbox.PlanFor(cfg)
	if err != nil {
		return usageError(stderr, "plan", "endowments: %v", err)
	}
	eff, dropped, err := e.Effective(p)
	if err != nil {
		return usageError(stderr, "plan", "%v", err)
	}
	// The description is of a program run with sandbox run: ApplySelf's
	// entries (where they differ from Run's) are not about it.
	forRun := p
	forRun.Features = slices.DeleteFunc(slices.Clone(p.Features), func(f sandbox.Enforcement) bool { return f.Scope == sandbox.ScopeApplySelf })
	forRun.TimeLimit = sandbox.DefaultEndowmentsTimeout
	rep := endowmentsPlan{Endowments: e, Effective: eff, NotEnforced: slices.Clip(dropped), Describe: forRun.Describe(),
		DefaultTimeoutMs: sandbox.DefaultEndowmentsTimeout.Milliseconds(), MaxOutput: endowmentsMaxOutput, Config: cfg, Plan: p}
	if rep.NotEnforced == nil {
		rep.NotEnforced = []sandbox.Enforcement{}
	}
	if asJSON {
		printJSON(stdout, rep)
		return exitOK
	}
	fmt.Fprint(stdout, rep.Describe)
	return exitOK
}

// readEndowments reads and checks the descriptor from file, or stdin for
// "-".
func readEndowments(file string, stdin io.Reader) (sandbox.Endowments, error) {
	var r io.Reader
	switch file {
	case "":
		return sandbox.Endowments{}, errors.New("--endowments: want FILE, or - for stdin")
	case "-":
		r = stdin
	default:
		f, err := os.Open(file)
		if err != nil {
			return sandbox.Endowments{}, fmt.Errorf("--endowments: %v", err)
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, maxEndowments+1))
	switch {
	case err != nil:
		return sandbox.Endowments{}, fmt.Errorf("--endowments: %v", err)
	case len(b) > maxEndowments:
		return sandbox.Endowments{}, fmt.Errorf("--endowments: larger than %d bytes", maxEndowments)
	}
	return sandbox.ParseEndowments(bytes.TrimSpace(b))
}
