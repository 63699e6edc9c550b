package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/openparallax/sandbox/internal/pty"
	"github.com/openparallax/sandbox/internal/runtemp"
	"github.com/openparallax/sandbox/internal/spec"
)

// DefaultMaxOutput is how many bytes of each output stream Run keeps when
// RunOptions.MaxOutput is 0.
const DefaultMaxOutput = 4 << 20

// drainTimeout bounds how long Run keeps reading output after every
// process it could kill is gone (a descriptor passed to a process outside
// the sandbox could otherwise keep a pipe open for ever).
const drainTimeout = 2 * time.Second

// Run runs the program name with args, confined to cfg from its first
// instruction (through [Sandbox.WrapCommand] of this platform), waits for it
// and returns its exit code and output. It is meant for untrusted native
// programs: compilers, linters, scripts.
//
// name is looked up as exec.Command looks it up, in the caller's PATH (the
// program's own environment is RunOptions.Env); the program found is added
// to the exec allowlist, with its interpreter. A non-zero exit code is not
// an error: err reports only that the program could not be run as asked
// (bad Config or options, no sandbox mechanism, the program missing or not
// startable under the sandbox, each with the reason) or was stopped by
// ctx or RunOptions.Timeout (the error wraps ctx.Err(); the result holds
// the output so far). On error the result's ExitCode is -1 unless the
// program exited on its own.
//
// # Temporary directory and home
//
// Every run gets a fresh private directory, created in the caller's
// temporary directory (os.TempDir) with mode 0700, granted read-write for
// the run and removed with everything in it once every process of the run
// is gone. TMPDIR, TMP, TEMP and GOTMPDIR name a directory inside it
// (replacing any in RunOptions.Env: those name directories the sandbox
// does not grant); HOME names another one inside it unless RunOptions.Env
// sets HOME. That home holds Go's telemetry mode, off
// (.config/go/telemetry/mode; on macOS under Library/Application
// Support): every go command would otherwise try to start its telemetry
// child in a new session, which the sandbox refuses, and say so on
// stderr. A HOME the caller passes is left as it is. Nothing of a run's temporary files is shared with the host or
// with other runs. On Linux the directory is named for the caller
// (PID namespace, PID, start time), so that one a killed caller left is
// removed by the first Run of a later process, or by a Run within a
// minute in a process that keeps running. With Config.AllowExecWritePaths
// it is executable too
// (`go run` and `go test` build and run there). POSIX shared memory
// (/dev/shm) is not part of it: see Config.AllowSharedMemory. (On macOS
// GIT_CONFIG_GLOBAL also names a file inside it, and GIT_CONFIG_NOSYSTEM
// is 1, unless RunOptions.Env sets them.)
//
// # Processes
//
// Whatever ends the program, Run returns only after every process it
// started is gone; with AllowProcessSpawn that includes children that
// outlive the program:
//
//   - Linux: the program starts in a new session (always: setsid: its
//     controlling terminal is none, or with TTY the pseudo-terminal Run
//     owns, never the caller's), with Pdeathsig SIGKILL from an OS thread
//     locked for the whole run, so it dies if the caller dies (Pdeathsig
//     fires when the creating thread exits). With AllowProcessSpawn and
//     without TTY, where namespaces are available (root, or user
//     namespaces), it starts as PID 1 of a PID namespace of its own (with
//     the mount layer's mount and IPC namespaces, so System V IPC is a
//     private namespace's; for a caller that is not root, inside a user
//     namespace mapping only its own uid and gid, where other users' files
//     show as owned by the overflow ID, 65534): when it dies, however it
//     dies, also with a killed caller, the kernel kills every other
//     process of the namespace, and nothing can leave the namespace
//     (seccomp refuses setns and unshare). Inside, getpid() is 1; the program reaps the orphans of
//     its tree (until it does they are zombies, which count against
//     Limits.Processes); and signals without a handler are ignored, as for
//     any PID 1, whether its own tree sends them or another process; only
//     SIGKILL and SIGSTOP from outside always apply. (That is why TTY
//     runs get no PID namespace: ^C, ^Z and ^\ from the terminal would do
//     nothing to a program that does not handle them.) /proc is
//     still the host's (so /proc/self works, and names the host's PID).
//     Where a cgroup can be managed (see [Limits]) the tree also gets a
//     cgroup of its own (with Config.Limits, or with AllowProcessSpawn
//     only for the kill where it gets no PID namespace, which already
//     kills it whole) that the child half joins before the target runs,
//     and Run kills the tree through it without a race: cgroup v2's
//     cgroup.kill, or the v1 freezer (frozen, killed, thawed, until
//     empty); it then removes the cgroup. With neither, Run kills every
//     process of the session: its seccomp filter refuses setsid(2), so no
//     descendant can leave it (freezing it first: see killSession in
//     internal/linux's session_linux.go, and the hole it leaves). Run reaps the program only
//     after the kill, so its ID cannot be reused in between.
//     A caller that is killed leaves: with a cgroup, nothing (its reaper,
//     see [Limits], kills what is left in it and removes it); with the
//     PID namespace, no process; with neither (TTY or no namespaces, and
//     no cgroup), the program's descendants (not killed by Pdeathsig,
//     which only the program has; with TTY, the hangup of the terminal
//     Run held reaches the processes of the program's session that do not
//     ignore it).
//   - Windows: the Job Object (KILL_ON_JOB_CLOSE) holds every process of
//     the job; Run calls PostStart, terminates the job and waits until it
//     holds no process, and the job dies with the caller. Processes
//     started outside the job by a same-user route (see PlanFor's
//     process_spawn) are not ended; Run stops reading their output after
//     the drain time.
//   - macOS: the program starts in a new session and Run kills its process
//     group. A descendant that moves itself to another process group
//     escapes that kill, and nothing kills the program if the caller dies:
//     macOS has no equivalent of Pdeathsig or of a job.
func Run(ctx context.Context, cfg Config, name string, args []string, opts RunOptions) (RunResult, error) {
	res := RunResult{ExitCode: -1}
	limit, err := outputLimit(opts)
	if err != nil {
		return res, err
	}
	if opts.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.Timeout)
		defer cancel()
	}
	if err := ctx.Err(); err != nil {
		return res, fmt.Errorf("sandbox: Run %s: %w", name, err)
	}

	if cfg.Env != nil {
		if opts.Env != nil {
			return res, &ConfigError{Field: "env", Reason: "set together with RunOptions.Env: the environment has one owner, set one of them"}
		}
		if err := spec.ValidateEnv(cfg.Env); err != nil {
			return res, err
		}
		opts.Env, cfg.Env = spec.EnvList(cfg.Env), nil
	}

	tmp, err := runtemp.New(opts.Env)
	if err != nil {
		return res, fmt.Errorf("sandbox: Run: private temporary directory: %w", err)
	}
	defer tmp.Remove()
	cfg.AllowedWritePaths = append(slices.Clip(cfg.AllowedWritePaths), tmp.Path())

	cmd := exec.Command(name, args...)
	cmd.Dir = opts.Dir
	cmd.Env = tmp.Environ(opts.Env) // never nil: nil inherits
	var s streams
	if err := s.connect(cmd, cfg, opts); err != nil {
		return res, err
	}

	// Linux's Pdeathsig fires when the thread that created the child
	// exits; Go ends a thread only when a goroutine locked to it exits, so
	// holding the lock until the child is reaped keeps the thread alive.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()

	p, err := startConfined(ctx, cmd, cfg, opts.TTY, tmp.Path())
	closeAll(s.childEnds)
	if err != nil {
		closeAll([]*os.File{s.stdinW, s.outR, s.errR})
		return res, err
	}
	started := time.Now()
	s.serve(opts, limit)
	ctxErr := waitOrKill(ctx, p)
	res.Duration = time.Since(started)
	p.killRest() // what outlived the program
	waitErr := cmd.Wait()
	report, relErr := p.finish(cmd.ProcessState)
	res.CommandReport = report
	s.drain(opts.TTY)

	res.Stdout, res.StdoutTruncated = s.stdout.data, s.stdout.truncated
	res.Stderr, res.StderrTruncated = s.stderr.data, s.stderr.truncated
	if cmd.ProcessState != nil {
		res.State = cmd.ProcessState.String()
		res.ExitCode = cmd.ProcessState.ExitCode()
	}
	if ferr := p.failure(); ferr != nil {
		res.ExitCode = -1
		return res, ferr
	}
	var exitErr *exec.ExitError
	switch {
	case ctxErr != nil:
		return res, fmt.Errorf("sandbox: Run %s: %w", name, ctxErr)
	case waitErr != nil && !errors.As(waitErr, &exitErr):
		return res, fmt.Errorf("sandbox: Run %s: %w", name, waitErr)
	case relErr != nil:
		return res, fmt.Errorf("sandbox: Run %s: %w", name, relErr)
	}
	return res, nil
}

