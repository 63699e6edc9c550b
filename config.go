package sandbox

import (
	"github.com/openparallax/sandbox/internal/linux"
	"github.com/openparallax/sandbox/internal/spec"
)

// Config describes what a confined process may do. Everything it does not
// grant is denied. The zero Config grants nothing but the system paths every
// process needs to run (see [SystemPaths]).
//
// A Config is a plain value: it can be written by hand, by a host program, or
// decoded from JSON with the field names given in the struct tags.
//
// Paths must be absolute and clean of ".." segments. Symlinks are resolved
// before rules are made, so a rule follows the object the path names today,
// not the link. A path that does not exist is an error: nothing is granted
// silently in its place.
//
// What each field grants, and what each platform can really enforce of it, is
// reported by [PlanFor] before anything is applied.
type Config struct {
	// AllowedReadPaths may be read; directories may also be listed, and
	// everything beneath them read, recursively.
	AllowedReadPaths []string `json:"allowed_read_paths,omitempty"`

	// AllowedWritePaths may be read and written. Inside a directory the
	// process may create, delete, rename and truncate files and directories,
	// make symlinks, FIFOs and sockets, but never device nodes.
	AllowedWritePaths []string `json:"allowed_write_paths,omitempty"`

	// AllowedTCPConnect lists "host:port" endpoints for outgoing TCP. The host
	// is "*" (or empty) for any host, "localhost", an IP literal, an address
	// range in CIDR notation ("10.0.0.0/8:443", "[fd00::/8]:443": matched
	// against the addresses a program dials, never against names; see
	// [ParseEndpoint]), or a DNS name. Linux's Landlock filters ports, not hosts: under WrapCommand and
	// Run, a list of hosts only (no "*") is enforced by a network namespace
	// with only loopback, in which the caller relays every direct TCP
	// connection to a listed host and port and answers DNS for the listed
	// names (any client, as it dials), and serves a proxy for proxy-aware
	// clients (see [Egress] and [EgressTransparent]), where namespaces are
	// available; elsewhere, and under ApplySelf, the host part is reported
	// as not enforced (see [PlanFor]).
	//
	// The port may be "*" for every port of the host ("api.example.com:*",
	// "10.1.2.3:*", "localhost:*"; see [ParseEndpoint]): under ApplySelf it
	// leaves TCP connect unrestricted (Landlock cannot name a host),
	// reported; under WrapCommand and Run with the egress namespace the
	// host is enforced exactly, but only the proxy serves it on any port
	// (direct clients reach it on the ports other entries list), reported.
	// "*:*" grants TCP to any host and port, and the plan says so.
	AllowedTCPConnect []string `json:"allowed_tcp_connect,omitempty"`

	// AllowedTCPBind lists local TCP ports the process may bind (listen on).
	// Port 0 grants binding an ephemeral port chosen by the kernel.
	AllowedTCPBind []uint16 `json:"allowed_tcp_bind,omitempty"`

	// AllowProcessSpawn lets the process create child processes (fork,
	// vfork, clone without CLONE_THREAD). Children inherit the sandbox.
	AllowProcessSpawn bool `json:"allow_process_spawn,omitempty"`

	// AllowedExecPaths are the only files (or directories of files) that may
	// be executed. On Linux the ELF interpreter (and a script's "#!"
	// interpreter) of each granted file is granted with it. Executing
	// replaces the process image; it does not create a process, so it is
	// governed by this list and not by AllowProcessSpawn. With an empty list
	// ApplySelf also denies execve itself.
	AllowedExecPaths []string `json:"allowed_exec_paths,omitempty"`

	// AllowUnixSockets permits creating AF_UNIX sockets. It is off by default
	// because, before Landlock ABI 9, nothing stops a connect to a pathname
	// socket such as /var/run/docker.sock or an ssh-agent. socketpair(2) is
	// always allowed: it reaches nothing outside the process.
	AllowUnixSockets bool `json:"allow_unix_sockets,omitempty"`

	// AllowUDP permits creating UDP sockets to any host and port (for
	// example for DNS). UDP destinations are not restricted by this library.
	AllowUDP bool `json:"allow_udp,omitempty"`

	// AllowChown lets the program change file owners by path (chown,
	// lchown, fchownat) and write extended attributes by path (setxattr,
	// lsetxattr, removexattr, lremovexattr, setxattrat, removexattrat).
	// Without it these fail with EPERM: Landlock does not mediate them, so
	// they would reach files outside every grant (security.capability on a
	// program, a home directory handed to another user). fchown and
	// fsetxattr on a descriptor stay allowed either way: they need a file
	// Landlock let the process open. Tools that restore owners (tar and
	// cp -a, package managers) need it, and it lets them set only owners
	// the kernel allows without a capability: on Linux a sandboxed
	// program keeps none (ApplySelf empties the caller's sets, WrapCommand
	// and Run the child's: CAP_CHOWN is gone, root's too), so a file can
	// get the program's own user and groups, never another user's.
	AllowChown bool `json:"allow_chown,omitempty"`

	// AllowSysVIPC permits System V shared memory, message queues and
	// semaphores (shmget, msgget, semget and their operations). It is off
	// by default because on Linux they live in an IPC namespace, the
	// host's unless the program has its own: there, the program can list,
	// attach to and change every segment, queue and semaphore set the user
	// may access, other programs' included. Under WrapCommand and Run the
	// field starts the program in new namespaces, with a private IPC
	// namespace (the mount layer's, used by default), so it
	// reaches only its own; where namespaces are unavailable (and under
	// ApplySelf) [PlanFor] reports the host's as not enforced (Strict: an
	// error). PostgreSQL and some X11 and audio programs need it. POSIX
	// message queues (mq_open and the other mq_* calls) live in the same
	// namespace and follow this field: without it they are refused on
	// Linux, since Landlock checks neither the creation of a queue nor its
	// removal.
	AllowSysVIPC bool `json:"allow_sysv_ipc,omitempty"`

	// AllowExecWritePaths makes every write path executable too, for
	// build-and-run work: a compiler's ./a.out, `go test`, scripts a
	// program writes and runs. It is one switch, off by default, because
	// it ends what the exec allowlist promises for those paths: whatever
	// the program can write it can then run (it could already run code
	// through any granted interpreter). On Linux each write path gets
	// Landlock's execute right, with the ELF interpreters of this machine.
	// On macOS each gets process-exec and file-map-executable (without
	// it nothing there can be run or loaded as code, and WrapCommand
	// refuses a program inside a write path).
	AllowExecWritePaths bool `json:"allow_exec_write_paths,omitempty"`

	// AllowSharedMemory grants /dev/shm read-write: POSIX shared memory
	// and named semaphores (glibc's shm_open and sem_open, so Python's
	// multiprocessing, which needs a semaphore for every Pool or Queue),
	// and the heap file of a Java VM with the Z garbage collector, which
	// falls back to /dev/shm when the sandbox refuses its executable
	// memfd (see the memfd rule in internal/seccomp).
	// /dev/shm is shared with every process of the host: without a
	// private mount of it the program can read and change the shared
	// memory of every process of its user there. Under WrapCommand and Run
	// the field makes the mount-namespace layer give the program a
	// private /dev/shm; where that layer is not in force (and under
	// ApplySelf) [PlanFor] reports it as not enforced (Strict: an error).
	// On macOS it grants the named semaphores of Python's multiprocessing
	// (names starting "/mp-"), which are the host's: reported not
	// enforced; POSIX shared memory is not granted there.
	AllowSharedMemory bool `json:"allow_shared_memory,omitempty"`

	// DenyWritePaths stay read-only even inside AllowedWritePaths: writes,
	// creates, deletes and truncation in them fail with EROFS, and renaming
	// or removing the path itself, or a directory between it and the write
	// path, with EBUSY (they are mount points). A path that is a symbolic
	// link is protected where it points, and the link itself is kept (it
	// can be neither replaced nor moved); a path reached through a link
	// higher up is protected where it resolves, but that link could be
	// replaced: reported.
	// Landlock only adds rights, so this needs the mount-namespace layer
	// of WrapCommand and Run; where that layer is not in force [PlanFor]
	// reports the field as not enforced (Strict: an error). A path that
	// does not exist when the sandbox starts cannot be protected (a mount
	// needs a mount point, and none is ever made on the host): inside a
	// write path the program could create it, so [PlanFor] reports it as
	// not enforced, naming it (Strict: an error). Create it first.
	DenyWritePaths []string `json:"deny_write_paths"`

	// DenyReadPaths can be neither read, written nor listed, even inside
	// granted paths. Enforced like DenyWritePaths, by the mount-namespace
	// layer, and reported where it is not (and where a path does not
	// exist). A hidden file becomes /dev/null on a nodev mount: opening it
	// fails with EACCES, and stat shows a character device. A hidden
	// directory becomes an empty read-only tmpfs of mode 000: opening or
	// listing it fails with EACCES (the target has no capability that
	// would pass mode 000, even as root).
	DenyReadPaths []string `json:"deny_read_paths"`

	// Mounts show a host path (Path) at another path (At) inside the
	// sandbox, read-only unless Write (a write lands in the host path).
	// At need not exist on the host: where it does not, the program gets
	// a root of its own (see PrivateRoot) and At is made there, never on
	// the host. Needs the mount-namespace layer of WrapCommand and Run on
	// Linux: where it cannot be used (no user namespaces), and under
	// ApplySelf, on macOS and on Windows, a Config with Mounts is REFUSED
	// (an error matching ErrUnavailable, with the reason; [PlanFor] says
	// so) rather than run with the program seeing the host's tree. An At
	// inside a host tree the sandbox shows (a write path, a grant) must
	// exist there: [PlanFor] reports one that does not as not enforced.
	Mounts []Mount `json:"mounts"`

	// PrivateRoot gives the program a root of its own under WrapCommand
	// and Run on Linux, as bubblewrap builds one: a fresh tmpfs holding
	// only the system paths, the grants (read, write, exec paths and
	// what the exec grants imply), the Mounts, /dev, /proc and a private
	// /tmp, each at its own path, with the host's symbolic links on the
	// way to them (/bin -> usr/bin); the host's root is detached. It
	// hides what Landlock cannot: the names and stat of everything not
	// granted (ENOENT), and the host's mount table (/proc/self/mountinfo
	// lists the own root's mounts only). /proc is a fresh procfs where
	// the program has a PID namespace of its own (Run with
	// AllowProcessSpawn), else the host's. The working directory exists
	// there (an empty directory that cannot be listed where no grant
	// shows it). Everything else the mount layer does holds inside. It is
	// used whether or not this is set when a Mount's At does not exist on
	// the host. Refused like Mounts where it cannot be made.
	PrivateRoot bool `json:"private_root,omitempty"`

	// NoGitProtection turns off the default protection of git
	// repositories in the write paths. By default, under WrapCommand and
	// Run, every repository in a write path or in a writable Mount's
	// source when the sandbox starts, at any depth (a .git directory, a
	// "gitdir:" file or a .git link, and an implicit bare repository:
	// HEAD, objects/ and refs/), found by a walk that follows no link and
	// has a budget (32,768 directories, 1,048,576 entries; past it, and
	// past 64 repositories per spawn, the plan's git_protection entry is
	// not enforced and names what was left, and Strict refuses),
	// keeps the git directory's hooks and config read-only (for a
	// worktree or a "gitdir:" file, those of the real git directory and
	// its common directory), and its .git can be neither renamed nor
	// removed: hooks, core.hooksPath, core.fsmonitor and aliases would
	// otherwise run the sandbox's code outside it the next time the user
	// runs git there. Everything else in the repository stays writable,
	// so add, commit, branch, merge and fetch work. A repository the
	// sandboxed program creates itself is not protected (nothing can be
	// mounted on a path that does not exist without making it on the
	// host): treat it as the program's code; [Run] and [FinishCommand]
	// report each one (GitCreated, or a Finding of kind
	// FindingGitRepository or FindingGitBareRepository), and exec lines
	// the program wrote into a protected repository's rebase or
	// cherry-pick todo list (FindingGitRebaseExec). Nor can a mount keep the
	// program from creating .git/commondir (the git directory must stay
	// writable for git to work), which points git at another directory for
	// hooks and config: [PlanFor] reports that as git_commondir, not
	// enforced; [Run] removes one that appeared once the program's tree is
	// gone (RunResult.Removed), and so does [FinishCommand] for a command
	// WrapCommand prepared. A commondir that exists
	// (a worktree's) is read-only. So too a hooks directory or a config
	// file a protected git directory lacks when the sandbox starts:
	// nothing can be mounted read-only there, so [PlanFor] reports
	// git_protection as not enforced for it (create it first), and Run
	// and FinishCommand remove one the program created (Removed). Needs
	// the mount-namespace layer, like DenyWritePaths. On macOS the profile denies writing hooks, config
	// and commondir of every git directory named .git or NAME.git in the
	// write paths, at any depth, existing or created, and creating or
	// renaming a .git (so git init and git clone fail there); no
	// GitCreated or Findings are made (see docs/platforms.md).
	NoGitProtection bool `json:"no_git_protection,omitempty"`

	// AllowCamera and AllowMicrophone grant the camera and the microphone
	// (macOS: Seatbelt's device-camera and device-microphone). Elsewhere
	// there is no such device permission and [PlanFor] reports them as not
	// enforceable: grant the device paths instead.
	AllowCamera     bool `json:"allow_camera"`
	AllowMicrophone bool `json:"allow_microphone"`

	// NoTLSTrustService (macOS) leaves com.apple.trustd.agent out of the
	// Seatbelt profile. It is otherwise granted with any non-loopback TCP
	// endpoint, for TLS certificate verification through the system (Go's
	// crypto/x509, curl), and it is a channel [PlanFor] reports: trustd
	// fetches the AIA, OCSP and CRL URLs named in certificates the process
	// hands it. Without it that verification fails. Ignored elsewhere.
	NoTLSTrustService bool `json:"no_tls_trust_service,omitempty"`

	// Limits bound what the confined process (and, where a cgroup can be
	// used, its whole tree) may consume: tasks, memory, CPU time, file
	// size, open files. The zero value limits nothing. What is enforced
	// where, and how, is reported by [PlanFor] per entry point (see
	// [Limits]).
	Limits Limits `json:"limits"`

	// Strict turns every part of the Config that cannot be enforced on this
	// system into an error returned before anything is applied. Without it,
	// the enforceable parts are applied and the rest is reported by
	// [PlanFor].
	//
	// Strict also keeps host files out of the program's standard
	// streams: under Run an *os.File as RunOptions.Stdin (Run's outputs
	// are always its own pipes), and under WrapCommand on Linux a Stdin,
	// Stdout or Stderr that is a regular file or a named pipe on a
	// filesystem, is replaced by a pipe the caller's process copies
	// through. Through the host's descriptor the program
	// could change that file's mode, times and extended attributes
	// (fchmod, futimens, fsetxattr), which the mount layer's read-only
	// view does not reach (the descriptor was opened on the host's
	// mount). The program reads and writes the same bytes, but cannot
	// seek them. Without Strict such files are passed as they are.
	Strict bool `json:"strict,omitempty"`

	// StrictAcceptLoader makes Strict accept one gap and no other: the
	// dynamic loader of a granted, dynamically linked program
	// (FeatureExecLoader). Landlock checks execute on the file execve
	// names and on the ELF interpreter the kernel maps for it, and cannot
	// tell the loader so started from the loader run directly, which then
	// maps as code any ELF file the program can read; no Config can close
	// that while it grants such a program. With it, Strict still refuses
	// every other part not enforced, and [PlanFor] still reports the
	// loader; under WrapCommand and Run on Linux the mount layer keeps the
	// write paths noexec, so nothing the program writes runs that way. It
	// needs Strict (without it the Config is refused: ErrInvalidConfig).
	StrictAcceptLoader bool `json:"strict_accept_loader,omitempty"`

	// Env, when not nil, is the whole environment of the program that
	// WrapCommand or Run starts, seed 004's env: nothing of the caller's
	// is inherited, and an empty, non-nil map means no variable at all.
	// It is the one owner of the environment: setting it together with
	// cmd.Env (WrapCommand) or RunOptions.Env (Run) is an error
	// (ErrInvalidConfig), and so is setting it for ApplySelf, which
	// cannot replace the environment of the process that calls it.
	// A nil Env leaves the environment to cmd.Env or RunOptions.Env as
	// before.
	//
	// What the library still adds to it, and nothing else:
	//   - Run: TMPDIR, TMP, TEMP and GOTMPDIR (its private temporary
	//     directory, always), and HOME (a private home beside it) when
	//     Env has no HOME; on macOS also what [Run] lists for the
	//     per-user cache and git configuration.
	//   - The egress layer on Linux, when a host allowlist is enforced
	//     through it (see [Egress]): HTTP_PROXY, HTTPS_PROXY, ALL_PROXY,
	//     NO_PROXY, their lower-case forms and NODE_USE_ENV_PROXY.
	//
	// Names must be non-empty and hold neither "=" nor NUL; values no
	// NUL. The order of the entries the program sees is by name.
	Env map[string]string `json:"env"`
}

