// Package sandbox confines a process with the kernel's own mechanisms and then
// proves the confinement holds.
//
// It is built for AI agents and the tools they run: a prompt-injected agent
// with arbitrary code execution must still be unable to read secrets, write
// outside its workspace, reach the network beyond what it was granted, or
// spawn programs.
//
// # Who calls what
//
// An Engine starts an Agent already confined with [Sandbox.WrapCommand]. An
// Agent confines itself before it reads any input with [Sandbox.ApplySelf],
// then runs the canary probes and writes the result where the Engine can
// read it. A doctor calls [Probe] and [PlanFor] to say what this machine can
// enforce.
//
// # What the canary proves
//
// [VerifyCanaryFor] proves what the process that ran it could not do at the
// moment it ran: each probe was denied with the errno only the sandbox
// gives, and on Linux every thread was under a seccomp filter with
// no_new_privs and held no capability. [WriteCanaryResult] records that in the workspace,
// and that record is self-attestation: a program running unconfined can
// write any file, "verified" included. An Engine hands the Agent a nonce
// ([NewCanaryNonce], [CanaryNonceEnv]) and reads the result with
// [ReadFreshCanaryResult], which refuses a result without that nonce or
// older than a maximum age: this stops the replay of an old result or one
// left by another run, not a forgery by an unconfined writer that learns
// the nonce. What makes the result the confined program's is starting it
// with WrapCommand, confined before its first instruction.
//
// # Mechanisms
//
//   - Linux: Landlock (filesystem rights, TCP ports, abstract unix socket and
//     signal scoping, as far as the kernel's ABI goes) plus a seccomp-bpf
//     filter loaded on every thread (process creation, dangerous syscalls,
//     socket families, foreign architectures).
//   - macOS: a deny-by-default Seatbelt profile through /usr/bin/sandbox-exec,
//     for processes started with WrapCommand.
//   - Windows: a Job Object: process creation, breakaway and UI access only;
//     files and network are not restricted, and PlanFor says so.
//   - Elsewhere: nothing; every call that asks for protection fails.
//
// # Failing closed
//
// When the mechanism is missing, ApplySelf and WrapCommand return an error
// matching [ErrUnavailable] and apply nothing. When only parts of a Config
// cannot be enforced (an older kernel, a platform limit), the rest is applied
// and every unenforced part is listed, with its reason, by [PlanFor]; with
// Config.Strict set those parts are an error ([ErrNotEnforced]) instead. A bad
// Config is an error ([ErrInvalidConfig]) naming the field and the value.
package sandbox

import (
	"errors"
	"os/exec"
	"slices"
	"sync/atomic"

	"github.com/openparallax/sandbox/internal/spec"
)

// Sandbox is the platform's confinement mechanism.
type Sandbox interface {
	// Available reports whether the mechanism is present and usable here.
	Available() bool
	// Mode names the mechanism: "landlock", "sandbox-exec", "job-object"
	// or "none".
	Mode() string
	// ApplySelf restricts the calling process, irreversibly, to cfg. On
	// macOS it is not available (ErrUnavailable): a process cannot apply a
	// Seatbelt profile to itself through a public API, so it must be started
	// with WrapCommand and can then prove its confinement with
	// VerifyCanaryFor.
	ApplySelf(cfg Config) error
	// WrapCommand prepares cmd so that it starts already restricted to cfg.
	// cmd must not have been started.
	WrapCommand(cmd *exec.Cmd, cfg Config) error
}

// PostStarter is implemented by sandboxes whose confinement needs a step after
// the process is created: on Windows, the child created suspended by a
// wrapped command is assigned to its Job Object and only then resumed. An
// Engine that starts a wrapped command calls PostStart(cmd.Process.Pid)
// right after cmd.Start, and Close when the child is done:
//
//	if ps, ok := sb.(sandbox.PostStarter); ok {
//		if err := ps.PostStart(cmd.Process.Pid); err != nil { … }
//		defer ps.Close()
//	}
//
// Forgetting PostStart fails closed: the child never runs.
type PostStarter interface {
	PostStart(pid int) error
	Close() error
}

// Mechanism names returned by [Sandbox.Mode] and carried in [Status].
const (
	ModeLandlock    = spec.ModeLandlock
	ModeSandboxExec = spec.ModeSandboxExec
	ModeJobObject   = spec.ModeJobObject
	ModeNone        = spec.ModeNone
)

var (
	// ErrUnavailable: the platform's sandbox mechanism is missing or
	// disabled; nothing was applied.
	ErrUnavailable = spec.ErrUnavailable

	// ErrInvalidConfig: the Config was refused; nothing was applied. The
	// error is a *ConfigError naming the field and value.
	ErrInvalidConfig = spec.ErrInvalidConfig

	// ErrNotEnforced: Config.Strict is set and part of the Config cannot be
	// enforced on this system; nothing was applied.
	ErrNotEnforced = spec.ErrNotEnforced

	// ErrPartiallyApplied: one layer of the sandbox was applied and a later
	// one failed. The process is restricted, but not as asked, and the
	// restriction cannot be undone: it should exit rather than continue.
	ErrPartiallyApplied = spec.ErrPartiallyApplied
)

// New returns the sandbox for this platform.
//
// Its ApplySelf remembers the Config it applied (also when it returns
// ErrPartiallyApplied), so that [VerifyCanary] in the same process verifies
// against that Config. The value still implements [PostStarter] where the
// platform's does (Windows).
func New() Sandbox {
	s := newPlatform()
	if ps, ok := s.(PostStarter); ok {
		return rememberingPostStarter{remembering{s}, ps}
	}
	return remembering{s}
}

// remembering records the Config of each ApplySelf that left the process
// restricted.
type remembering struct{ Sandbox }

type rememberingPostStarter struct {
	remembering
	PostStarter
}

// appliedConfig is the Config of the last ApplySelf in this process that
// restricted it, or nil.
var appliedConfig atomic.Pointer[Config]

func (r remembering) ApplySelf(cfg Config) error {
	err := r.Sandbox.ApplySelf(cfg)
	if err == nil || errors.Is(err, ErrPartiallyApplied) {
		c := cfg.clone()
		appliedConfig.Store(&c)
	}
	return err
}

// clone is a deep copy of cfg: nothing the caller changes later reaches it.
func (cfg Config) clone() Config {
	c := cfg
	c.AllowedReadPaths = slices.Clone(cfg.AllowedReadPaths)
	c.AllowedWritePaths = slices.Clone(cfg.AllowedWritePaths)
	c.AllowedTCPConnect = slices.Clone(cfg.AllowedTCPConnect)
	c.AllowedTCPBind = slices.Clone(cfg.AllowedTCPBind)
	c.AllowedExecPaths = slices.Clone(cfg.AllowedExecPaths)
	c.DenyWritePaths = slices.Clone(cfg.DenyWritePaths)
	c.DenyReadPaths = slices.Clone(cfg.DenyReadPaths)
	c.Mounts = slices.Clone(cfg.Mounts)
	return c
}