// outputLimit checks opts and returns how many bytes of each stream Run
// keeps.
func outputLimit(opts RunOptions) (int, error) {
	switch {
	case opts.Timeout < 0:
		return 0, fmt.Errorf("sandbox: Run: negative Timeout %v", opts.Timeout)
	case opts.MaxOutput < 0:
		return 0, fmt.Errorf("sandbox: Run: negative MaxOutput %d", opts.MaxOutput)
	case opts.MaxOutput == 0:
		return DefaultMaxOutput, nil
	}
	return opts.MaxOutput, nil
}

// waitOrKill waits for the program to exit, killing it first when ctx ends
// (its deadline or cancellation, returned).
func waitOrKill(ctx context.Context, p *confinedProc) error {
	exited := make(chan struct{})
	go func() {
		p.waitExit()
		close(exited)
	}()
	select {
	case <-exited:
		return nil
	case <-ctx.Done():
		p.kill()
		<-exited
		return ctx.Err()
	}
}

// streams are the program's standard streams as Run connects them: its
// own pipes (or a pseudo-terminal with TTY), never the caller's files but
// a regular file or pipe given as Stdin without Strict.
type streams struct {
	stdinW, outR, errR *os.File   // Run's ends; errR nil with TTY
	childEnds          []*os.File // the program's ends, closed once it started
	stdout, stderr     capture
	readers            sync.WaitGroup
}

