package seatbelt

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// SandboxExecPath is the only sandbox-exec this package is meant to be used
// with. Callers should run this absolute path, never look "sandbox-exec" up
// in PATH, which the confined user may control.
const SandboxExecPath = "/usr/bin/sandbox-exec"

// ErrInvalidPolicy is wrapped by every error Generate returns for a Policy
// it refuses; test for it with errors.Is.
var ErrInvalidPolicy = errors.New("seatbelt: invalid policy")

// Endpoint is an outbound TCP destination.
type Endpoint struct {
	// Host is as the user wrote it: "" or "*" for any host, "localhost", an
	// IP literal (IPv6 with or without brackets), an address range in CIDR
	// notation ("10.0.0.0/8", "fd00::/8"), or a DNS name. Only loopback
	// hosts (a range inside 127.0.0.0/8 included) and wildcards are
	// enforceable; see the package doc.
	Host string
	// Port is the destination port; 0 is rejected unless AnyPort.
	Port uint16
	// AnyPort is every port ("host:*"; Port must be 0): the rule becomes
	// (remote tcp "localhost:*") for a loopback host, "*:*" otherwise
	// (the host reported in Profile.NotEnforced as for a port).
	AnyPort bool
}

// Policy is what the confined command may do. The zero Policy allows only
// the baseline, and no process-exec at all.
type Policy struct {
	// ReadPaths may be read, and listed when they are directories,
	// recursively. Absolute, clean, symlinks already resolved
	// (/private/tmp, not /tmp).
	ReadPaths []string
	// WritePaths may be read, written, created, deleted and renamed inside.
	WritePaths []string
	// ExecPaths may be executed (and read and mapped executable): a file
	// literally, a directory for everything under it. The command given to
	// Profile.Args must be one of them.
	ExecPaths []string
	// LibraryPaths are files that may be read and mapped executable but
	// not executed: the dylibs and frameworks the programs in ExecPaths
	// load from outside the system libraries (a Homebrew program's own
	// libraries). Each is a literal; same form as the other lists.
	LibraryPaths []string
	// IsDir reports whether a path in the lists above is a directory, which
	// selects a subpath rule rather than a literal one. nil treats every
	// path as a directory. Generate is pure when IsDir is; StatIsDir
	// consults the file system.
	IsDir func(path string) bool
	// AllowSpawn allows process-fork and signalling processes of the same
	// sandbox. Without it the command cannot start children.
	AllowSpawn bool
	// TCPConnect lists outbound TCP endpoints.
	TCPConnect []Endpoint
	// TCPBind lists local TCP ports the command may listen on and accept
	// connections on (all local addresses).
	TCPBind []uint16
	// AllowUnixSockets allows creating AF_UNIX sockets and binding or
	// connecting to socket files inside WritePaths, nowhere else.
	AllowUnixSockets bool
	// Camera allows the device-camera operation.
	Camera bool
	// Microphone allows the device-microphone operation.
	Microphone bool
	// NoTrustd leaves out com.apple.trustd.agent, which is otherwise
	// granted when a TCPConnect endpoint is not loopback: trustd evaluates
	// certificates for Security.framework (Go's crypto/x509, curl) and
	// fetches the AIA, OCSP and CRL URLs named in the certificates the
	// process hands it, so it reaches hosts the profile does not name.
	// Without it TLS certificate verification through the system fails.
	NoTrustd bool
	// Terminal is the path of a pseudo-terminal the caller opened for the
	// program (Run with TTY: /dev/ttysNNN), or "". It gets read, write and
	// ioctl (tcgetattr, window size, job control), on exactly that node:
	// the baseline grants ioctl on no terminal, so that a program handed
	// the caller's own terminal could not, say, push input into it
	// (TIOCSTI). Never set it to a terminal the caller itself uses.
	Terminal string
	// ControllingTerminal says that Terminal is also the program's
	// controlling terminal (Run made it so: setsid and TIOCSCTTY before
	// the exec), so /dev/tty, which the kernel resolves to the controlling
	// terminal, gets file-ioctl too (tcsetattr through /dev/tty: less,
	// password prompts, stty </dev/tty). Only with Terminal: /dev/tty of a
	// program without Run's terminal is the caller's terminal, and ioctl on
	// it stays denied.
	ControllingTerminal bool
	// ShellShim, PerlShim and XcrunShim grant what the system shims need
	// (see [Shims]): /bin/sh's select link and shells, /usr/bin/perl's
	// versioned perls, the xcrun tools' Command Line Tools.
	ShellShim, PerlShim, XcrunShim bool
	// DeveloperDir is the active developer directory when it is not the
	// Command Line Tools (xcode-select pointing into Xcode.app, or
	// DEVELOPER_DIR): with XcrunShim the xcrun tools execute from it, so it
	// gets what the Command Line Tools get (execute, read, map
	// executable). Absolute, clean, resolved, like the path lists; "" for
	// none.
	DeveloperDir string
	// ExecWritePaths (Config.AllowExecWritePaths) makes WritePaths
	// executable too: process-exec* and file-map-executable inside them.
	// Without it nothing in a write path can be executed or mapped as code
	// (dlopen, Python extension modules, Node addons).
	ExecWritePaths bool
	// GitProtection denies writing the hooks, config and commondir of
	// every git directory at any depth (see [GitProtectRegexes]) and
	// creating, renaming or removing a .git entry, after every allow, so
	// that it wins inside WritePaths.
	GitProtection bool
	// GitDirs are git directories the regular expressions of
	// GitProtection do not match (not named .git or NAME.git: a
	// "gitdir:" file's target, a bare repository), which the caller
	// found: with GitProtection, writing their hooks/, config,
	// config.worktree and commondir is denied too, and so is writing,
	// renaming or removing the directory itself. Absolute, clean,
	// resolved, like the path lists.
	GitDirs []string
	// PythonSemaphores allows POSIX named semaphores whose names start as
	// Python's multiprocessing makes them ("/mp-"): sem_open, sem_wait,
	// sem_post, sem_unlink. They live in one namespace for the whole
	// host, shared with every process outside the sandbox.
	PythonSemaphores bool
}

