// Package linux is the sandbox's Linux engine: Landlock, seccomp and
// namespaces. The root package's Linux adapters (sandbox_linux.go,
// run_linux.go, canary_linux.go) call it; it never imports the root
// package, and takes its Config only as internal/spec data.
//
// # Entry points
//
//   - [PlanFor] is the plan of a resolved Config on this kernel, applying
//     nothing; [Probe] is what the kernel offers.
//   - [ApplySelf] confines the calling process and all its threads.
//   - [WrapCommand] prepares an *exec.Cmd so that its program starts
//     confined (the child half: internal/spawnhelper or internal/trampoline),
//     with the mount layer, the egress namespace and the tree's cgroup,
//     and returns what it set up beside the process as a [Command] (the
//     tree's cgroup, the egress proxy, the git checks), which the caller
//     ends once the tree is gone (the root package's session).
//   - [StartConfined] is Run's: it wraps and starts a command as a session
//     whose tree [Proc] can kill whole; its [Proc.Command] is ended the
//     same way.
//   - [Verify] runs the canary's probes in the calling process.
//
// # Pure and applied halves
//
// Files without a GOOS suffix are pure: the default paths (systempaths.go),
// the Landlock and seccomp policy (linux_policy.go) and its plan report
// (linux_plan.go), the limits' features and rlimits (limits.go,
// limits_rlimit.go), the mount layer's spec and plan entries
// (mountlayer.go), the egress layer's plan (egress_plan.go,
// egress_transparent.go, egress_anyport.go), the git walk and its findings
// (gitwalk.go, gitdiscover.go, gitfindings.go, gitplan.go), and
// [PlanSpawn] (planspawn*.go): the child's payload and the parent's wiring
// of a WrapCommand or Run spawn, from the host's facts as data ([Host],
// which spawn_linux.go gathers), golden-tested in testdata/planspawn. They
// build on every OS, so that Linux plans are tested as data everywhere.
// Files ending in _linux.go make system calls or spawn.
//
// # After a command
//
// WrapCommand keeps no registry: it returns what it set up beside the
// process as a [Command], which the root package keeps in its one
// per-command session (session.go) and ends with Release, the proxy's
// Close and FinishGit.
//
// Test hooks (hooks.go, hooks_linux.go; Test* and *Hook) are for the root
// package's tests only.
package linux
