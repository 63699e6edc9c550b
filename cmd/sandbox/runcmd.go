package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/openparallax/sandbox"
	"github.com/openparallax/sandbox/internal/linux"
	"github.com/openparallax/sandbox/internal/pty"
	"github.com/openparallax/sandbox/internal/spec"
)

// maxRunOutput is how much of each output stream `sandbox run` keeps.
const maxRunOutput = 64 << 20

// runCmd runs CMD confined, or the request of --request, and exits with
// its exit code. The environment is the Config's Env: PATH alone plus
// --env entries, unless --keep-env passes the caller's (or the request's
// env); Run adds the run's private TMPDIR and, without a HOME, one inside
// it. --go-cache DIR adds a write grant and GOCACHE (gocache.go).
//
// Before the program starts, what was asked for and is not in force is
// said on stderr, one line each, and a mount that cannot be made is
// refused (warnings.go); --strict leaves the refusal to Run.
//
// Output streams as the program writes it, stdout and stderr each to its
// own. With --tty (the default when stdin and stdout are both terminals)
// the program gets a pseudo-terminal this command owns, never the caller's
// terminal; the caller's terminal is put in raw mode meanwhile and
// restored. SIGINT, SIGTERM and SIGHUP end the program and every process
// it started, and the command then exits 128+N.
func runCmd(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := newFlagSet("run", stderr)
	var a runArgs
	inTerm, outTerm := isTerminal(stdin), isTerminal(stdout)
	a.register(fs, runtime.GOOS == "linux" && inTerm && outTerm)
	explainFlag, tty := &a.explain, &a.tty
	if code, ok := parse(fs, args, stdout, stderr); !ok {
		return code
	}
	req, err := a.runRequest(fs, stdin)
	if err != nil {
		return usageError(stderr, "run", "%v", err)
	}
	cfg, name := req.Config, req.Command[0]
	if err := a.pf.applyGoCache(&cfg); err != nil {
		return usageError(stderr, "run", "%v", err)
	}
	check, code, ok := preflight(cfg, *tty, stderr)
	if !ok {
		return code
	}
	// CMD is found in the program's PATH (Config.Env's), as env(1) finds
	// it: Run looks name up in this process's PATH (its documented
	// lookup), so this process takes the program's. Nothing else here
	// looks a name up.
	progPATH, hasPATH := envPATH(cfg.Env)
	if hasPATH {
		os.Setenv("PATH", progPATH)
	}
	maxOutput := maxRunOutput
	if req.MaxOutput > 0 {
		maxOutput = req.MaxOutput
	}

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	if check != nil {
		ctx = spec.WithPlanCheck(ctx, check)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	var got atomic.Value
	go func() {
		if s, ok := <-sigs; ok {
			got.Store(s)
			stop()
		}
	}()

	opts := sandbox.RunOptions{
		Dir: req.Dir, Stdin: stdin, Timeout: req.Timeout, MaxOutput: maxOutput,
		Stdout: stdout, Stderr: stderr, TTY: *tty,
	}
	if *tty {
		if f, ok := stdin.(*os.File); ok && inTerm {
			restore, resize, err := callerTerminal(f)
			if err != nil {
				fmt.Fprintf(stderr, "sandbox run: --tty: %v\n", err)
				return exitRunFailed
			}
			defer restore()
			opts.Resize = resize
		}
	}
	res, err := sandbox.Run(ctx, cfg, name, req.Command[1:], opts)
	switch {
	case res.LimitExceeded == "":
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled):
		// The timeout or a signal ended it (said below); the limit was
		// reached before, and is likely why it had not finished.
		fmt.Fprintf(stderr, "sandbox run: %s reached a resource limit before it was stopped: %s\n", name, res.LimitExceeded)
	default:
		fmt.Fprintf(stderr, "sandbox run: %s ended by a resource limit: %s\n", name, res.LimitExceeded)
	}
	for _, g := range res.GitCreated {
		fmt.Fprintf(stderr, "sandbox run: %s created %s: its hooks and config are what the program wrote, and git runs them outside the sandbox the next time anyone works in %s (a shell prompt showing git status is enough): look at them (for a .git file, in the directory it names) before running git there\n",
			name, g, strings.TrimSuffix(g, "/.git"))
	}
	for _, f := range res.Findings {
		fmt.Fprintf(stderr, "sandbox run: %s: %s: %s\n", f.Kind, f.Path, f.Detail)
	}
	for _, r := range res.Removed {
		fmt.Fprintf(stderr, "sandbox run: removed %s, which %s created: %s\n", r, name, linux.CreatedGitEntryRisk(filepath.Base(r)))
	}
	if res.StdoutTruncated || res.StderrTruncated {
		fmt.Fprintf(stderr, "sandbox run: only the first %d bytes per stream were kept for --explain\n", maxOutput)
	}
	if *explainFlag {
		home, _ := os.UserHomeDir()
		cwd := req.Dir
		if cwd == "" {
			cwd, _ = os.Getwd()
		}
		defer func() {
			for _, d := range res.DeniedRequests {
				fmt.Fprintln(stderr, deniedLine(d))
			}
			for _, h := range explain(res, err, hintContext{cfg: cfg, home: home, cwd: cwd, env: envEntries(cfg.Env)}) {
				fmt.Fprintln(stderr, "sandbox: hint: "+h)
			}
		}()
	}
	if s, ok := got.Load().(os.Signal); ok && errors.Is(err, context.Canceled) {
		n := int(s.(syscall.Signal))
		fmt.Fprintf(stderr, "sandbox run: %s: stopped %s and every process it started\n", s, name)
		return 128 + n
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		fmt.Fprintf(stderr, "sandbox run: %s killed after --timeout %v\n", name, req.Timeout)
		return exitCode(res)
	case errors.Is(err, errRefused):
		return exitRunFailed // said by the check
	case errors.Is(err, sandbox.ErrNotEnforced):
		fmt.Fprintf(stderr, "sandbox run: --strict: %v\n", err)
		return exitRunFailed
	case errors.Is(err, exec.ErrNotFound) && hasPATH:
		fmt.Fprintf(stderr, "sandbox run: %v (the program's PATH is %q: set it with --env PATH=...)\n", err, progPATH)
		return 127
	case errors.Is(err, exec.ErrNotFound), errors.Is(err, os.ErrNotExist):
		fmt.Fprintf(stderr, "sandbox run: %v\n", err)
		return 127
	case err != nil:
		fmt.Fprintf(stderr, "sandbox run: %v\n", err)
		if errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM) {
			return exitCannotExec
		}
		return exitRunFailed
	}
	return exitCode(res)
}