// Param is one sandbox-exec profile parameter, passed as "-D", Name+"="+Value
// and referenced in the profile as (param "Name").
type Param struct {
	// Name is generated by Generate: an upper-case letter and digits.
	Name string
	// Value is a user path, verbatim.
	Value string
}

// Profile is a generated Seatbelt profile.
type Profile struct {
	// Text is the SBPL source. It starts "(version 1)\n(deny default)" and
	// holds no user-supplied text.
	Text string
	// Params are the values Text refers to with (param "NAME").
	Params []Param
	// NotEnforced has one line for each thing asked for that the profile
	// does not enforce as asked, with the reason and what is allowed instead.
	NotEnforced []string
}

// Args returns the arguments for SandboxExecPath (without argv[0]) that run
// name with args under p: "-p", p.Text, then "-D", "NAME=VALUE" for each
// parameter, then "--", name and args. name should be an absolute path that
// the profile's ExecPaths allow. See the package doc for how sandbox-exec
// parses these.
func (p Profile) Args(name string, args ...string) []string {
	out := make([]string, 0, 2+2*len(p.Params)+2+len(args))
	out = append(out, "-p", p.Text)
	for _, prm := range p.Params {
		out = append(out, "-D", prm.Name+"="+prm.Value)
	}
	out = append(out, "--", name)
	return append(out, args...)
}

// StatIsDir reports whether path names an existing directory, following
// symlinks. It is meant for Policy.IsDir. A path that does not exist is not
// a directory, so it gets a literal rule: a WritePaths directory the command
// is expected to create must exist before Generate is called.
func StatIsDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}

// grant is one validated, de-duplicated path of a Policy list.
type grant struct {
	list  string // "ReadPaths", "WritePaths", "ExecPaths"
	index int    // index in that list of the first occurrence
	param string // "R0", "W0", "X0", ...
	dir   bool
}

