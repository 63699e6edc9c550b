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
	"os/exec"

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
	// VerifyCanaryFor. A Config with Env is refused (ErrInvalidConfig):
	// a process cannot replace its own environment.
	ApplySelf(cfg Config) error
	// WrapCommand prepares cmd so that cmd.Start runs its program already
	// restricted to cfg, confined before its first instruction. cmd must
	// be configured completely (Path, Args, Env, Dir, ExtraFiles) and not
	// yet started. A non-nil cfg.Env becomes cmd.Env (the command's whole
	// environment; cmd.Env must then be nil: see Config.Env).
	//
	// The duties it leaves the caller, on every platform:
	//   - An error means nothing was prepared; WrapCommand also sets cmd.Err
	//     to it on Linux, so that a Start after an ignored error fails
	//     instead of running the program unconfined (on macOS and Windows
	//     cmd is left as it was: do not start it).
	//   - After cmd.Wait (or a failed cmd.Start), call [FinishCommand] once:
	//     it ends what WrapCommand set up beside the process (the limits'
	//     cgroup, the egress proxy) and reports what the program left that
	//     the caller must know of ([CommandReport]). [Run] does all of this
	//     itself.
	//   - On Windows, call PostStart(cmd.Process.Pid) right after cmd.Start
	//     and Close when done (see [PostStarter]): the child stays suspended
	//     until then.
	//   - What may change after the call, and the exit codes a child half
	//     uses when the target cannot start (Linux: 125 the sandbox could
	//     not be set up, 126 not executable, 127 not found), are below.
	//
	// # Linux
	//
	// WrapCommand prepares cmd so that cmd.Start runs its program already
	// confined to cfg: the same Landlock ruleset and seccomp filter as
	// ApplySelf(cfg), in force before the program's first instruction.
	//
	// # Linux: how
	//
	// cmd is rewritten to start a child half that confines itself and
	// execve's the target in place: the target keeps the child's PID, so
	// /proc/self in the default paths names it. On linux/amd64 and arm64 the
	// child half is a small static helper (internal/spawnhelper: freestanding
	// C built from source in this repository) executed from a sealed memfd
	// that WrapCommand appends to cmd.ExtraFiles and names in cmd.Path
	// (/proc/self/fd/N); its cost does not depend on the host program. Where
	// that cannot run (see [Plan].ChildHalf) and on other architectures, the
	// child half re-executes the current executable (/proc/self/exe) as a
	// trampoline, which the init function of this package's
	// internal/trampoline recognises before the host program's main runs, and
	// before the init functions of this package, of its dependencies beyond
	// the runtime and syscall, and of every package importing it. (Init
	// functions of host packages that depend on neither os nor this package and
	// sort before it by import path may run first, unconfined, as host code.)
	// Nothing of the child half reaches the target: it gets exactly
	// cmd.Args, the environment cmd would have had (cmd.Environ() at the time
	// of the call, less the child half's reserved variables
	// OPENPARALLAX_SANDBOX_TRAMPOLINE and OPENPARALLAX_SANDBOX_P0, P1, ...),
	// cmd.Dir, stdin, stdout, stderr and cmd.ExtraFiles at their usual numbers,
	// and no other descriptor: every descriptor above them, including any the
	// host leaked without close-on-exec and the helper's own, is closed at
	// execve. No cgo. Rules are made in the child by opening the paths
	// WrapCommand resolved (and the default paths, which only the child looks
	// at), with the rights for what each is then: a path removed in between,
	// replaced by another object (WrapCommand records device and inode; a
	// directory swapped for a symlink to elsewhere opens another object), or
	// no longer the file or directory it was granted as, is skipped (less
	// access, never more). The child drops every capability before the target
	// runs: a root target starts with empty permitted, effective, inheritable,
	// ambient and bounding sets.
	//
	// # Linux: what is enforced
	//
	// Everything ApplySelf enforces for cfg (see [PlanFor]), with one
	// difference: the target (symlinks resolved) is added to the exec allowlist
	// with its ELF interpreter (or script interpreter), so execve is allowed
	// for it. With AllowProcessSpawn false the target is the only process it
	// can ever be: it cannot fork; with an empty AllowedExecPaths it cannot
	// execute anything either, not even itself or its dynamic loader (the
	// filter accepts only the child's own execve, by a per-spawn 128-bit nonce
	// in registers execve does not read; see internal/seccomp's
	// exec_nonce.go); with AllowedExecPaths a further execve follows the exec
	// allowlist (the target itself, its interpreter and AllowedExecPaths).
	// With AllowProcessSpawn true its children inherit the sandbox.
	//
	// # Linux: limits
	//
	// With Config.Limits, the child half sets the rlimits and, where a cgroup
	// can be managed here, joins a cgroup WrapCommand made for the tree with
	// its limits (see [Limits]; [PlanFor] says which limit is enforced how).
	// The tree's lifetime is the caller's: call [FinishCommand] (or
	// [ReleaseCommand], its limits part) after cmd.Wait (or a failed Start) to
	// remove the cgroup, kill what is left in it, and learn which limit ended
	// the program.
	//
	// # Linux: after the command
	//
	// Call [FinishCommand] once cmd's program and every process it started
	// are gone: it does what Run does after its program, for the things
	// WrapCommand set up beside the process (the limits' cgroup, the egress
	// proxy) and for what the mount layer cannot prevent (a .git/commondir the
	// program planted in a protected repository is removed; a .git it created
	// where git will find it is reported).
	//
	// # Linux: mount layer
	//
	// Wherever this machine allows it (for every Config: file metadata
	// outside the write paths is refused by default), the child half is started in new mount and IPC namespaces
	// (and a user namespace mapping only the caller's own uid and gid when
	// the caller is not root): WrapCommand sets cmd.SysProcAttr's
	// clone flags, maps and ambient capabilities for it, and refuses a
	// SysProcAttr that sets its own (Cloneflags, Unshareflags, uid/gid maps,
	// AmbientCaps; Credential when the caller is not root). Before Landlock,
	// the child makes every mount private and read-only, shows the write
	// paths writable (noexec unless on the exec allowlist, or
	// AllowExecWritePaths), keeps protected paths read-only and hidden paths
	// empty wherever they are seen (their own path, inside Mounts, at host
	// bind mounts of the same subtree), shows Mounts, and gives the target a
	// fresh /tmp and /dev/shm (granted read-write, noexec; a grant, the
	// working directory or an executable under them stays visible there,
	// read-only, nosuid, nodev and noexec unless on the exec allowlist). The
	// host's mount table is never changed, and no mount point is made on a
	// host filesystem. Replacing cmd.SysProcAttr after WrapCommand drops the
	// namespaces: the child then refuses to start (exit 125) rather than mount
	// in the caller's namespace. [PlanFor] says whether the layer is used, its
	// steps (Plan.MountLayer), and, where namespaces are refused, why and the
	// remedy. See internal/linux (mountlayer_linux.go).
	//
	// With AllowSysVIPC the child half starts in the same new namespaces
	// (the mount layer's, used by default), for their private IPC namespace: the program's System V segments, queues and semaphore sets
	// are its own, and the host's are out of its reach. Where namespaces are
	// unavailable it uses the host's, and [PlanFor] says so (sysv_ipc, not
	// enforced; Strict: an error).
	//
	// # Linux: errors
	//
	// WrapCommand itself checks everything it can before anything runs: a bad
	// cfg (*ConfigError, [ErrInvalidConfig]), a missing mechanism
	// ([ErrUnavailable]), Strict with unenforceable parts ([ErrNotEnforced]),
	// a target that does not exist, is not a regular file or is not executable
	// (wrapping the *fs.PathError, so errors.Is(err, fs.ErrNotExist) works),
	// cmd.Err from exec.Command's path lookup, an already started or already
	// wrapped cmd, and SysProcAttr.Chroot (unsupported: the child must reach
	// /proc/self/exe and the rules name host paths). On any error it also sets
	// cmd.Err to the error, so that a Start after an ignored error fails
	// instead of running the program unconfined.
	//
	// What can only fail in the child (the target removed or made
	// non-executable since, a script's interpreter missing, a kernel refusing a
	// rule) makes the child exit before the target runs, with status 127 if
	// the target (or its interpreter) does not exist, 126 if it cannot be
	// executed otherwise, 125 if the sandbox could not be set up, and one line
	// "sandbox: cannot start PATH: REASON" on its standard error. os/exec gives
	// no hook after Start, so Start and Wait cannot carry that reason
	// themselves; [Run] reads it from a failure pipe and returns it as its
	// error.
	//
	// # Linux: rules
	//
	// Configure cmd completely before WrapCommand: it reads cmd.Path,
	// cmd.Args, cmd.Env, cmd.Dir and cmd.ExtraFiles now. Afterwards only
	// appending to cmd.Args (the arguments reach the target) and the fields
	// the child half passes through untouched (Stdin, Stdout, Stderr,
	// SysProcAttr, Cancel, WaitDelay) may change (with Strict, a stream set
	// before WrapCommand that is a host file has been replaced by a pipe:
	// see Config.Strict); but when the mount layer is
	// used WrapCommand has set SysProcAttr's clone flags, maps and ambient
	// capabilities: change its other fields, do not replace it (the child
	// would refuse to start). Replacing cmd.Args or
	// cmd.Env makes the child exit with status 125 without running anything;
	// files added to cmd.ExtraFiles are closed before the target starts (and
	// with the helper, whose descriptor is the last of cmd.ExtraFiles, a file
	// appended shifts nothing: cmd.Path names the helper's number); and a
	// changed cmd.Path, or with the helper a replaced cmd.ExtraFiles (cmd.Path
	// names a descriptor number), would run another program instead of the
	// child half, not confined at all.
	//
	// # Linux: host names
	//
	// When cfg.AllowedTCPConnect names hosts and network namespaces are
	// available (see [PlanFor]'s tcp_connect_host and [Plan].Egress), the
	// program starts in a network namespace of its own with only loopback,
	// its environment gets the proxy variables (HTTP_PROXY, HTTPS_PROXY,
	// ALL_PROXY, lower-case forms, NO_PROXY), and a proxy served by this
	// process allows only those hosts. The caller owns that proxy: get it with
	// [EgressOf](cmd) for the refused requests, and Close it once the program
	// and its processes are gone.
	//
	// # macOS
	//
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
	//
	// # Windows
	//
	// WrapCommand validates cfg, makes a Job Object for cmd and makes cmd start
	// suspended (CREATE_SUSPENDED is added to a copy of cmd.SysProcAttr; every
	// other field and flag the caller set is kept). Nothing runs until
	// PostStart: after cmd.Start the caller must call PostStart with
	// cmd.Process.Pid, which assigns the child to the job and only then resumes
	// it, so no instruction of the child runs outside the job. A child that is
	// never post-started stays suspended and is killed by Close.
	//
	// Each command gets its own job, so commands wrapped by one value may have
	// different Configs and an active-process limit counts only the child of
	// its own command. A bad cfg is an error (*ConfigError) and cmd is left
	// untouched. Wrapping a command twice, or one already started, is an error.
	//
	// # Windows: the console
	//
	// Unless the caller set CREATE_NEW_CONSOLE, CREATE_NO_WINDOW or
	// DETACHED_PROCESS, WrapCommand adds DETACHED_PROCESS (no console, so no
	// console host needs to start for it) when spawning is denied and
	// CREATE_NO_WINDOW (a console of its own, without a window, that its
	// children share) when it is granted: a child attached to the caller's
	// console could write keystrokes into it (WriteConsoleInput), to be read
	// by the shell that started the caller. (AttachConsole to the caller's
	// console is a same-user route this does not stop; PlanFor lists it.)
	// With spawning denied, a console of the child's own is refused with an
	// error (CREATE_NEW_CONSOLE, or CREATE_NO_WINDOW without
	// DETACHED_PROCESS): Windows starts a console host (conhost.exe) for it
	// in the child's job (Windows 8 and later), whose limit of one process
	// leaves it no room; for the same reason a program that calls
	// AllocConsole is expected to fail to get a console. DETACHED_PROCESS
	// with CREATE_NEW_CONSOLE is refused too (Windows refuses the pair).
	// Standard handles the caller sets
	// are passed as they are: a console input handle given as cmd.Stdin
	// reaches the caller's console all the same (Run pipes it).
	//
	// # Windows: jobs inside jobs
	//
	// When the caller is in a job, the child would be too, and Windows refuses
	// to put it into a job with UI restrictions; the job is then made without
	// them (PlanFor reports ui_restrictions not enforced), unless the caller
	// set CREATE_BREAKAWAY_FROM_JOB, which takes the child out of the caller's
	// job (if that job allows it) so that it gets the UI restrictions.
	//
	// # Windows: a failed Start
	//
	// If cmd.Start fails, the job made for cmd stays until Close (it holds no
	// process); a caller that keeps the value should call Close.
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
