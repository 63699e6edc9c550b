//go:build darwin

package darwin

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
	"github.com/openparallax/sandbox/internal/spec"
)

const probeTimeout = 200 * time.Millisecond

// Verify is the canary on macOS, run inside a process started by
// WrapCommand with the same cfg: the probes' results, each blocked only on
// Seatbelt's own EPERM, then the positive controls. A Config that cannot be
// resolved is one failed probe named "config".
func Verify(cfg spec.Config) []spec.ProbeResult {
	rc, err := spec.Resolve(canaryConfig(cfg))
	if err != nil {
		return []spec.ProbeResult{{Name: "config", Status: spec.ProbeFailed, Error: err.Error()}}
	}
	probes := []spec.ProbeResult{
		probeFileRead(rc),
		probeFileWrite(rc),
		probeNetwork(rc),
		probeSpawn(rc),
		probeProcInfo(),
	}
	return append(probes, probe.PositiveControls(rc, probeTimeout)...)
}

// accessCheck is access(2) with the effective IDs.
func accessCheck(mode uint32) func(string) error {
	return func(path string) error { return unix.Faccessat(unix.AT_FDCWD, path, mode, unix.AT_EACCESS) }
}

func probeFileRead(rc *spec.Resolved) spec.ProbeResult {
	path, ok := pickTarget(rc, readTargets, accessCheck(unix.R_OK), os.Geteuid() == 0)
	if !ok {
		return probe.Skipped("file_read", "no readable file outside the granted paths to probe")
	}
	return probe.Outcome("file_read", path, probe.TryRead(path), syscall.EPERM)
}

func probeFileWrite(rc *spec.Resolved) spec.ProbeResult {
	dir, ok := pickTarget(rc, writeTargets, accessCheck(unix.W_OK|unix.X_OK), os.Geteuid() == 0)
	if !ok {
		return probe.Skipped("file_write", "no writable directory outside the granted paths to probe")
	}
	path, err := probe.TryCreate(dir)
	return probe.Outcome("file_write", path, err, syscall.EPERM)
}

// probeNetwork connects to a loopback port the Config does not grant,
// with no listener expected: ECONNREFUSED means the connect was let through.
func probeNetwork(rc *spec.Resolved) spec.ProbeResult {
	port := probe.Port(rc)
	if port == 0 {
		return probe.Skipped("network", "every candidate port is granted by the config")
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	c, err := net.DialTimeout("tcp", addr, probeTimeout)
	if c != nil {
		c.Close()
	}
	return probe.Outcome("network", addr, err, syscall.EPERM, syscall.EACCES)
}

// probeSpawn tries to create a process. The child, if there is one,
// must not run anything: it is made to fail before exec (TIOCSCTTY on a
// descriptor closed in the child: EBADF), exits at once and is reaped by
// ForkExec. So the answer is the fork's alone: EPERM is Seatbelt denying
// process-fork, EBADF means a process was created. The only other call
// ForkExec makes that can fail is pipe(2), tried first so that its failure
// is not taken for the fork's.
func probeSpawn(rc *spec.Resolved) spec.ProbeResult {
	const name = "process_spawn"
	if rc.Config.AllowProcessSpawn {
		return probe.Skipped(name, "process spawn is granted by the config")
	}
	var p [2]int
	if err := syscall.Pipe(p[:]); err != nil {
		return spec.ProbeResult{Name: name, Status: spec.ProbeFailed, Target: "fork", Error: "cannot probe: pipe: " + err.Error()}
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

// probeProcInfo is proc_pidpath(1): the executable path of launchd,
// through proc_info(2) (PROC_INFO_CALL_PIDINFO, PROC_PIDPATHINFO), which
// libproc's proc_pidpath wraps. Outside a sandbox any user may ask it; the
// profile's (deny process-info* ...) must refuse it with EPERM (only the
// process's own info is allowed). Success means the process can inspect
// other processes (their paths, and with other flavours their arguments and
// open files).
func probeProcInfo() spec.ProbeResult {
	var err error
	if _, errno := rawsys.ProcPidpath(1); errno != 0 {
		err = probe.ErrOp("proc_pidpath(1)", errno)
	}
	return probe.Outcome("process_info", "pid 1", err, syscall.EPERM)
}
