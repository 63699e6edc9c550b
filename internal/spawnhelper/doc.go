// Package spawnhelper holds the static helper that is the child half of
// the sandbox's WrapCommand and Run on linux/amd64 and linux/arm64: the
// program that runs between fork and the target, confines itself and
// executes the target in place, so that the target's first instruction
// already runs confined.
//
// # Why a helper
//
// The other child half, internal/trampoline, re-executes the host program:
// every spawn pays the host's whole start-up (the Go runtime, the dynamic
// loader and cgo when the host uses them, and the init functions of host
// packages that sort before the sandbox's), 2.4× a bare spawn at best. The
// helper is a few kilobytes of freestanding C (c/helper.c, readable in one
// sitting: no libc, no allocation beyond one mmap, every system call's
// result checked) whose cost does not depend on the host.
//
// # Source and bytes
//
// helper_linux_amd64.bin and helper_linux_arm64.bin are generated from
// c/helper.c by gen.sh ("go generate ./internal/spawnhelper") with pinned
// flags: -nostdlib -static -ffreestanding, no PIE, no stack protector (no
// TLS to hold its canary), no unwind tables, -fno-ident, no build ID,
// -ffile-prefix-map, stripped. The compilers are Debian 12's gcc and
// gcc-aarch64-linux-gnu (GCC 12.2, binutils 2.40): the one toolchain family
// builds both, and both are plain apt-get installs. .ci/run regenerates
// the files and fails when they differ from the committed ones, so the
// bytes are exactly what the source says. The package has no cgo: the
// bytes are embedded with go:embed.
//
// # How it is executed
//
// [Executable] writes the image once per host process into a memfd
// (memfd_create with MFD_CLOEXEC, MFD_ALLOW_SEALING and, where the kernel
// has it, MFD_EXEC), seals it (F_SEAL_WRITE, F_SEAL_GROW, F_SEAL_SHRINK,
// F_SEAL_SEAL, and F_SEAL_EXEC where known), reads it back to compare, and
// executes it once without a payload (it must answer exit status 125
// "without its environment"). From then on nobody can change its contents,
// not even this process, and nothing on a filesystem a sandboxed program
// could write is involved. WrapCommand appends it to cmd.ExtraFiles after
// the caller's files and the failure pipe, and sets cmd.Path to
// /proc/self/fd/N, N being its number in the child: exec.Cmd's fork code
// places ExtraFiles exactly (a close-on-exec descriptor that is not among
// them could be overwritten by its dup2 shuffling). The helper marks it,
// with everything from the first descriptor that is not the target's,
// close-on-exec before it executes the target.
//
// Where this fails (no memfd_create or MFD_EXEC refused, e.g.
// vm.memfd_noexec=2; an exec refused by the caller's own seccomp filter or
// an LSM; another architecture), WrapCommand uses the Go trampoline, with
// the same payload and the same semantics, and Plan.ChildHalf says which
// child half is used and why.
//
// # Payload transport
//
// The helper reads its payload exactly as the Go trampoline does: from its
// own environment (OPENPARALLAX_SANDBOX_TRAMPOLINE and base64 chunks, the
// format in internal/trampoline/payload.go), and the target's argv as its
// own argv[1:], as the kernel gave it (no /proc/self/cmdline read), so
// appending to cmd.Args after WrapCommand keeps working. The issue that
// asked for the helper suggested inherited descriptors instead. The
// environment was kept because the kernel copies it at execve, so there
// is nothing whose lifetime must be managed: exec.Cmd has no hook after
// Start, so a per-spawn pipe or memfd in cmd.ExtraFiles would stay open in
// the caller until it closes it (Run could, WrapCommand's caller would
// have to, or a cleanup would have to guess when), and each spawn would
// pay a memfd_create or pipe, a write and the helper's read in the parent
// and child. The cost of the environment is small: for Config{} the
// payload is 11.3 KB of base64 (mostly the seccomp program, then ~30
// rules), copied once by execve and decoded in one pass, a copy an fd
// transport would make too (see docs/benchmarks.md for the whole spawn). The
// payload is trusted as the caller's, as with the trampoline: whoever sets
// a process's environment can run any program anyway; a set-user-ID or
// set-group-ID helper refuses to run (it never is: it lives in a memfd).
//
// # Room for later steps
//
// The payload carries a list of cgroup.procs descriptors, one per
// hierarchy (each written "0" before anything else; a failed write ends the
// child) and a list of resource limits (set with prlimit64), and
// a flags word for steps a child half may not have; a child half refuses
// a payload with a flag it does not know (the helper knows both:
// FlagNamespaces and FlagProbe).
//
// # The namespace step
//
// The namespace layer's step (payload flag FlagNamespaces: the mounts of
// the mount layer, then the egress layer's network step) runs in the helper
// too (ns_step in c/helper.c), in the namespaces the parent cloned the
// child into (user namespace maps and ambient capabilities are set up by
// exec.Cmd before the helper runs). It was first kept in the Go trampoline,
// on the expectation that the mount setup would be several hundred lines
// of C. It is not: internal/mountns.Build plans every mount as an ordered
// list of mount-API calls in the parent (pure, tested as data), so the
// child only performs a list of six kinds of op, each one or two system
// calls, checking the whole list before the first, plus bringing lo up and
// handing a listener over: about 300 lines of C. The measurement that
// decided it: with the re-exec, a layered spawn from a cgo host whose
// packages' init takes 20 ms cost 2.42× bwrap's with the same mounts,
// against 0.84× from a static host (docs/benchmarks.md). The Go
// trampoline keeps the same step for other architectures and where the
// helper cannot run; TestNamespaceStepParity runs both on the same
// payloads (every kind of op, every failure) and requires the same result
// and report, and .ci/run runs the sandbox package's namespace tests
// through both.
package spawnhelper