func closeAll(fs []*os.File) {
	for _, f := range fs {
		if f != nil {
			f.Close()
		}
	}
}

// connect gives cmd its standard streams.
func (s *streams) connect(cmd *exec.Cmd, cfg Config, opts RunOptions) error {
	if opts.TTY {
		return s.connectTTY(cmd, opts)
	}
	in, isFile := opts.Stdin.(*os.File)
	switch {
	case opts.Stdin == nil:
	case isFile && passAsIs(in) && !cfg.Strict:
		cmd.Stdin = in
	default:
		r, w, err := os.Pipe()
		if err != nil {
			return fmt.Errorf("sandbox: Run: %w", err)
		}
		cmd.Stdin, s.stdinW = r, w
		s.childEnds = append(s.childEnds, r)
	}
	var outW, errW *os.File
	var err error
	s.outR, outW, err = outputPipe()
	if err != nil {
		closeAll(s.childEnds)
		closeAll([]*os.File{s.stdinW})
		return fmt.Errorf("sandbox: Run: %w", err)
	}
	s.errR, errW, err = outputPipe()
	if err != nil {
		closeAll(s.childEnds)
		closeAll([]*os.File{s.stdinW, s.outR, outW})
		return fmt.Errorf("sandbox: Run: %w", err)
	}
	cmd.Stdout, cmd.Stderr = outW, errW
	s.childEnds = append(s.childEnds, outW, errW)
	return nil
}

