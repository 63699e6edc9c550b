// Package trampoline is the child half of the Linux WrapCommand: a re-exec
// of the current executable that confines itself with an already-built
// Landlock ruleset description and seccomp programs, then executes the
// target in place, so that the target's first instruction already runs
// confined.
//
// # Why a package of its own
//
// Go cannot run code between fork and exec, so the child must take over
// before the host program's main, in an init function. Go initialises
// packages in dependency order and, among those ready, by import path. This
// package imports only runtime, syscall, unsafe and encoding/base64 (all
// initialised at the very start), so its init runs before the init functions
// of the sandbox package's heavier dependencies (the seccomp library's
// syscall tables alone take about 0.15 ms) and before os, fmt or time. It
// must keep it that way: importing anything that initialises late (os, fmt,
// golang.org/x/sys/unix, go-landlock, ...) would move the trampoline behind
// those init functions. The package therefore makes its system calls itself.
//
// # Recognition
//
// The parent (package sandbox) starts /proc/self/exe with argv[0] = [Arg0]
// and an environment made only of [EnvMarker] and the payload chunks. The
// init function looks up EnvMarker with syscall.Getenv (a map lookup; the
// only cost when absent) and returns at once when it is not there. When it
// is there the process is a trampoline, and it never returns to the host
// program: any inconsistency (no payload, a corrupt payload, an argv[0]
// other than Arg0) ends the process with exit status 125. The host's main
// never runs in a trampoline. The sandbox package adds a second check after
// its own initialisation: a process whose argv[0] is Arg0 but which has no
// marker (its environment was replaced after WrapCommand) also exits 125.
//
// The payload is trusted as the parent's: whoever can set a process's
// environment can run any program anyway. A set-user-ID or set-group-ID
// executable is the exception (the payload could then run any program with
// its privileges), and in one the trampoline refuses to run.
//
// # Transport
//
// The payload ([Payload]: target path, environment, Landlock rules, seccomp
// programs, file descriptor layout) travels in the trampoline's own
// environment, base64 in chunks of at most [chunkSize] bytes, never in a
// file descriptor: exec.Cmd offers no hook after Start, so a descriptor the
// parent kept for the child could not be closed in the parent. The target's
// argv travels as the trampoline's argv[1:] (it is visible in
// /proc/PID/cmdline exactly as the target's own will be); the target's
// environment travels only inside the payload, never as the trampoline's
// environment, so that nothing in it (LD_PRELOAD, GODEBUG, ...) affects the
// trampoline itself.
//
// # In the child
//
//  1. Decode the payload; read argv from /proc/self/cmdline.
//  2. Write "0" to each of Payload.CgroupFDs (the tree's cgroup.procs in
//     each hierarchy; any failure ends the child). Mark every descriptor
//     from Payload.FirstFD upwards close-on-exec (close_range with
//     CLOSE_RANGE_CLOEXEC): the target gets exactly fds 0-2 and
//     cmd.ExtraFiles, at the numbers exec.Cmd gave them.
//  3. (With FlagNamespaces; the C helper has the same step, ns_step.) The
//     namespace step, in the namespaces the parent cloned this process
//     into (see internal/linux's ns_linux.go): refuse to go on if
//     /proc/self/ns/mnt is still the parent's mount namespace
//     (Payload.ParentMountNS: a caller replaced cmd.SysProcAttr after
//     WrapCommand); perform the mount layer's ops ([ApplyMounts], raw
//     system calls: mount, open_tree, move_mount, mount_setattr, and for
//     the sandbox's own root pivot_root, umount2 and symlinkat, the plan
//     of internal/mountns); chdir again to the working directory by its
//     path, so that it names what the target sees; then the network step
//     (Payload.Net). With FlagProbe, exit 0 here (the parent's
//     availability probe).
//  4. Landlock: create the ruleset; open each path rule's path and add
//     the rights for what it is now, a directory or not (see [PathRule]:
//     a path that no longer exists, that is not the object the parent
//     resolved (device and inode), or is no longer what it was granted
//     as, is skipped: less access, never more). The default paths are
//     looked at only here, not by the parent: /proc/self, for one, names
//     the child's own PID, which the target keeps.
//  5. Drop every capability: the bounding set (with CAP_SETPCAP), the
//     ambient set, then permitted, effective and inheritable (a root target
//     starts with none: execve by uid 0 would grant the bounding set).
//  6. Set no_new_privs; landlock_restrict_self; set Payload.Rlimits (only
//     now: the mount steps and the rules' paths open descriptors, and an
//     OpenFiles limit may be below their number); load each seccomp
//     program with seccomp(SECCOMP_SET_MODE_FILTER).
//  7. execve the target, with Payload.ExecNonce in the fourth and fifth
//     argument registers (see internal/seccomp's exec_nonce.go).
//
// Steps 3-6 run on one OS thread (the runtime keeps the main goroutine
// locked to the main thread during initialisation; the init checks it runs
// there): Landlock and seccomp are applied to that thread only, which
// suffices, because execve from it replaces the whole process and the new
// image inherits exactly the calling thread's Landlock domain, filters and
// no_new_privs. The other threads of the trampoline run only Go runtime
// code and die with execve.
//
// # Failures
//
// A failure is written to Payload.ErrFD when the parent gave one (a pipe
// that is close-on-exec in the child, so the parent reads EOF when execve
// succeeded, like os/exec's own error pipe), otherwise as one line
// "sandbox: ..." on the child's standard error. The exit status is 127 when
// the target does not exist, 126 when execve failed otherwise, and 125 when
// the sandbox could not be set up, as env(1) and timeout(1) do.
package trampoline
