//go:build darwin

package sandbox

import (
	"os/exec"

	"github.com/openparallax/sandbox/internal/darwin"
)

// darwinSandbox is the macOS sandbox: a deny-by-default Seatbelt profile,
// generated from the Config by internal/seatbelt (the engine, internal/darwin,
// makes the policy, the plan and the command), applied by running the
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
// exec allowlist plus the wrapped program (which must lie outside the write
// paths unless AllowExecWritePaths or an exec path covers it), mapping code
// only from the system libraries, the exec paths (and the write paths with
// AllowExecWritePaths), git hooks, config and commondir in the write paths
// not writable at any depth unless NoGitProtection, forking only with
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
// name_resolver and tls_trust_service, not enforced, whenever granted;
// opendirectoryd's user lookups, always granted, as user_lookup_service.
// Run's after-run git report (GitCreated, Findings) is not made on macOS.
// AllowSharedMemory grants Python's named semaphores, which are the
// host's (reported not enforced). UDP is never granted, even
// with AllowUDP. File descriptors the command inherits (stdio, ExtraFiles)
// work whatever the profile says, and its environment is passed through:
// give it neither secrets nor descriptors it may not use. No resource limits.
// [PlanFor] lists each feature with its detail, and [SeatbeltProfile] shows
// the profile itself.
type darwinSandbox struct{}

func newPlatform() Sandbox { return darwinSandbox{} }

// Available reports whether /usr/bin/sandbox-exec is there and applied a
// trivial profile in a trial run (it cannot inside another Seatbelt
// sandbox), that is whether WrapCommand can work. ApplySelf never can on
// macOS.
func (darwinSandbox) Available() bool { return darwin.SandboxExec() == nil }

func (darwinSandbox) Mode() string { return ModeSandboxExec }

// ApplySelf is not available on macOS: it returns an error matching
// [ErrUnavailable] and changes nothing. Start the process with WrapCommand
// (sandbox-exec) instead, and verify it from inside with VerifyCanaryFor.
func (darwinSandbox) ApplySelf(Config) error { return darwin.ApplySelfError() }

// WrapCommand is [Sandbox.WrapCommand] on macOS: its contract, with the
// macOS section, is documented there.
func (darwinSandbox) WrapCommand(cmd *exec.Cmd, cfg Config) error {
	return darwin.WrapCommand(cmd, cfg.spec(), darwin.SandboxExec(), "")
}

func probePlatform() Status { return Status(darwin.Status(darwin.SandboxExec())) }

func planPlatform(rc *resolvedConfig) Plan { return Plan(darwin.PlanHere(rc)) }
