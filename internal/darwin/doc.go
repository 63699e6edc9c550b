// Package darwin is the macOS engine: the Seatbelt policy and profile a
// resolved Config becomes, the Plan of it, the sandbox-exec command line
// WrapCommand and Run make, and the canary that checks from inside that a
// process is confined.
//
// # Pure and host halves
//
// The policy, the profile ([SeatbeltProfile]), the plan ([Plan]), the
// command rewrite ([WrapCommand]), Probe's status ([Status]), Run's
// environment ([RunEnv]) and the choice of the canary's targets are pure
// apart from resolving paths (the Config's through spec.Resolve, the
// wrapped program, and the "#!" interpreters through internal/execgrant)
// and reading the xcrun shims' developer directory (DEVELOPER_DIR, the
// xcode-select link: the host facts in devdir.go, which tests replace):
// they build and are tested on every OS, and use no macOS call. Off macOS a
// path is used as resolved; on macOS it is also spelled as the kernel
// reports it (fcntl F_GETPATH), which is what Seatbelt matches.
//
// The host half is in _darwin.go files: whether /usr/bin/sandbox-exec is
// there and applies a trivial profile ([SandboxExec], [PlanHere]), the
// kernel's spelling of a path, and the canary's probes ([Verify]).
//
// # What the profile enforces and what it does not
//
// Deny by default: reading only the granted paths and the system baseline,
// writing only inside write paths, executing only the exec allowlist, the
// wrapped program and their "#!" interpreters, mapping code
// (file-map-executable) only from the system libraries, the exec paths,
// the shims' programs and the libraries a program granted as a file loads
// (read from its Mach-O load commands: dylibs.go; one in a write path is
// refused) (write paths too with Config.AllowExecWritePaths),
// TCP connect and bind only to the granted ports, no UDP. The wrapped
// program itself must lie outside the write paths unless an exec path or
// Config.AllowExecWritePaths covers it (the program could replace it).
// Unless Config.NoGitProtection, the hooks, config and commondir of every
// git directory in the write paths, at any depth, are not writable, and no
// .git can be created, renamed or removed (internal/seatbelt's git
// protection, reported as spec.FeatureGitProtect): the profile's denies
// hold during the run, so Run's after-run git report (GitCreated,
// Findings) is not made on macOS. Seatbelt filters hosts only as
// "localhost" or "*", so another host is granted as *:PORT and reported
// not enforced; the services a profile lets the process reach for name
// resolution (mDNSResponder) and TLS trust (trustd) are reported as
// channels, not enforced (spec.FeatureResolver, spec.FeatureTLSTrust), and
// user lookups (opendirectoryd, always granted) as a channel reported
// enforced (spec.FeatureUserLookup). With Config.AllowSharedMemory Python's
// named semaphores are granted, the host's (reported not enforced). A
// running process cannot confine itself ([ApplySelfError]). Inherited
// descriptors and the environment pass through; no resource limits.
//
// The package takes a *spec.Resolved or a spec.Config and returns spec
// types; it never imports the root package, whose macOS adapters
// (sandbox_darwin.go, run_darwin.go, canary_darwin.go) call it.
package darwin