// runArgs are run's flags: the Config's, the program's, and run's own.
type runArgs struct {
	cf           configFlags
	pf           progFlags
	timeout      time.Duration
	explain, tty bool
	request      string
}

func (a *runArgs) register(fs *flag.FlagSet, ttyDefault bool) {
	a.cf.register(fs)
	a.pf.register(fs)
	fs.Func("timeout", "kill the program and its processes after `D` (e.g. 30s, 5m, 1h30m)", durationFlag(&a.timeout, false))
	fs.BoolVar(&a.explain, "explain", false, "on a denial, print hints naming the narrowest flag that would allow it")
	fs.StringVar(&a.request, "request", "", "run the request in `FILE` (- for stdin, which the program then finds empty): a JSON RunRequest (sandbox schema --request) with the Config, its env, the command, dir and timeout; it is the whole request, so only --tty and --explain go with it")
	fs.BoolVar(&a.tty, "tty", ttyDefault, "give the program a pseudo-terminal (Linux: the default when stdin and stdout are terminals; macOS: only when asked); stdout and stderr are then one stream")
}

// isTerminal reports whether r is a terminal.
func isTerminal(r any) bool {
	f, ok := r.(*os.File)
	return ok && pty.IsTerminal(f)
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

// deniedLine is --explain's line for a request the egress proxy refused.
// Host and Detail come from the confined program; the proxy already
// replaced their control characters.
func deniedLine(d sandbox.DeniedRequest) string {
	dest := net.JoinHostPort(d.Host, strconv.Itoa(int(d.Port)))
	if d.Host == "" {
		dest = "(unreadable request)"
	}
	proto := d.Protocol
	if proto == "" {
		proto = "?"
	}
	line := "sandbox: network: refused " + proto + " " + dest + " (" + d.Reason + ")"
	if d.Detail != "" {
		line += ": " + d.Detail
	}
	return line
}
