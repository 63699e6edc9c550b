package main

// --explain: hints built on what the program reported, never guesses that
// widen the sandbox. The rules (README "Hints" repeats them):
//
//  0. A line matching a row of the table of named denials (hintrules.go:
//     an exec below the program run, a native extension in a write path,
//     a protected git path, restoring owners, pip refusing the system's
//     Python) gets that row's hint, or none when the row says no flag
//     would help; whoever printed it, whatever the exit code.
//  1. Otherwise only lines that report a denial count: "Permission denied",
//     "Operation not permitted", EACCES, EPERM, "cannot exec", on stdout or
//     stderr, whatever the exit code (programs that exit 0 after a denial
//     get a hint too); and a death by SIGSYS.
//  2. Each such line is classified by what was denied: bind/listen,
//     network (connect, socket, unix, UDP), process creation (fork, clone,
//     spawn), exec (also a shell's "Permission denied" with exit status
//     126), write (create, mkdir, unlink, rename, mktemp), else read.
//  3. A path is suggested only when it exists (for a write, the file or
//     its existing directory), is not granted already for that use, is
//     not a credential store (~/.ssh, ~/.gnupg, ~/.aws, ~/.netrc,
//     /etc/shadow, /etc/ssh, /etc/ssl/private ...), and is not / nor an
//     ancestor of the caller's secrets (/home, /root, $HOME, /tmp,
//     /var/tmp, /etc, /proc, /sys, /dev, /run, /var). A file directly in
//     /tmp or /var/tmp gets "use $TMPDIR" (every run has a private one),
//     never --rw /tmp.
//  4. A grant that is already given is never suggested: --allow-spawn with
//     --allow-spawn, --allow-unix with --allow-unix, and so on; the hint
//     then says the denial came from a rule no flag lifts.
//  5. /dev/shm gets --allow-shm, with its cost.
// The kernel's own records are not read yet: every hint rests on the
// program's messages and exit status. Landlock's audit records (ABI 7,
// Linux 6.15) would name the denied access exactly, but they reach only a
// reader with CAP_AUDIT_READ while audit is enabled host-wide (auditd
// running), and a target's denials are logged only when the child half
// restricts itself with LANDLOCK_RESTRICT_SELF_LOG_NEW_EXEC_ON (the default
// logs only before execve). Nothing here could show such a reader working:
// audit is off on the CI host (enabling it is a host-wide change the tests
// may not make) and the kernel matrix's guests have ABI 2 and 6. Seccomp's
// refusals (RET_ERRNO) leave no record at all.

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/openparallax/sandbox"
	"github.com/openparallax/sandbox/internal/spec"
)

// hintContext is what the rules check a suggestion against.
type hintContext struct {
	cfg  sandbox.Config // as run (paths absolute)
	home string         // the caller's $HOME, "" if unknown
	cwd  string         // where relative paths in messages start
	env  []string       // the program's environment (VIRTUAL_ENV)
}

// The patterns of the hints, compiled on first use: only a run that
// failed with a denial looks for hints, and every command would otherwise
// compile them when the program starts.
var (
	pathRE = lazyRE(`(?:^|[\s'"‘“(=:])((?:/|\./|\.\./|~/)[^\s'"’”:,;()]*)`)
	portRE = lazyRE(`(?:port |:)(\d{1,5})\b`)
	hostRE = lazyRE(`\b([A-Za-z0-9.-]+\.[A-Za-z]{2,}|\d+\.\d+\.\d+\.\d+|localhost):(\d{1,5})\b`)
)

