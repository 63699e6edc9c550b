package sandbox

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
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
	// is "*" (or empty) for any host, "localhost", an IP literal, or a DNS
	// name. Linux's Landlock filters ports, not hosts: under WrapCommand and
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
	// cp -a as root, package managers) need it.
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
	// sandbox, read-only unless Write. Needs the mount-namespace layer;
	// reported as not enforced where it is not in force.
	Mounts []Mount `json:"mounts"`

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
	// (a worktree's) is read-only. Needs the mount-namespace layer, like
	// DenyWritePaths.
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
}

// Mount shows the host path Path at the path At inside the sandbox,
// read-only unless Write.
type Mount struct {
	Path  string `json:"path"`
	At    string `json:"at"`
	Write bool   `json:"write"`
}

// ConfigError is the error for a Config value the library refuses. It names
// the field and the value. errors.Is(err, ErrInvalidConfig) is true for it.
type ConfigError struct {
	Field  string // JSON name of the field, e.g. "allowed_read_paths"
	Value  string // the offending value as given
	Reason string
	Err    error // underlying cause, e.g. from os.Stat; may be nil
}

func (e *ConfigError) Error() string {
	msg := fmt.Sprintf("sandbox: invalid config: %s %q: %s", e.Field, e.Value, e.Reason)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *ConfigError) Unwrap() []error {
	if e.Err != nil {
		return []error{ErrInvalidConfig, e.Err}
	}
	return []error{ErrInvalidConfig}
}

// Endpoint is one parsed entry of Config.AllowedTCPConnect.
type Endpoint struct {
	// Host is "*" for any host, "localhost", a canonical IP literal, or a
	// lower-cased DNS name.
	Host string `json:"host"`
	// Port is the destination port, 1 to 65535; 0 exactly when AnyPort.
	Port uint16 `json:"port"`
	// AnyPort is set for "host:*": every port of Host. Port is then 0,
	// which no code may read as a port: check AnyPort first. ParseEndpoint
	// refuses port 0 in every other form, so an Endpoint it returns with
	// Port 0 is always an any-port entry.
	AnyPort bool `json:"any_port,omitempty"`
}

// AnyHost reports whether the endpoint allows every host.
func (e Endpoint) AnyHost() bool { return e.Host == "*" }

// Unrestricted reports whether the endpoint is "*:*": any host, any port,
// that is, outgoing TCP without restriction.
func (e Endpoint) Unrestricted() bool { return e.AnyHost() && e.AnyPort }

// Loopback reports whether the host is "localhost" or a loopback address.
func (e Endpoint) Loopback() bool {
	if e.Host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(e.Host)
	return err == nil && a.IsLoopback()
}

// String is the endpoint as a Config writes it: "host:port", "host:*"
// for an any-port entry, IPv6 in brackets.
func (e Endpoint) String() string {
	if e.AnyPort {
		return net.JoinHostPort(e.Host, "*")
	}
	return net.JoinHostPort(e.Host, strconv.Itoa(int(e.Port)))
}

// ParseEndpoint parses "host:port" as Config.AllowedTCPConnect takes it.
// The port is decimal, 1 to 65535, or "*" for every port. The host is
// empty or "*" (any host), "localhost", an IP literal (IPv6 in brackets,
// no zone), or a DNS name.
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
// URLs, CIDR ranges, port ranges and wildcards such as "*.example.com"
// are refused: only the egress proxy of WrapCommand and Run could honour
// a wildcard (internal/egress matches them), and where it is not in force
// (ApplySelf, macOS, no network namespaces, a Config mixing "*:PORT") an
// entry falls back to its port, where a wildcard would read as narrower
// than it is.
func ParseEndpoint(s string) (Endpoint, error) {
	if err := checkText(s); err != nil {
		return Endpoint{}, err
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return Endpoint{}, errors.New(`want "host:port"`)
	}
	var ep Endpoint
	if port == "*" {
		ep.AnyPort = true
	} else {
		p, err := parsePort(port)
		if err != nil {
			return Endpoint{}, err
		}
		if p == 0 {
			return Endpoint{}, errors.New("port 0 is not a destination")
		}
		ep.Port = p
	}
	switch {
	case host == "" || host == "*":
		host = "*"
	case strings.EqualFold(host, "localhost"):
		host = "localhost"
	default:
		if a, err := netip.ParseAddr(host); err == nil {
			if a.Zone() != "" {
				return Endpoint{}, errors.New("IPv6 zones are not supported")
			}
			host = a.Unmap().String()
		} else if !validDNSName(host) {
			return Endpoint{}, fmt.Errorf("host %q is not \"*\", localhost, an IP address or a DNS name", host)
		} else {
			host = strings.ToLower(strings.TrimSuffix(host, "."))
		}
	}
	ep.Host = host
	return ep, nil
}

