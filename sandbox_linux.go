//go:build linux

package sandbox

import (
	"os/exec"

	"github.com/openparallax/sandbox/internal/linux"
)

// linuxSandbox is the Sandbox of Linux: Landlock, seccomp and namespaces,
// the engine of internal/linux.
type linuxSandbox struct{}

func newPlatform() Sandbox { return linuxSandbox{} }

func (linuxSandbox) Available() bool { return Probe().Active }
func (linuxSandbox) Mode() string    { return ModeLandlock }

func probePlatform() Status {
	s := linux.Probe()
	return Status{Active: s.Active, Mode: ModeLandlock, Version: s.Version, Filesystem: s.Active, Network: s.Network, Reason: s.Reason}
}

func planPlatform(rc *resolvedConfig) Plan { return Plan(linux.PlanFor(rc)) }

// ApplySelf restricts the calling process and all its threads (see
// linux.ApplySelf for the order of its steps and what it refuses beyond
// WrapCommand).
func (linuxSandbox) ApplySelf(cfg Config) error {
	rc, err := resolve(cfg)
	if err != nil {
		return err
	}
	return linux.ApplySelf(rc)
}

// WrapCommand prepares cmd so that cmd.Start runs its program already
// confined to cfg: the same Landlock ruleset and seccomp filter as
// ApplySelf(cfg), in force before the program's first instruction.
//
// # How
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
// # What is enforced
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
// # Limits
//
// With Config.Limits, the child half sets the rlimits and, where a cgroup
// can be managed here, joins a cgroup WrapCommand made for the tree with
// its limits (see [Limits]; [PlanFor] says which limit is enforced how).
// The tree's lifetime is the caller's: call [FinishCommand] (or
// [ReleaseCommand], its limits part) after cmd.Wait (or a failed Start) to
// remove the cgroup, kill what is left in it, and learn which limit ended
// the program.
//
// # After the command
//
// Call [FinishCommand] once cmd's program and every process it started
// are gone: it does what Run does after its program, for the things
// WrapCommand set up beside the process (the limits' cgroup, the egress
// proxy) and for what the mount layer cannot prevent (a .git/commondir the
// program planted in a protected repository is removed; a .git it created
// where git will find it is reported).
//
// # Mount layer
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
// remedy. See mountlayer_linux.go.
//
// With AllowSysVIPC the child half starts in the same new namespaces
// (the mount layer's, used by default), for their private IPC namespace: the program's System V segments, queues and semaphore sets
// are its own, and the host's are out of its reach. Where namespaces are
// unavailable it uses the host's, and [PlanFor] says so (sysv_ipc, not
// enforced; Strict: an error).
//
// # Errors
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
// # Rules
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
// # Host names
//
// When cfg.AllowedTCPConnect names hosts and network namespaces are
// available (see [PlanFor]'s tcp_connect_host and [Plan].Egress), the
// program starts in a network namespace of its own with only loopback,
// its environment gets the proxy variables (HTTP_PROXY, HTTPS_PROXY,
// ALL_PROXY, lower-case forms, NO_PROXY), and a proxy served by this
// process allows only those hosts. The caller owns that proxy: get it with
// [EgressOf](cmd) for the refused requests, and Close it once the program
// and its processes are gone.
func (linuxSandbox) WrapCommand(cmd *exec.Cmd, cfg Config) error {
	g, err := linux.WrapCommand(cmd, cfg.spec())
	if err != nil {
		return err
	}
	if g != nil {
		registerEgress(cmd, g.Addr(), g)
	}
	return nil
}