// Mount shows the host path Path at the path At inside the sandbox,
// read-only unless Write.
type Mount = spec.Mount

// ConfigError is the error for a Config value the library refuses. It names
// the field (its JSON name, e.g. "allowed_read_paths") and the value, and
// why. errors.Is(err, ErrInvalidConfig) is true for it.
type ConfigError = spec.ConfigError

// Endpoint is one parsed entry of Config.AllowedTCPConnect: Host is "*"
// for any host, "localhost", a canonical IP literal, a canonical address
// range ("10.0.0.0/8", "fd00::/8": Endpoint.Range), or a lower-cased DNS
// name; Port is 1 to 65535, or 0 exactly when AnyPort ("host:*").
type Endpoint = spec.Endpoint

// ParseEndpoint parses "host:port" as Config.AllowedTCPConnect takes it.
// The port is decimal, 1 to 65535, or "*" for every port. The host is
// empty or "*" (any host), "localhost", an IP literal (IPv6 in brackets,
// no zone), an address range in CIDR notation (below), or a DNS name.
//
// "host:*" (an any-port entry, e.g. "api.example.com:*", "10.1.2.3:*",
// "localhost:*") grants every port of that host. What each entry point
// can make of it, reported by [PlanFor]: under ApplySelf on Linux,
// Landlock cannot restrict connect to one host on any port, so TCP
// connect is not restricted at all (any host, any port: reported not
// enforced; Strict refuses). Under WrapCommand and Run with the egress
// namespace, the host is enforced exactly, but only proxy-aware clients
// reach it on any port; a direct connection reaches it only on ports
// other entries list (one listener per port cannot serve every port:
// reported, Strict refuses). On macOS "localhost:*" is enforced as
// Seatbelt's localhost:*; any other host becomes "*:*", host not enforced.
// "localhost:*" is every service on the caller's loopback (databases,
// admin ports): grant it only as that.
//
// "*:*" (or ":*") is accepted and means outgoing TCP without restriction:
// any host, any port. [PlanFor] says so in plain words; it is a grant,
// made exactly, so Strict does not refuse it. Seed 004's net.outbound
// without hosts maps to it.
//
// An address range in CIDR notation allows every address in it (seed
// 004's allowHosts): "10.0.0.0/8:443", "10.0.0.0/8:*", and for IPv6 the
// range inside the brackets, "[fd00::/8]:443" ("[fd00::]/8:443" and
// "fd00::/8:443" are refused with the form to write). The range must be
// canonical: "10.1.2.3/8" is refused with "10.0.0.0/8:443" and
// "10.1.2.3:443" in the message, not rounded (the writer may have meant
// the one address, and the range is 16 million). A /32 or /128 is that IP literal
// ("10.1.2.3/32:443" is "10.1.2.3:443"). "0.0.0.0/0" and "::/0" are
// refused: write "*:PORT" for any host. A range matches addresses only,
// never names, so a /0 would read as any host while the egress layer
// refused every name; one spelling for "any host" leaves no doubt. An
// IPv4-mapped range ("[::ffff:10.0.0.0/104]:443") is refused with its
// IPv4 form; destinations are matched unmapped, so an IPv6 range never
// matches an IPv4 destination (IPv4-mapped or not), nor an IPv4 range an
// IPv6 one.
//
// A range matches the address a program dials (an IP literal in a proxy
// request, the destination of a direct connection), never a DNS name
// whose addresses fall in it: names are matched exactly, and the
// namespace's resolver answers only listed names, because a DNS answer is
// whatever the name's owner (or an attacker on the path) makes it. What
// each entry point makes of a range, reported by [PlanFor]: under
// WrapCommand and Run with the egress namespace it is enforced, as an IP
// literal is ("10.0.0.0/8:*" as any "host:*": any port through the proxy
// only); under ApplySelf and without namespaces only its port is (the
// range is reported not enforced; Strict refuses; "10.0.0.0/8:*" leaves
// TCP connect unrestricted there, as any "host:*"); on macOS it becomes
// Seatbelt's "*:PORT",
// host reported not enforced, or "localhost:PORT" for a range inside
// 127.0.0.0/8 (Seatbelt's localhost is 127.0.0.1 and ::1: narrower than
// asked); on Windows nothing of TCP is enforced, as for every entry. A
// range that holds loopback addresses ("127.0.0.0/8") reaches the
// caller's loopback services on them under WrapCommand and Run, as
// "localhost" does.
//
// Brackets hold an IPv6 address or range and nothing else:
// "[127.0.0.1]:80" and "[localhost]:80" are refused with the form to
// write.
//
// URLs, port ranges and wildcards such as "*.example.com"
// are refused: only the egress proxy of WrapCommand and Run could honour
// a wildcard (internal/egress matches them), and where it is not in force
// (ApplySelf, macOS, no network namespaces, a Config mixing "*:PORT") an
// entry falls back to its port, where a wildcard would read as narrower
// than it is.
func ParseEndpoint(s string) (Endpoint, error) { return spec.ParseEndpoint(s) }

