//go:build darwin

package sandbox

// The macOS canary, run inside a process started by WrapCommand. Each probe
// attempts one thing the profile must deny and counts it "blocked" only on
// the errno Seatbelt answers with: EPERM ("Operation not permitted"), where
// ordinary permissions answer EACCES, a missing file ENOENT, and a loopback
// port with no listener ECONNREFUSED. Targets are files and directories
// every macOS installation has, under their real /private paths, never
// inside anything the Config or the baseline grants. Probes leave nothing
// behind: a file a failing probe creates is removed, a child a failing probe
// creates exits before it executes anything and is reaped, sockets are
// closed.
//
// process_info asks proc_pidpath(1) (launchd's path), which the profile's
// (deny process-info* ...) must refuse with EPERM.
//
// Not probed here: the exec allowlist (no way to ask the kernel whether a
// program would run without running it), UDP, unix sockets and signals.

import (
	"errors"
	"net"
	"os"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/openparallax/sandbox/internal/probe"
	"github.com/openparallax/sandbox/internal/rawsys"
)

const darwinProbeTimeout = 200 * time.Millisecond

func verifyPlatform(cfg Config) CanaryResult {
	rc, err := resolve(darwinCanaryConfig(cfg))
	if err != nil {
		return NewCanaryResult(ModeSandboxExec, []ProbeResult{{Name: "config", Status: ProbeFailed, Error: err.Error()}})
	}
	probes := []ProbeResult{
		darwinProbeFileRead(rc),
		darwinProbeFileWrite(rc),
		darwinProbeNetwork(rc),
		darwinProbeSpawn(rc),
		darwinProbeProcInfo(),
	}
	probes = append(probes, probe.PositiveControls(rc, darwinProbeTimeout)...)
	return NewCanaryResult(ModeSandboxExec, probes)
}

// darwinCanaryConfig maps cfg's paths under /tmp, /var and /etc to /private:
// inside the sandbox those root symlinks cannot be read, so the Config could
// not be resolved as given; outside it the result is the same.
func darwinCanaryConfig(cfg Config) Config {
	m := func(ps []string) []string {
		out := make([]string, len(ps))
		for i, p := range ps {
			out[i] = darwinPrivatePath(p)
		}
		return out
	}
	cfg.AllowedReadPaths = m(cfg.AllowedReadPaths)
	cfg.AllowedWritePaths = m(cfg.AllowedWritePaths)
	cfg.AllowedExecPaths = m(cfg.AllowedExecPaths)
	return cfg
}

// darwinAccess is access(2) with the effective IDs.
func darwinAccess(mode uint32) func(string) error {
	return func(path string) error { return unix.Faccessat(unix.AT_FDCWD, path, mode, unix.AT_EACCESS) }
}

func darwinProbeFileRead(rc *resolvedConfig) ProbeResult {
	path, ok := pickDarwinTarget(rc, darwinReadTargets, darwinAccess(unix.R_OK), os.Geteuid() == 0)
	if !ok {
		return probe.Skipped("file_read", "no readable file outside the granted paths to probe")
	}
	return probe.Outcome("file_read", path, probe.TryRead(path), syscall.EPERM)
}

func darwinProbeFileWrite(rc *resolvedConfig) ProbeResult {
	dir, ok := pickDarwinTarget(rc, darwinWriteTargets, darwinAccess(unix.W_OK|unix.X_OK), os.Geteuid() == 0)
	if !ok {
		return probe.Skipped("file_write", "no writable directory outside the granted paths to probe")
	}
	path, err := probe.TryCreate(dir)
	return probe.Outcome("file_write", path, err, syscall.EPERM)
}

// darwinProbeNetwork connects to a loopback port the Config does not grant,
// with no listener expected: ECONNREFUSED means the connect was let through.
func darwinProbeNetwork(rc *resolvedConfig) ProbeResult {
	port := probe.Port(rc)
	if port == 0 {
		return probe.Skipped("network", "every candidate port is granted by the config")
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	c, err := net.DialTimeout("tcp", addr, darwinProbeTimeout)
	if c != nil {
		c.Close()
	}
	return probe.Outcome("network", addr, err, syscall.EPERM, syscall.EACCES)
}

// darwinProbeSpawn tries to create a process. The child, if there is one,
// must not run anything: it is made to fail before exec (TIOCSCTTY on a
// descriptor closed in the child: EBADF), exits at once and is reaped by
// ForkExec. So the answer is the fork's alone: EPERM is Seatbelt denying
// process-fork, EBADF means a process was created. The only other call
// ForkExec makes that can fail is pipe(2), tried first so that its failure
// is not taken for the fork's.
func darwinProbeSpawn(rc *resolvedConfig) ProbeResult {
	const name = "process_spawn"
	if rc.Config.AllowProcessSpawn {
		return probe.Skipped(name, "process spawn is granted by the config")
	}
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil {
		return ProbeResult{Name: name, Status: ProbeFailed, Target: "fork", Error: "cannot probe: pipe: " + err.Error()}
	}
	syscall.Close(p[0])
	syscall.Close(p[1])
	attr := &syscall.ProcAttr{
		Files: []uintptr{^uintptr(0)}, // fd 0 closed in the child
		Sys:   &syscall.SysProcAttr{Setctty: true, Ctty: 0},
	}
	pid, err := syscall.ForkExec("/usr/bin/true", []string{"true"}, attr)
	switch {
	case err == nil:
		// Unreachable (the child cannot get to exec); reap it regardless.
		var ws syscall.WaitStatus
		syscall.Wait4(pid, &ws, 0, nil)
		err = errors.New("fork: not denied: a child process ran /usr/bin/true")
	case errors.Is(err, syscall.EBADF):
		err = errors.New("fork: not denied: a child process was created (it exited before exec, as arranged)")
	default:
		err = probe.ErrOp("fork", err)
	}
	return probe.Outcome(name, "fork", err, syscall.EPERM)
}

// darwinProbeProcInfo is proc_pidpath(1): the executable path of launchd,
// through proc_info(2) (PROC_INFO_CALL_PIDINFO, PROC_PIDPATHINFO), which
// libproc's proc_pidpath wraps. Outside a sandbox any user may ask it; the
// profile's (deny process-info* ...) must refuse it with EPERM (only the
// process's own info is allowed). Success means the process can inspect
// other processes (their paths, and with other flavours their arguments and
// open files).
func darwinProbeProcInfo() ProbeResult {
	var err error
	if _, errno := rawsys.ProcPidpath(1); errno != 0 {
		err = probe.ErrOp("proc_pidpath(1)", errno)
	}
	return probe.Outcome("process_info", "pid 1", err, syscall.EPERM)
}
