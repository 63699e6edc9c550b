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
//     with the mount layer, the egress namespace and the tree's cgroup;
//     [ReleaseCommand] and [FinishGit] end what it registered under the
//     command, and the [EgressProc] it returns is the caller's.
//   - [StartConfined] is Run's: it wraps and starts a command as a session
//     whose tree [Proc] can kill whole.
//   - [Verify] runs the canary's probes in the calling process.
//
// # Pure and applied halves
//
// Files without a GOOS suffix are pure: the policy (linux_policy.go), the
// limits' features (limits.go), the mount layer's plan (mountlayer.go), the
// git walk and its findings (gitwalk.go, gitdiscover.go, gitfindings.go,
// gitplan.go), and [PlanSpawn] (planspawn*.go): the child's payload and
// the parent's wiring of a WrapCommand or Run spawn, from the host's facts
// as data ([Host], which spawn_linux.go gathers), golden-tested in
// testdata/planspawn. They build on every OS, so that Linux plans are tested as
// data everywhere. Files ending in _linux.go make system calls or spawn;
// some of them also hold pure parts that live beside their syscalls
// (egress_linux.go's plan, mountlayer_linux.go's planning of the layer).
//
// # Registries
//
// WrapCommand keeps what FinishCommand needs in registries keyed by the
// *exec.Cmd (the tree's cgroup in cgroup_linux.go, the git checks in
// git_end_linux.go); the root keeps the egress proxy's (sandbox.EgressOf).
//
// Test hooks (hooks.go, hooks_linux.go; Test* and *Hook) are for the root
// package's tests only.
package linux