// filter is the SBPL path filter for the grant: subpath for a directory,
// literal for a file.
func (g grant) filter() string {
	if g.dir {
		return "(subpath " + paramRef(g.param) + ")"
	}
	return "(literal " + paramRef(g.param) + ")"
}

func (g grant) describe() string {
	kind := "file"
	if g.dir {
		kind = "directory"
	}
	return fmt.Sprintf("%s[%d] (%s)", g.list, g.index, kind)
}

// Generate builds the profile for p. It rejects, with an error wrapping
// ErrInvalidPolicy, paths that are not absolute, clean, resolved, valid
// UTF-8 or that contain NUL or control characters, port 0, and hosts that
// are neither wildcards, IP literals nor DNS names. Its output depends only on
// p (and on what p.IsDir answers).
//
// SBPL applies the last rule that matches an operation, so the order of
// the sections is part of the policy: the denies that must hold inside
// the grants (git protection) come last, after every allow they override.
func Generate(p Policy) (Profile, error) {
	var prof Profile
	g, err := validate(p, &prof)
	if err != nil {
		return Profile{}, err
	}
	var b builder
	writeHeader(&b)
	b.section("baseline: what a command-line process needs to start")
	writeBaseline(&b)
	writePathGrants(&b, p, g)
	if p.Terminal != "" {
		writeTerminal(&b, p)
	}
	b.section("shims: what sh, perl and the xcrun tools in ExecPaths execute")
	writeShims(&b, p)
	writeProcesses(&b, p)
	writeNetwork(&b, p, g, &prof)
	writeDevices(&b, p)
	b.section("git: denies that override the write grants above (the last matching rule wins)")
	writeGitProtection(&b, p)
	if b.err != nil {
		return Profile{}, fmt.Errorf("seatbelt: internal error: %w", b.err)
	}
	prof.Text = b.sb.String()
	return prof, nil
}

// writeHeader writes the version, (deny default) and the denies that
// (deny default) is reported to leave open.
func writeHeader(b *builder) {
	b.raw("(version 1)")
	b.raw("(deny default)")
	b.raw("(deny file-map-executable process-info* iokit-get-properties nvram*)")
	b.comment("(deny default) is reported to leave the four above allowed; Apple's daemon profiles begin with this")
	b.comment("deny, and Chromium's denies the last three (crbug.com/799149). file-map-executable (mmap with")
	b.comment("PROT_EXEC: dlopen, Python extension modules, Node addons, DYLD_INSERT_LIBRARIES) is allowed again")
	b.comment("only for the system libraries, the exec paths and the shims' programs (and write paths only with")
	b.comment("ExecWritePaths); process-info* of the process itself comes later.")
	b.comment("Generated by github.com/openparallax/sandbox/internal/seatbelt.")
	b.comment("Everything not allowed below is denied. User paths appear only as")
	b.comment("(param \"...\") and reach sandbox-exec as -D NAME=VALUE arguments.")
}

