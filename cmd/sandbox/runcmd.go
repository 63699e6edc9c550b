package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"

	"github.com/openparallax/sandbox"
)

// maxRunOutput is how much of each output stream `sandbox run` keeps.
const maxRunOutput = 64 << 20

// runCmd runs CMD confined and exits with its exit code. The environment
// is PATH alone plus --env entries, unless --keep-env passes the caller's.
func runCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("run", stderr)
	var cf configFlags
	cf.register(fs)
	var env []string
	multi(fs, &env, "env", "set `K=V` in the program's environment (repeatable)")
	keepEnv := fs.Bool("keep-env", false, "pass this environment to the program (default: PATH only)")
	timeout := fs.Duration("timeout", 0, "kill the program and its processes after `D` (e.g. 30s)")
	explain := fs.Bool("explain", false, "on a denial, print a hint naming the flag that would allow it")
	if !parse(fs, args, stderr) {
		return exitUsage
	}
	if fs.NArg() == 0 {
		return usageError(stderr, "run", "missing CMD (write it after --)")
	}
	for _, kv := range env {
		if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
			return usageError(stderr, "run", "--env %q: want K=V", kv)
		}
	}
	if *timeout < 0 {
		return usageError(stderr, "run", "--timeout %v: must not be negative", *timeout)
	}
	cfg, err := cf.config()
	if err != nil {
		return usageError(stderr, "run", "%v", err)
	}
	progEnv := []string{"PATH=" + os.Getenv("PATH")}
	if *keepEnv {
		progEnv = os.Environ()
	}
	progEnv = append(progEnv, env...)

	res, err := sandbox.Run(context.Background(), cfg, fs.Arg(0), fs.Args()[1:], sandbox.RunOptions{
		Env: progEnv, Stdin: stdin, Timeout: *timeout, MaxOutput: maxRunOutput,
	})
	stdout.Write(res.Stdout)
	stderr.Write(res.Stderr)
	if res.StdoutTruncated || res.StderrTruncated {
		fmt.Fprintf(stderr, "sandbox run: output truncated to %d bytes per stream\n", maxRunOutput)
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		fmt.Fprintf(stderr, "sandbox run: %s killed after --timeout %v\n", fs.Arg(0), *timeout)
		return exitCode(res)
	case errors.Is(err, sandbox.ErrNotEnforced):
		fmt.Fprintf(stderr, "sandbox run: --strict: %v\n", err)
		return exitRunFailed
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, os.ErrNotExist):
		fmt.Fprintf(stderr, "sandbox run: %v\n", err)
		return 127
	case err != nil:
		fmt.Fprintf(stderr, "sandbox run: %v\n", err)
		if *explain {
			explainDenial(stderr, res, err)
		}
		if errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM) {
			return exitCannotExec
		}
		return exitRunFailed
	}
	if *explain && res.ExitCode != 0 {
		explainDenial(stderr, res, nil)
	}
	return exitCode(res)
}

// exitCode is the program's exit code, or 128+N when signal N ended it.
func exitCode(res sandbox.RunResult) int {
	if res.ExitCode >= 0 {
		return res.ExitCode
	}
	for n := 1; n < 65; n++ {
		if res.State == "signal: "+syscall.Signal(n).String() {
			return 128 + n
		}
	}
	return exitRunFailed
}

var absPath = regexp.MustCompile(`(/[^\s:'"]+)`)

// explainDenial prints one hint line when the failure looks like a
// sandbox denial: EACCES/EPERM text, or SIGSYS.
func explainDenial(w io.Writer, res sandbox.RunResult, runErr error) {
	text := string(res.Stderr)
	if runErr != nil {
		text += "\n" + runErr.Error()
	}
	var line string
	for l := range strings.SplitSeq(text, "\n") {
		low := strings.ToLower(l)
		if strings.Contains(low, "permission denied") || strings.Contains(low, "operation not permitted") ||
			strings.Contains(low, "eacces") || strings.Contains(low, "eperm") {
			line = l
			break
		}
	}
	low := strings.ToLower(line)
	switch {
	case strings.Contains(res.State, "bad system call"):
		fmt.Fprintln(w, "sandbox: hint: the program was killed by SIGSYS: a syscall the sandbox filters; --allow-spawn if it creates processes")
	case line == "":
		return
	case strings.Contains(low, "connect") || strings.Contains(low, "dial") || strings.Contains(low, "socket"):
		fmt.Fprintln(w, "sandbox: hint: network access is denied: --connect HOST:PORT grants a TCP destination")
	case strings.Contains(low, "fork") || strings.Contains(low, "spawn") || strings.Contains(low, "clone"):
		fmt.Fprintln(w, "sandbox: hint: creating processes is denied: --allow-spawn (with --exec PATH for each program) grants it")
	case strings.Contains(low, "exec"):
		if m := absPath.FindString(line); m != "" {
			fmt.Fprintf(w, "sandbox: hint: executing %s is denied: --exec %s grants it\n", m, m)
			return
		}
		fmt.Fprintln(w, "sandbox: hint: executing a program is denied: --exec PATH grants it")
	default:
		if m := absPath.FindString(line); m != "" {
			fmt.Fprintf(w, "sandbox: hint: %s is outside the sandbox: --ro %s grants reading it, --rw %s writing\n", m, m, m)
			return
		}
		fmt.Fprintln(w, "sandbox: hint: a file outside the sandbox was denied: --ro PATH grants reading, --rw PATH writing")
	}
}