func parsePort(s string) (uint16, error) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("port %q is not a decimal number or \"*\"", s)
	}
	n, err := strconv.ParseUint(s, 10, 16)
	if err != nil {
		return 0, fmt.Errorf("port %q is out of range 0-65535", s)
	}
	return uint16(n), nil
}

func validDNSName(h string) bool {
	h = strings.TrimSuffix(h, ".")
	if h == "" || len(h) > 253 {
		return false
	}
	for label := range strings.SplitSeq(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
				return false
			}
		}
	}
	return true
}

// checkText rejects NUL, control characters and invalid UTF-8: none of them
// belongs in a path or an endpoint, and each can confuse a log, a profile or
// a terminal.
func checkText(s string) error {
	if !utf8.ValidString(s) {
		return errors.New("not valid UTF-8")
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return fmt.Errorf("contains control character %U", r)
		}
	}
	return nil
}

// ResolvedPath is a path from a Config after validation.
type ResolvedPath struct {
	Given    string `json:"given"`    // as written in the Config
	Resolved string `json:"resolved"` // absolute, cleaned, symlinks resolved
	IsDir    bool   `json:"is_dir"`
}

// resolvedConfig is a validated Config: every path resolved, every endpoint
// parsed, duplicates removed. Rules are made from it, never from a Config.
type resolvedConfig struct {
	cfg     Config
	read    []ResolvedPath
	write   []ResolvedPath
	exec    []ResolvedPath
	connect []Endpoint
	bind    []uint16
	// denyWrite and denyRead are absolute and cleaned, not resolved: they
	// need not exist. mounts have Path resolved and At cleaned.
	denyWrite []string
	denyRead  []string
	mounts    []Mount
	// cgroup, when set, is the cgroup WrapCommand found for this spawn;
	// nil: the plan detects it (Linux).
	cgroup *cgroupAvail
	// terminal, on macOS, is the pseudo-terminal Run opened for the
	// program (RunOptions.TTY), which the profile lets it use as one
	// (seatbelt.Policy.Terminal); "" otherwise, and always for WrapCommand.
	terminal string
	// resolver, on Linux under WrapCommand and Run with the egress
	// layer's transparent path, is the generated resolv.conf shown at
	// resolverAt (/etc/resolv.conf, resolved) by the mount layer.
	resolver, resolverAt string
}

