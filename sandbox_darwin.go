//go:build darwin

package sandbox

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/openparallax/sandbox/internal/rawsys"
	"github.com/openparallax/sandbox/internal/seatbelt"
)

// darwinSandbox is the macOS sandbox: a deny-by-default Seatbelt profile,
// generated from the Config by internal/seatbelt, applied by running the
// command through /usr/bin/sandbox-exec (mode "sandbox-exec").
//
// # WrapCommand only
//
// macOS has no public API with which a running process can apply a custom
// Seatbelt profile to itself (sandbox_init_with_parameters is private, and
// this library does not use cgo). So ApplySelf always fails with an error
// matching [ErrUnavailable], and never silently does nothing: an Agent on
// macOS is started already confined by its Engine's WrapCommand, and checks
// that it is with [VerifyCanaryFor] (given the same Config).
//
// # What it enforces
//
// Reading only the granted paths and the system baseline (dylibs,
// frameworks, the dyld cache, time zone, a few devices; see
// internal/seatbelt), writing only inside write paths, executing only the
// exec allowlist plus the wrapped program, forking only with
// AllowProcessSpawn, TCP connect only to the granted ports, bind only to the
// granted ports, AF_UNIX only inside write paths with AllowUnixSockets,
// signals only to itself (and, with spawn, its sandbox). Children inherit the
// profile.
//
// # What it does not enforce
//
// Seatbelt filters hosts only as "localhost" or "*": any other host is
// allowed as *:PORT and reported as tcp_connect_host not enforced by
// [PlanFor] (Config.Strict makes that an error). Services the profile lets
// the process reach act for it: mDNSResponder (for a DNS name or "*"; it
// resolves any name, a DNS channel) and trustd (for a non-loopback endpoint;
// it fetches URLs named in certificates) are reported as the channels
// name_resolver and tls_trust_service, not enforced, whenever granted. UDP is never granted, even
// with AllowUDP. File descriptors the command inherits (stdio, ExtraFiles)
// work whatever the profile says, and its environment is passed through:
// give it neither secrets nor descriptors it may not use. No resource limits.
// [PlanFor] lists each feature with its detail, and [SeatbeltProfile] shows
// the profile itself.
type darwinSandbox struct{}

func newPlatform() Sandbox { return darwinSandbox{} }

// sandboxExec is nil when /usr/bin/sandbox-exec exists, is executable, and
// applies a trivial profile; asked once. The trial run is what tells a
// process already inside a Seatbelt sandbox (where sandbox-exec fails with
// forbidden-sandbox-reinit, so every wrap would) from one that can wrap.
var sandboxExec = sync.OnceValue(func() error {
	if err := checkSandboxExec(seatbelt.SandboxExecPath); err != nil {
		return err
	}
	return trialSandboxExec()
})

// trialSandboxExec runs /usr/bin/true under the trial profile
// (darwinTrialArgs), with an empty environment and a time limit.
func trialSandboxExec() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, seatbelt.SandboxExecPath, darwinTrialArgs...)
	cmd.Env = []string{}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	return darwinTrialError(err, stderr.String())
}

func init() { canonicalPath = darwinGetPath }

// darwinGetPath is canonicalPath on macOS: the path fcntl(F_GETPATH) reports
// for p opened with O_EVTONLY (no read permission needed), O_NOFOLLOW and
// O_NONBLOCK (an exec-listed FIFO does not block). p itself when it cannot
// be opened, or the answer is not a clean absolute path that canonicalAlias
// accepts as another spelling of p.
func darwinGetPath(p string) string {
	fd, err := unix.Open(p, unix.O_EVTONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return p
	}
	defer unix.Close(fd)
	got, errno := rawsys.FcntlGetpath(fd)
	if errno == 0 && filepath.IsAbs(got) && filepath.Clean(got) == got && canonicalAlias(p, got) {
		return got
	}
	return p
}

// Available reports whether /usr/bin/sandbox-exec is there and applied a
// trivial profile in a trial run (it cannot inside another Seatbelt
// sandbox), that is whether WrapCommand can work. ApplySelf never can on
// macOS.
func (darwinSandbox) Available() bool { return sandboxExec() == nil }

func (darwinSandbox) Mode() string { return ModeSandboxExec }

// ApplySelf is not available on macOS: it returns an error matching
// [ErrUnavailable] and changes nothing. Start the process with WrapCommand
// (sandbox-exec) instead, and verify it from inside with VerifyCanaryFor.
func (darwinSandbox) ApplySelf(Config) error { return darwinApplySelfError() }

// WrapCommand rewrites cmd so that it runs its program under the Seatbelt
// profile for cfg:
//
//	cmd.Path = "/usr/bin/sandbox-exec"
//	cmd.Args = ["/usr/bin/sandbox-exec", "-p", PROFILE, "-D", "R0=/path", …, "--", TARGET, cmd.Args[1:]…]
//
// The profile is passed inline (-p): no file is written. Every path reaches
// sandbox-exec as a -D parameter, never as profile text. TARGET is cmd.Path
// made absolute (relative to cmd.Dir) with symlinks resolved; it is added to
// the profile's exec allowlist, and so is its "#!" interpreter when it is a
// script. sandbox-exec execs TARGET in place, so cmd.Process is the target
// itself once it runs, and its exit status is the target's (sandbox-exec's
// own failures, such as a profile the kernel refuses, exit non-zero with a
// message on stderr before the target starts).
//
// The target's arguments are cmd.Args[1:], verbatim. Its argv[0] becomes
// TARGET, whatever cmd.Args[0] was: sandbox-exec has no way to set it apart
// from the path it runs. A multi-call program that dispatches on argv[0]
// must be wrapped by its real name.
//
// cmd.Dir, Env, Stdin, Stdout, Stderr, ExtraFiles, SysProcAttr and the
// context are left as they are. Run the command with a Dir inside a granted
// path, an Env without secrets (sandbox-exec passes it on) and only the
// descriptors it may use (the profile does not govern inherited ones). A
// program whose libraries live outside /usr/lib and the system frameworks
// (Homebrew, a Python framework) needs their directories in
// AllowedExecPaths: Seatbelt maps code only from exec paths.
//
// Errors, with cmd left untouched: a refused Config (*ConfigError,
// [ErrInvalidConfig]); sandbox-exec missing ([ErrUnavailable]); under
// Config.Strict, a part of cfg Seatbelt cannot enforce, such as a host other
// than localhost ([ErrNotEnforced]); a nil, started or unresolvable command
// (cmd.Err is returned); a command already wrapped. sandbox-exec cannot start
// inside another Seatbelt sandbox, so an Engine that is itself sandboxed
// cannot wrap commands.
func (darwinSandbox) WrapCommand(cmd *exec.Cmd, cfg Config) error {
	return wrapDarwinCommand(cmd, cfg, sandboxExec())
}

func probePlatform() Status { return darwinStatus(sandboxExec()) }

func planPlatform(rc *resolvedConfig) Plan {
	p := darwinPlan(rc, sandboxExec() == nil)
	if err := sandboxExec(); err != nil {
		p.Reason = err.Error()
	}
	return p
}
