// Command sandbox is what an operator and a newcomer touch first: it says
// what this machine's sandbox can enforce, runs programs confined, verifies a
// Config with the canary, and shows what a Config becomes.
//
//	sandbox doctor [--json] [--entry wrap|applyself]
//	sandbox run [config flags] [--env K=V]... [--keep-env] [--cwd DIR] [--tty] [--timeout D] [--explain] -- CMD [ARGS...]
//	sandbox run --request FILE|- [--tty] [--explain]
//	sandbox verify [config flags] [--workspace DIR] [--json]
//	sandbox plan [config flags] [--platform OS] [--entry wrap|applyself] [--json | --describe [--timeout D]]
//	sandbox run --endowments FILE|- [--cwd DIR] [--timeout D] -- CMD [ARGS...]
//	sandbox plan --endowments FILE|- [--json]
//	sandbox schema [--request]
//	sandbox --version
//
// run, verify and plan take the same config flags, each setting a field
// of the Config (sandbox --help lists them, grouped), and the program's
// --env, --keep-env and --cwd (plan and verify check them only). --env and
// --keep-env make the Config's Env, the program's whole environment (PATH
// alone unless --keep-env, then the --env entries). run looks CMD up in
// the program's PATH, as env(1) does.
//
// run --request takes the whole request as one JSON document (a
// sandbox.RunRequest: the Config with its env, the command, dir, timeout,
// max_output; sandbox schema --request prints its JSON Schema), from a
// file or stdin. Every flag that would change it is refused with it; only
// --tty and --explain go with it. A request without an env runs with PATH
// alone, as run without --env does.
//
// plan and plan --describe speak of one entry point, --entry wrap
// (WrapCommand, Run and sandbox run: the default) or applyself; doctor
// shows both, each feature once per entry point, unless --entry is given.
// plan shows this machine's platform; --platform darwin or windows
// computes that platform's plan here, as data (darwin adds the Seatbelt
// profile). Durations are Go's: 5s,
// 2m, 1h30m. --version prints the module version the binary was built
// from, "(devel)" for a build from a source checkout.
//
// With --endowments, run and plan take seed 004's endowments descriptor
// (JSON, sandbox.Endowments) instead of config flags: run prints one JSON
// result on stdout, {exitCode, stdout, stderr, stdoutTruncated,
// stderrTruncated, maxOutput, timedOut, signal, error, durationMs, ...}
// (each stream kept up to 4 MiB; timeout 30s unless --timeout), and exits
// 0 whenever it could try to start the program (2: the descriptor or
// command refused, with the field and what to write); plan prints in
// plain sentences what such a program can and cannot do here, and what
// is not enforced (--json: {endowments, effective, notEnforced, describe,
// config, plan, ...}). The Endo plugin in examples/endo is built on them.
//
// It is built on the library's public API only.
//
// # Exit codes
//
//	0  success (run: CMD's own exit code)
//	2  usage error: a one-line message names the bad flag or value
//	3  degraded: the canary is verified but some capability is not enforced here
//	4  unavailable: no sandbox mechanism on this machine
//	5  not verified: the canary found the sandbox does not hold
//	125 run: CMD could not be run confined (126 when it could not be executed)
//
// # JSON
//
// --json output is stable: doctor prints {platform, status, features,
// canary}, verify prints the canary result as written to sandbox.status,
// plan prints {plan, entry, seatbelt: {profile, params, error}} (seatbelt
// with --platform darwin only); schema prints the JSON Schema of a Config
// (of a run request with --request). doctor's text is stable too: the
// temporary workspace, the canary's port, pids and random names are
// printed as <workspace>, <port>, <pid>, <random>. Field names follow
// the library's JSON tags.
package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
)

// Exit codes.
const (
	exitOK          = 0
	exitUsage       = 2
	exitDegraded    = 3
	exitUnavailable = 4
	exitNotVerified = 5
	exitRunFailed   = 125
	exitCannotExec  = 126
)

const usage = `usage:
  sandbox doctor [--json] [--entry wrap|applyself]
  sandbox run [config flags] [--env K=V]... [--keep-env] [--cwd DIR] [--tty] [--timeout D]
              [--explain] -- CMD [ARGS...]
  sandbox run --request FILE|- [--tty] [--explain]
  sandbox verify [config flags] [--workspace DIR] [--json]
  sandbox plan [config flags] [--platform OS] [--entry wrap|applyself]
               [--json | --describe [--timeout D]]
  sandbox run --endowments FILE|- [--cwd DIR] [--timeout D] -- CMD [ARGS...]
  sandbox plan --endowments FILE|- [--json]
  sandbox schema [--request]
  sandbox --version`

func main() {
	collectLess()
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// collectLess lets the heap grow to five times what is live before the
// garbage collector runs (GOGC=400), unless the caller set GOGC or
// GOMEMLIMIT. A run's set-up (the exec-directory scan, the policy, the
// plan) makes a few megabytes of short-lived garbage in a process that
// lives some 15 ms: the default (100) spent some 7% of a `sandbox run
// --exec /usr/bin` in a collection and its worker threads, for no
// smaller peak. What the command keeps can be larger (`run` keeps up to
// 64 MiB of each output stream for --explain): a soft limit of 256 MiB
// then paces the collector as the default would have (128 MiB live, the
// next collection at twice that), so the peak is no higher than GOGC=100's.
func collectLess() {
	if os.Getenv("GOGC") == "" && os.Getenv("GOMEMLIMIT") == "" {
		debug.SetGCPercent(400)
		debug.SetMemoryLimit(256 << 20)
	}
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "sandbox: missing command (doctor, run, verify, plan, schema)")
		return exitUsage
	}
	switch args[0] {
	case "doctor":
		return doctor(args[1:], stdout, stderr)
	case "run":
		if usesEndowments(args[1:]) {
			return runEndowments(args[1:], stdin, stdout, stderr)
		}
		return runCmd(args[1:], stdin, stdout, stderr)
	case "verify":
		return verify(args[1:], stdout, stderr)
	case "plan":
		if usesEndowments(args[1:]) {
			return planEndowments(args[1:], stdin, stdout, stderr)
		}
		return plan(args[1:], stdout, stderr)
	case "schema":
		return schema(args[1:], stdout, stderr)
	case canaryChild:
		return canaryChildMain(args[1:], stdout, stderr)
	case "-h", "--help", "help":
		help(stdout)
		return exitOK
	case "--version", "-version", "version":
		fmt.Fprintln(stdout, version())
		return exitOK
	default:
		fmt.Fprintf(stderr, "sandbox: unknown command %q (want doctor, run, verify, plan or schema)\n", args[0])
		return exitUsage
	}
}