// connectTTY gives cmd a pseudo-terminal as its controlling terminal and
// every standard stream; Run keeps the master.
func (s *streams) connectTTY(cmd *exec.Cmd, opts RunOptions) error {
	if why := pty.Refusal(); why != "" {
		return errors.New("sandbox: Run: TTY: " + why)
	}
	master, tty, err := pty.Open()
	if err != nil {
		return fmt.Errorf("sandbox: Run: TTY: %w", err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	pty.SetControllingTerminal(cmd)
	s.childEnds = append(s.childEnds, tty)
	s.outR = master
	if opts.Stdin != nil {
		// The master is both ends: a copy writes into it.
		s.stdinW = master
	}
	if opts.Resize != nil {
		go func() {
			for ws := range opts.Resize {
				if pty.SetSize(master, ws.Rows, ws.Cols) != nil {
					return // closed
				}
			}
		}()
	}
	return nil
}

// serve reads the program's output (at most limit bytes of each stream
// kept) and copies opts.Stdin to it, once it has started.
func (s *streams) serve(opts RunOptions, limit int) {
	s.readers.Go(func() { s.stdout.read(s.outR, limit, opts.Stdout) })
	if s.errR != nil {
		s.readers.Go(func() { s.stderr.read(s.errR, limit, opts.Stderr) })
	}
	if s.stdinW != nil {
		go func() {
			io.Copy(s.stdinW, opts.Stdin)
			if !opts.TTY {
				s.stdinW.Close()
			}
		}()
	}
}

// drain, once the program's tree is gone, reads what is left of its
// output (at most drainTimeout more) and closes Run's ends.
func (s *streams) drain(tty bool) {
	if s.stdinW != nil && !tty {
		s.stdinW.Close() // ends a copy blocked on a full pipe
	}
	for _, r := range []*os.File{s.outR, s.errR} {
		if r != nil {
			r.SetReadDeadline(time.Now().Add(drainTimeout))
		}
	}
	s.readers.Wait()
	closeAll([]*os.File{s.outR, s.errR}) // with TTY, also ends the copy of Stdin
}

// passAsIs reports whether Run may hand the file f to the program as its
// standard input: a regular file or a pipe, which carry data and nothing
// else. A terminal (the caller's) or another device is copied through a
// pipe instead.
func passAsIs(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && (fi.Mode().IsRegular() || fi.Mode()&os.ModeNamedPipe != 0)
}

// capture keeps the first limit bytes read and discards the rest; it also
// copies everything to w, while w accepts it.
type capture struct {
	data      []byte
	truncated bool
}

// read reads into data itself while it is under the limit (growing it as
// append does, from 512 bytes): a program with little output costs a
// small allocation per stream, not a 32 KiB buffer. Past the limit it
// reads into a 32 KiB buffer made then, and marks the capture truncated
// once a byte past the limit arrives.
func (c *capture) read(r io.Reader, limit int, w io.Writer) {
	var discard []byte
	for {
		var p []byte
		if room := limit - len(c.data); room > 0 {
			if len(c.data) == cap(c.data) {
				c.data = slices.Grow(c.data, min(max(512, len(c.data)), room))
			}
			p = c.data[len(c.data):min(cap(c.data), limit)]
		} else {
			if discard == nil {
				discard = make([]byte, 32<<10)
			}
			p = discard
		}
		n, err := r.Read(p)
		if n > 0 && w != nil {
			if _, werr := w.Write(p[:n]); werr != nil {
				w = nil
			}
		}
		if n > 0 {
			if len(c.data) < limit {
				c.data = c.data[:len(c.data)+n]
			} else {
				c.truncated = true
			}
		}
		if err != nil {
			return
		}
	}
}
