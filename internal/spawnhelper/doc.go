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
// transport would make too (see README's benchmarks for the whole spawn). The
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
// a payload with a flag it does not know.
//
// The namespace layer (mount and network namespaces) runs in the Go
// trampoline, not in the helper: WrapCommand chooses the trampoline when a
// Config needs namespaces (see the sandbox package's mountlayer_linux.go),
// and the payload's FlagNamespaces, which the helper refuses, carries the
// step. Measured on the reference machine
// (loaded, 100 spawns each, three interleaved rounds): "unshare -Urmn
// /bin/true" costs 1.6–1.7× "/bin/true", so creating the namespaces costs
// about a whole bare spawn by itself, and the Go runtime's start-up adds
// less than that again; while the mount setup (user namespace maps, a bind
// mount per grant, read-only remounts, /proc, /dev, a tmpfs, pivot_root,
// each with its own failure handling) would be several hundred lines of
// security code, more than doubling this C and losing the property that
// it can be read in one sitting. Go keeps it testable and reviewable where
// it costs least in relative terms.
package spawnhelper