// resolve validates cfg. It touches the filesystem only to resolve symlinks
// and to learn whether a path is a directory.
func resolve(cfg Config) (*resolvedConfig, error) {
	rc := &resolvedConfig{cfg: cfg}
	if err := cfg.Limits.validate(); err != nil {
		return nil, err
	}
	var err error
	if rc.read, err = resolvePaths("allowed_read_paths", cfg.AllowedReadPaths); err != nil {
		return nil, err
	}
	if rc.write, err = resolvePaths("allowed_write_paths", cfg.AllowedWritePaths); err != nil {
		return nil, err
	}
	if rc.exec, err = resolvePaths("allowed_exec_paths", cfg.AllowedExecPaths); err != nil {
		return nil, err
	}
	for _, s := range cfg.AllowedTCPConnect {
		ep, err := ParseEndpoint(s)
		if err != nil {
			return nil, &ConfigError{Field: "allowed_tcp_connect", Value: s, Reason: err.Error()}
		}
		if !slices.Contains(rc.connect, ep) {
			rc.connect = append(rc.connect, ep)
		}
	}
	if rc.denyWrite, err = cleanPaths("deny_write_paths", cfg.DenyWritePaths); err != nil {
		return nil, err
	}
	if rc.denyRead, err = cleanPaths("deny_read_paths", cfg.DenyReadPaths); err != nil {
		return nil, err
	}
	for _, m := range cfg.Mounts {
		src, err := resolvePath(m.Path)
		if err != nil {
			err.(*ConfigError).Field = "mounts"
			return nil, err
		}
		at, err := cleanPath(m.At)
		if err != nil {
			return nil, &ConfigError{Field: "mounts", Value: m.At, Reason: "at: " + err.Error()}
		}
		if at == "/" {
			return nil, &ConfigError{Field: "mounts", Value: m.At, Reason: "at: cannot mount over /"}
		}
		rc.mounts = append(rc.mounts, Mount{Path: src.Resolved, At: at, Write: m.Write})
	}
	for _, p := range cfg.AllowedTCPBind {
		if !slices.Contains(rc.bind, p) {
			rc.bind = append(rc.bind, p)
		}
	}
	if err := rc.checkPlantedSymlinks(); err != nil {
		return nil, err
	}
	return rc, nil
}

func resolvePaths(field string, paths []string) ([]ResolvedPath, error) {
	var out []ResolvedPath
	for _, p := range paths {
		rp, err := resolvePath(p)
		if err != nil {
			var ce *ConfigError
			if errors.As(err, &ce) {
				ce.Field = field
			}
			return nil, err
		}
		if !slices.ContainsFunc(out, func(o ResolvedPath) bool { return o.Resolved == rp.Resolved }) {
			out = append(out, rp)
		}
	}
	return out, nil
}

// cleanPaths validates paths that need not exist, and cleans them.
func cleanPaths(field string, paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		c, err := cleanPath(p)
		if err != nil {
			return nil, &ConfigError{Field: field, Value: p, Reason: err.Error()}
		}
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out, nil
}

// cleanPath checks one path's text: not empty, no control characters,
// absolute, no ".." segment; and cleans it. It does not look at the
// filesystem.
func cleanPath(p string) (string, error) {
	if p == "" {
		return "", errors.New("empty path")
	}
	if err := checkText(p); err != nil {
		return "", err
	}
	if !filepath.IsAbs(p) {
		return "", errors.New("path is not absolute")
	}
	for seg := range strings.FieldsFuncSeq(p, func(r rune) bool { return r == '/' || r == filepath.Separator }) {
		if seg == ".." {
			return "", errors.New(`path has a ".." segment`)
		}
	}
	return filepath.Clean(p), nil
}

// resolvePath validates one path: not empty, no control characters, absolute,
// no ".." segment, existing; then cleans it and resolves symlinks.
func resolvePath(p string) (ResolvedPath, error) {
	bad := func(reason string, err error) (ResolvedPath, error) {
		return ResolvedPath{}, &ConfigError{Value: p, Reason: reason, Err: err}
	}
	clean, err := cleanPath(p)
	if err != nil {
		return bad(err.Error(), nil)
	}
	resolved, err := filepath.EvalSymlinks(clean)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return bad("path does not exist", nil)
		}
		return bad("cannot resolve path", err)
	}
	fi, err := os.Stat(resolved)
	if err != nil {
		return bad("cannot stat path", err)
	}
	return ResolvedPath{Given: p, Resolved: resolved, IsDir: fi.IsDir()}, nil
}

// Validate checks cfg the way ApplySelf and WrapCommand will, without
// applying anything. The error names the field and the value.
func (cfg Config) Validate() error {
	_, err := resolve(cfg)
	return err
}