// writePathGrants writes the ReadPaths, WritePaths and ExecPaths rules and
// the metadata of their ancestors.
func writePathGrants(b *builder, p Policy, g grants) {
	b.section("ReadPaths: read and list, recursively for directories (never mapped as code)")
	if len(g.reads) == 0 {
		b.comment("none")
	}
	for _, r := range g.reads {
		b.rule(r.describe()+": read and list", "(allow file-read* "+r.filter()+")")
	}

	b.section("WritePaths: read, write, create, delete and rename inside")
	if len(g.writes) == 0 {
		b.comment("none")
	}
	for _, w := range g.writes {
		b.rule(w.describe()+": read and write", "(allow file-read* file-write* "+w.filter()+")")
		if p.ExecWritePaths {
			b.rule("ExecWritePaths: "+w.describe()+": execute and map executable what the program writes there",
				"(allow process-exec* file-map-executable "+w.filter()+")")
		}
	}

	b.section("LibraryPaths: the libraries of granted programs, read and mapped executable, never executed")
	if len(g.libs) == 0 {
		b.comment("none")
	}
	for _, l := range g.libs {
		b.rule(l.describe()+": read and map executable", "(allow file-read* file-map-executable "+l.filter()+")")
	}

	b.section("ExecPaths: may be executed; read and mapped so dyld can load them")
	if len(g.execs) == 0 {
		b.comment("none: process-exec is denied, so sandbox-exec cannot start any command")
	}
	for _, x := range g.execs {
		b.rule(x.describe()+": execute (process-exec* covers process-exec-interpreter)", "(allow process-exec* "+x.filter()+")")
		b.rule(x.describe()+": read and map executable", "(allow file-read* file-map-executable "+x.filter()+")")
	}

	all := make([]grant, 0, len(g.reads)+len(g.writes)+len(g.execs)+len(g.libs))
	all = append(append(append(append(all, g.reads...), g.writes...), g.execs...), g.libs...)
	if len(all) > 0 {
		var sb strings.Builder
		sb.WriteString("(allow file-read-metadata")
		for _, a := range all {
			sb.WriteString(" (path-ancestors " + paramRef(a.param) + ")")
		}
		sb.WriteString(")")
		b.rule("stat() of the directories above each granted path (realpath, getcwd, mkdir -p); metadata only, no listing", sb.String())
	}
}

// writeTerminal writes the rules of Policy.Terminal.
func writeTerminal(b *builder, p Policy) {
	b.section("Terminal: the pseudo-terminal the caller opened for this program")
	b.rule("read, write and ioctl (terminal modes, window size, job control) on exactly this terminal",
		"(allow file-read* file-write-data file-ioctl (literal "+paramRef("T0")+"))")
	if p.ControllingTerminal {
		b.rule("ControllingTerminal: that terminal is the controlling one, which /dev/tty names: ioctl through it "+
			"(tcsetattr by less, prompts, stty </dev/tty)", "(allow file-ioctl (literal "+b.quote("/dev/tty")+"))")
	}
}

// writeProcesses writes fork, same-sandbox signals and the semaphores.
func writeProcesses(b *builder, p Policy) {
	b.section("processes")
	if p.AllowSpawn {
		b.rule("AllowSpawn: fork; children inherit this sandbox and its exec allowlist", "(allow process-fork)")
		b.rule("AllowSpawn: signal processes of this sandbox (job control, stopping children)", "(allow signal (target same-sandbox))")
	} else {
		b.comment("AllowSpawn is false: process-fork is denied")
	}
	if p.PythonSemaphores {
		var sb strings.Builder
		for _, pre := range PythonSemaphorePrefixes {
			sb.WriteString(" (ipc-posix-name-prefix " + b.quote(pre) + ")")
		}
		b.rule("PythonSemaphores: the named semaphores of Python's multiprocessing (SemLock: /mp-XXXXXXXX), "+
			"in the host's one namespace (shared, not private)", "(allow ipc-posix-sem"+sb.String()+")")
	}
}

// PythonSemaphorePrefixes are the name prefixes Policy.PythonSemaphores
// grants: the names multiprocessing.synchronize gives its
// semaphores: process._config["semprefix"] ("/mp") and "-", then random
// characters. The form without the slash is there in case the kernel
// matches the name after the leading "/" (to be seen on a Mac).
var PythonSemaphorePrefixes = []string{"/mp-", "mp-"}

// writeDevices writes the camera and microphone rules.
func writeDevices(b *builder, p Policy) {
	b.section("devices")
	if p.Camera {
		b.rule("Camera: the camera device operation (TCC consent is still required)", "(allow device-camera)")
	}
	if p.Microphone {
		b.rule("Microphone: the microphone device operation (TCC consent is still required)", "(allow device-microphone)")
	}
	if !p.Camera && !p.Microphone {
		b.comment("none")
	}
}

// isPTYPath reports whether p names a macOS pseudo-terminal's terminal end:
// /dev/ttys followed by digits only.
func isPTYPath(p string) bool {
	d, ok := strings.CutPrefix(p, "/dev/ttys")
	if !ok || d == "" || len(d) > 6 {
		return false
	}
	for _, c := range d {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}