// lazyRE is regexp.MustCompile(expr), compiled on the first call.
func lazyRE(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// denialLine reports whether a line reports a denial.
func denialLine(l string) bool {
	low := strings.ToLower(l)
	for _, m := range []string{"permission denied", "operation not permitted", "eacces", "eperm", "cannot exec", "bad system call"} {
		if strings.Contains(low, m) {
			return true
		}
	}
	return false
}

// denialKind classifies a denial line (rule 2).
func denialKind(l string, exitCode int) string {
	low := strings.ToLower(l)
	has := func(ws ...string) bool {
		return slices.ContainsFunc(ws, func(w string) bool { return strings.Contains(low, w) })
	}
	switch {
	case has("bind", "listen"):
		return "bind"
	case has("connect", "socket", "network", "dial", "getaddrinfo", "af_unix", "udp"):
		return "network"
	case has("fork", "clone", "spawn", "vfork", "posix_spawn", "pthread_create"):
		return "fork"
	case has("cannot exec", "exec", "cannot run", "execv"):
		return "exec"
	case exitCode == 126 && strings.Count(l, ":") >= 2 && has("permission denied"):
		return "exec" // sh: 1: ./a.out: Permission denied
	case has("write", "creat", "mkdir", "unlink", "remove", "rename", "mkstemp", "mktemp", "cannot touch", "truncat", "readonly", "read-only", "cannot make", "mkfifo", "link"):
		return "write"
	}
	return "read"
}

// explain returns the hints for one run (rules above).
func explain(res sandbox.RunResult, runErr error, hc hintContext) []string {
	var out []string
	add := func(h string) {
		if !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	if strings.Contains(res.State, "bad system call") {
		if hc.cfg.AllowProcessSpawn {
			add("the program was killed by SIGSYS: it made a system call the sandbox refuses whatever the flags (see `sandbox plan` for the list)")
		} else {
			add("the program was killed by SIGSYS: a system call the sandbox filters; --allow-spawn if it creates processes")
		}
	}
	text := string(res.Stdout) + "\n" + string(res.Stderr)
	if runErr != nil {
		text += "\n" + runErr.Error()
	}
	for l := range strings.SplitSeq(text, "\n") {
		if h, ok := ruleHint(l, hc); ok {
			if h != "" {
				add(h)
			}
		} else if !denialLine(l) {
			continue
		} else if h := hintFor(l, denialKind(l, res.ExitCode), hc); h != "" {
			add(h)
		}
		if len(out) >= 5 {
			break
		}
	}
	return out
}

func hintFor(line, kind string, hc hintContext) string {
	cfg := hc.cfg
	switch kind {
	case "bind":
		if m := portRE().FindStringSubmatch(line); m != nil {
			return fmt.Sprintf("listening on port %s was denied: --bind %s grants it", m[1], m[1])
		}
		return "listening was denied: --bind PORT grants a TCP port"
	case "network":
		low := strings.ToLower(line)
		switch {
		case strings.Contains(low, "unix") || strings.Contains(line, ".sock"):
			if cfg.AllowUnixSockets {
				return "a unix socket was refused although --allow-unix is given: the socket is outside the write paths (Landlock ABI 9+ scopes unix sockets)"
			}
			return "a unix socket was denied: --allow-unix grants unix sockets (pathname sockets such as docker.sock become reachable before Landlock ABI 9)"
		case strings.Contains(low, "udp") || strings.Contains(low, "getaddrinfo") || strings.Contains(low, "resolv"):
			if cfg.AllowUDP {
				return "a UDP or DNS request was refused although --allow-udp is given"
			}
			return "UDP (and so DNS beyond /etc/hosts) was denied: --allow-udp grants it"
		}
		if m := hostRE().FindStringSubmatch(line); m != nil {
			return fmt.Sprintf("a connection to %s:%s was denied: --connect %s:%s grants it", m[1], m[2], m[1], m[2])
		}
		return "network access was denied: --connect HOST:PORT grants a TCP destination"
	case "fork":
		if cfg.AllowProcessSpawn {
			return "creating a process was refused although --allow-spawn is given: the sandbox refuses some forms whatever the flags, e.g. a child in a new session (setsid would leave the tree run kills; see `sandbox plan`)"
		}
		return "creating processes was denied: --allow-spawn grants it (with --exec PATH for each program it runs)"
	}

	for _, m := range pathRE().FindAllStringSubmatch(line, -1) {
		p := strings.TrimRight(m[1], ".")
		if h := pathHint(p, kind, hc); h != "" {
			return h
		}
	}
	switch kind {
	case "exec":
		return "executing a program was denied: --exec PATH grants it (--allow-exec-rw for programs built in the --rw paths)"
	case "write":
		return "a write outside the write paths was denied: --rw DIR grants one (temporary files belong in $TMPDIR)"
	}
	return "" // a read denial naming no path we may suggest: no hint beats a wrong one
}

// pathHint is the hint for one path in a denial line, or "" when the rules
// forbid suggesting it.
func pathHint(p, kind string, hc hintContext) string {
	switch {
	case strings.HasPrefix(p, "~/") && hc.home != "":
		p = filepath.Join(hc.home, p[2:])
	case !filepath.IsAbs(p):
		p = filepath.Join(hc.cwd, p)
	}
	p = filepath.Clean(p)
	if p == "/dev/shm" || strings.HasPrefix(p, "/dev/shm/") {
		if hc.cfg.AllowSharedMemory {
			return ""
		}
		return "/dev/shm was denied: --allow-shm grants it (POSIX shared memory and semaphores, e.g. Python multiprocessing; /dev/shm is shared with the host's processes)"
	}
	if secretPath(p, hc.home) {
		return ""
	}
	if d := filepath.Dir(p); d == "/tmp" || d == "/var/tmp" {
		return fmt.Sprintf("%s is in the host's temporary directory: the program should use $TMPDIR (every run has a private one); granting /tmp would share every user's temporary files", p)
	}
	target := p
	if _, err := os.Lstat(p); err != nil {
		if kind != "write" {
			return "" // rule 3: does not exist
		}
		target = filepath.Dir(p) // creating a file: its directory
		if fi, err := os.Stat(target); err != nil || !fi.IsDir() {
			return ""
		}
	}
	if r, err := filepath.EvalSymlinks(target); err == nil {
		target = r
	}
	if secretPath(target, hc.home) || parentOfSecrets(target, hc.home) {
		return ""
	}
	var granted []string
	flag := "--ro"
	switch kind {
	case "write":
		granted, flag = hc.cfg.AllowedWritePaths, "--rw"
	case "exec":
		granted, flag = hc.cfg.AllowedExecPaths, "--exec"
		if hc.cfg.AllowExecWritePaths {
			granted = append(slices.Clone(granted), hc.cfg.AllowedWritePaths...)
		}
	default:
		granted = slices.Concat(hc.cfg.AllowedReadPaths, hc.cfg.AllowedWritePaths, hc.cfg.AllowedExecPaths)
		for _, sp := range sandbox.SystemPaths {
			granted = append(granted, sp.Path)
		}
	}
	for _, g := range granted {
		if r, err := filepath.EvalSymlinks(g); err == nil {
			g = r
		}
		if spec.Under(target, g) {
			return "" // rule 4: already granted; the denial is not this rule's
		}
	}
	if kind == "exec" && hc.cfg.AllowedWritePaths != nil && !hc.cfg.AllowExecWritePaths {
		for _, w := range hc.cfg.AllowedWritePaths {
			if r, err := filepath.EvalSymlinks(w); err == nil && spec.Under(target, r) {
				return fmt.Sprintf("executing %s was denied: it is in a --rw path; --allow-exec-rw lets programs built there run", target)
			}
		}
	}
	what := map[string]string{"read": "reading", "write": "writing", "exec": "executing"}[kind]
	return fmt.Sprintf("%s %s was denied: %s %s grants it", what, target, flag, target)
}

// secretPath reports whether p is, or is inside, a place that keeps
// credentials.
func secretPath(p, home string) bool {
	roots := []string{"/etc/shadow", "/etc/gshadow", "/etc/ssh", "/etc/ssl/private", "/etc/sudoers", "/root", "/proc", "/sys", "/run", "/var/lib", "/var/log"}
	if home != "" {
		for _, d := range []string{".ssh", ".gnupg", ".aws", ".azure", ".config/gcloud", ".kube", ".docker", ".netrc", ".git-credentials", ".npmrc", ".pypirc", ".password-store", ".local/share/keyrings"} {
			roots = append(roots, filepath.Join(home, d))
		}
	}
	return slices.ContainsFunc(roots, func(r string) bool { return spec.Under(p, r) })
}

// parentOfSecrets reports whether granting p would grant a place that
// holds other users' or the caller's private files.
func parentOfSecrets(p, home string) bool {
	roots := []string{"/home", "/root", "/tmp", "/var/tmp", "/etc", "/proc", "/sys", "/dev", "/run", "/var"}
	if home != "" {
		roots = append(roots, home)
	}
	return p == "/" || slices.ContainsFunc(roots, func(r string) bool { return spec.Under(r, p) })
}