// ResolvedPath is a path from a Config after validation: as given,
// resolved (absolute, cleaned, symlinks resolved), and whether it is a
// directory.
type ResolvedPath = spec.Path

// resolvedConfig is a validated Config (internal/spec): rules are made
// from it, never from a Config.
type resolvedConfig = spec.Resolved

// resolve validates cfg. It touches the filesystem only to resolve symlinks
// and to learn whether a path is a directory.
func resolve(cfg Config) (*resolvedConfig, error) { return spec.Resolve(cfg.spec()) }

// spec is cfg as internal data: the one place each field of a Config
// crosses into the engines.
func (cfg Config) spec() spec.Config {
	return spec.Config{
		AllowedReadPaths:    cfg.AllowedReadPaths,
		AllowedWritePaths:   cfg.AllowedWritePaths,
		AllowedTCPConnect:   cfg.AllowedTCPConnect,
		AllowedTCPBind:      cfg.AllowedTCPBind,
		AllowProcessSpawn:   cfg.AllowProcessSpawn,
		AllowedExecPaths:    cfg.AllowedExecPaths,
		AllowUnixSockets:    cfg.AllowUnixSockets,
		AllowUDP:            cfg.AllowUDP,
		AllowChown:          cfg.AllowChown,
		AllowSysVIPC:        cfg.AllowSysVIPC,
		AllowExecWritePaths: cfg.AllowExecWritePaths,
		AllowSharedMemory:   cfg.AllowSharedMemory,
		DenyWritePaths:      cfg.DenyWritePaths,
		DenyReadPaths:       cfg.DenyReadPaths,
		Mounts:              cfg.Mounts,
		PrivateRoot:         cfg.PrivateRoot,
		NoGitProtection:     cfg.NoGitProtection,
		AllowCamera:         cfg.AllowCamera,
		AllowMicrophone:     cfg.AllowMicrophone,
		NoTLSTrustService:   cfg.NoTLSTrustService,
		Limits:              spec.Limits(cfg.Limits),
		Strict:              cfg.Strict,
		StrictAcceptLoader:  cfg.StrictAcceptLoader,
		Env:                 cfg.Env,
	}
}

// Validate checks cfg the way ApplySelf and WrapCommand will, without
// applying anything. The error names the field and the value.
func (cfg Config) Validate() error {
	_, err := resolve(cfg)
	return err
}

// SystemPath is a path every sandboxed process is granted on Linux.
type SystemPath = linux.SystemPath

// SystemPaths lists, in one place, what every sandboxed process on Linux may
// access besides its Config. Shared libraries are read-only: mapping a library
// needs read, not execute, and Landlock's execute right is only checked by
// execve. Paths absent on a machine are skipped and listed in Plan.Skipped.
var SystemPaths = linux.SystemPaths
