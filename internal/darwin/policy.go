package darwin

// The macOS policy as data: which Seatbelt profile a Config becomes. The Plan
// of it is in plan.go, the command rewrite in wrap.go, the canary's targets
// in canary_targets.go. Nothing here runs sandbox-exec or depends on macOS
// (canonicalPath is the identity elsewhere), so it compiles and is tested on
// every OS; sandboxexec_darwin.go and canary_darwin.go use it.

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/openparallax/sandbox/internal/execgrant"
	"github.com/openparallax/sandbox/internal/seatbelt"
	"github.com/openparallax/sandbox/internal/spec"
)

// Path access names in [PathRule.Access] on macOS.
const (
	accessRead      = "read"       // file-read*: read, list, stat
	accessReadWrite = "read-write" // file-read* file-write*
	accessExec      = "exec"       // process-exec*, file-read*, file-map-executable
	// accessDeveloper is the xcrun shims' developer directory outside the
	// Command Line Tools (developerDir): what accessExec gives.
	accessDeveloper = "exec (xcrun developer directory)"
	// accessLibrary is a library of a granted program (libraryRules):
	// read and map executable, as itself.
	accessLibrary = "read, map-executable (a library)"
)

const (
	// hostLimit is Probe's note on what Seatbelt cannot filter.
	hostLimit = `Seatbelt network rules take only "localhost" or "*" as host: ` +
		`a TCP endpoint with any other host is enforced by port only (as *:PORT)`
	// noApplySelf explains ApplySelf's error, in Probe and Plan too.
	noApplySelf = "ApplySelf is not available on macOS: " +
		"start the process with WrapCommand (sandbox-exec) and verify it with VerifyCanaryFor"
	// unavailable is the Plan's reason when sandbox-exec is missing.
	unavailable = seatbelt.SandboxExecPath + " is missing or not executable"
	// hostHint is the remedy for a host Seatbelt cannot enforce.
	hostHint = `write "*:PORT" to state what is enforced, or "localhost:PORT" for a local service`
)

// systemPath is a path every profile grants, whatever the Config
// (internal/seatbelt's baseline).
type systemPath struct {
	Path, Access, Reason string
	// Exact: the path itself only (its names or its metadata), nothing
	// below it.
	Exact bool
}

// baseline mirrors the file rules of internal/seatbelt's baseline, for
// [Plan.Paths]; a test holds it to the generated profile in both directions.
var baseline = []systemPath{
	{Path: "/usr/lib", Access: "read, map-executable", Reason: "system dylibs and dyld"},
	{Path: "/System/Library/Frameworks", Access: "read, map-executable", Reason: "public frameworks"},
	{Path: "/System/Library/PrivateFrameworks", Access: "read, map-executable", Reason: "private frameworks loaded by libSystem"},
	{Path: "/System/Library/SubFrameworks", Access: "read, map-executable", Reason: "framework content split out of Frameworks"},
	{Path: "/System/Library/dyld", Access: "read, map-executable", Reason: "dyld shared cache (macOS 11 and 12)"},
	{Path: "/System/Volumes/Preboot/Cryptexes/OS", Access: "read, map-executable", Reason: "dyld shared cache (macOS 13 and later)"},
	{Path: "/System/Cryptexes/OS", Access: "read, map-executable", Reason: "the OS cryptex through its mount point"},
	{Path: "/", Access: "read (the names in / and its attributes, nothing below)", Reason: "dyld on macOS 26 reads the root directory", Exact: true},
	{Path: "/usr/share", Access: accessRead, Reason: "read-only system data: locale, terminfo, ICU, file(1)'s magic"},
	{Path: "/System/Library/Perl", Access: "read, map-executable", Reason: "the system Perl's modules"},
	{Path: "/Library/Apple/usr/libexec/oah", Access: "read, map-executable", Reason: "Rosetta 2 runtime (x86_64 programs on Apple silicon)"},
	{Path: "/usr/libexec/rosetta", Access: "read, map-executable", Reason: "Rosetta 2 runtime (x86_64 programs on Apple silicon)"},
	{Path: "/private/var/db/oah", Access: "read, map-executable", Reason: "Rosetta 2 translation cache"},
	{Path: "/System/Library/CoreServices/SystemVersion.plist", Access: accessRead, Reason: "OS version"},
	{Path: "/System/Library/CoreServices/SystemVersionCompat.plist", Access: accessRead, Reason: "OS version for programs built for 10.x"},
	{Path: "/etc", Access: "metadata", Reason: "stat of the root symlink", Exact: true},
	{Path: "/tmp", Access: "metadata", Reason: "stat of the root symlink", Exact: true},
	{Path: "/var", Access: "metadata", Reason: "stat of the root symlink", Exact: true},
	{Path: "/private/etc/localtime", Access: accessRead, Reason: "local time zone"},
	{Path: "/private/var/db/timezone", Access: accessRead, Reason: "time zone database"},
	{Path: "/dev/null", Access: "read, write-data", Reason: "the null device"},
	{Path: "/dev/zero", Access: accessRead, Reason: "zero source"},
	{Path: "/dev/random", Access: accessRead, Reason: "randomness"},
	{Path: "/dev/urandom", Access: accessRead, Reason: "randomness"},
	{Path: "/dev/tty", Access: "read, write-data", Reason: "the controlling terminal"},
	{Path: "/dev/stdin", Access: "read, write-data", Reason: "the process's own descriptor 0"},
	{Path: "/dev/stdout", Access: "read, write-data", Reason: "the process's own descriptor 1"},
	{Path: "/dev/stderr", Access: "read, write-data", Reason: "the process's own descriptor 2"},
	{Path: "/dev/fd", Access: "read, write-data", Reason: "the process's own descriptors by number"},
}

// baselineAncestors are the directories above the baseline's paths, which
// the profile lets the process stat (realpath component by component: git's
// RUNTIME_PREFIX, Perl's abs_path), each as itself only.
var baselineAncestors = []string{
	"/usr", "/usr/libexec", "/System", "/System/Library", "/System/Library/CoreServices", "/System/Volumes",
	"/System/Volumes/Preboot", "/System/Volumes/Preboot/Cryptexes", "/System/Cryptexes", "/Library", "/Library/Apple",
	"/Library/Apple/usr", "/Library/Apple/usr/libexec", "/private", "/private/var", "/private/var/db", "/private/etc", "/dev",
}

func init() {
	for _, d := range baselineAncestors {
		baseline = append(baseline, systemPath{Path: d, Access: "metadata", Reason: "stat of a directory above the baseline's paths", Exact: true})
	}
}

// shimPaths mirror the fixed rules internal/seatbelt adds for each
// shim the exec grants hold, for [Plan.Paths].
var shimPaths = map[string][]systemPath{
	"sh": {
		{Path: "/private/var/select/sh", Access: accessRead, Reason: "/bin/sh reads which shell it is"},
		{Path: "/bin/bash", Access: accessExec, Reason: "a shell /bin/sh re-executes"},
		{Path: "/bin/dash", Access: accessExec, Reason: "a shell /bin/sh re-executes"},
		{Path: "/bin/zsh", Access: accessExec, Reason: "a shell /bin/sh re-executes"},
	},
	"perl": {
		{Path: "/usr/bin/perl5.*", Access: accessExec, Reason: "the versioned perl /usr/bin/perl executes"},
		{Path: "/Library/Perl", Access: "read, map-executable", Reason: "site modules, early in the system perl's @INC"},
	},
	"xcrun": {
		{Path: "/private/var/db/xcode_select_link", Access: accessRead, Reason: "the active developer directory, read by the xcrun shims"},
		{Path: "/usr/bin/xcrun", Access: accessExec, Reason: "xcrun, which the shims may execute"},
		{Path: "/Library/Developer/CommandLineTools", Access: accessExec, Reason: "the tools the xcrun shims (git, python3, make, clang, ...) execute"},
	},
}

// Paths the profile grants only when a TCP endpoint needs them.
const (
	resolverSocket = "/private/var/run/mDNSResponder"
	hostsFile      = "/private/etc/hosts"
	tlsDir         = "/private/etc/ssl"
	trustdService  = "com.apple.trustd.agent"
)

// pathRule is one path rule of a macOS profile.
type pathRule struct {
	spec.Path
	Access string // accessRead, accessReadWrite or accessExec
	Source string // Config field, "WrapCommand target" or "interpreter of …"
}

// canonicalPath returns the path the kernel reports for p, which is what
// Seatbelt matches: on macOS, p opened (O_EVTONLY, never following a symlink
// at the last step, never blocking) and asked with fcntl(F_GETPATH), which
// normalises case, Unicode form and firmlink aliases that EvalSymlinks
// keeps. Elsewhere, and when p cannot be opened, p itself. Set by
// sandboxexec_darwin.go.
var canonicalPath = func(p string) string { return p }

// canonicalAlias reports whether got, the kernel's name for the file opened
// as p, is p spelled as the kernel spells it: the same but for ASCII case,
// the Unicode form of non-ASCII characters, or the /System/Volumes/Data
// firmlink prefix. Anything else means the path led elsewhere when it was
// opened (a directory on it replaced by a symlink since it was resolved),
// and canonicalPath keeps p rather than grant where the symlink points.
func canonicalAlias(p, got string) bool {
	return aliasFold(p) == aliasFold(got)
}

// aliasFold lower-cases ASCII, drops the firmlink prefix, and folds each run
// of non-ASCII runes (with the ASCII letter a combining mark follows) to one
// marker, so that NFC "é" and NFD "e"+U+0301 fold alike while "ws" and
// "wsé" do not.
func aliasFold(s string) string {
	if rest, ok := strings.CutPrefix(s, "/System/Volumes/Data/"); ok {
		s = "/" + rest
	}
	const marker = utf8.MaxRune
	out := make([]rune, 0, len(s))
	for _, r := range s {
		if r < utf8.RuneSelf {
			out = append(out, unicode.ToLower(r))
			continue
		}
		if n := len(out); unicode.Is(unicode.Mn, r) && n > 0 && out[n-1] != '/' && out[n-1] != marker {
			out = out[:n-1] // the base letter of a decomposed character
		}
		if n := len(out); n == 0 || out[n-1] != marker {
			out = append(out, marker)
		}
	}
	return string(out)
}

// pathRules lists the path rules for rc plus the files in targets (the
// resolved program WrapCommand starts): the Config's read, write and exec
// paths, each target unless an exec directory already covers it, and the
// "#!" interpreter of each target and of each file on the exec list, which
// the kernel executes in the script's place and Seatbelt checks as
// process-exec too. macOS runs no interpreter script as an interpreter, so
// one level is all there is. Mach-O programs need nothing else executable:
// dyld and the system libraries are in the baseline. Every path is passed
// through canonicalPath.
//
// Interpreters are read from the "#!" line when the rules are made, by
// execgrant.InterpreterOf (which opens with O_NONBLOCK: an exec-listed
// FIFO does not hang), and granted only as execgrant.Grantable allows: an
// executable regular file outside every write path. So a script in a write path,
// which the confined program can rewrite, may name only an interpreter the
// system already has outside its reach. Scripts inside an exec directory get
// none (they cannot be known in advance): grant their interpreter too.
func pathRules(rc *spec.Resolved, targets ...string) []pathRule {
	out, _ := pathRulesWhy(rc, targets...)
	return out
}

// pathNotes is what pathRulesWhy says beside the rules, for the Plan.
type pathNotes struct {
	// refused: the "#!" interpreters not granted and why, one line each.
	refused []string
	// devDir: the xcrun shims' developer directory, when they are granted.
	devDir devDir
	// libRefused: the libraries of granted programs not granted and why.
	libRefused []string
}

// pathRulesWhy is pathRules that also says which "#!" interpreters were
// not granted and why, and what was found of the xcrun shims' developer
// directory (developerDir), which joins the rules when the exec grants
// hold an xcrun shim and it can be granted.
func pathRulesWhy(rc *spec.Resolved, targets ...string) (out []pathRule, notes pathNotes) {
	canon := func(rp spec.Path) spec.Path {
		rp.Resolved = canonicalPath(rp.Resolved)
		return rp
	}
	var writeRoots []string
	for _, rp := range rc.Read {
		out = append(out, pathRule{canon(rp), accessRead, "allowed_read_paths"})
	}
	for _, rp := range rc.Write {
		rp = canon(rp)
		writeRoots = append(writeRoots, rp.Resolved)
		out = append(out, pathRule{rp, accessReadWrite, "allowed_write_paths"})
	}
	for _, rp := range rc.Exec {
		out = append(out, pathRule{canon(rp), accessExec, "allowed_exec_paths"})
	}
	covered := func(p string) bool {
		return slices.ContainsFunc(out, func(d pathRule) bool {
			return d.Access == accessExec && (d.Resolved == p || d.IsDir && spec.Under(p, d.Resolved))
		})
	}
	var files []string // exec files whose "#!" line is read
	for _, d := range out {
		if d.Access == accessExec && !d.IsDir {
			files = append(files, d.Resolved)
		}
	}
	for _, t := range targets {
		t = canonicalPath(t)
		files = append(files, t)
		if !covered(t) {
			out = append(out, pathRule{spec.Path{Given: t, Resolved: t}, accessExec, "WrapCommand target"})
		}
	}
	for _, file := range files {
		in, script := execgrant.InterpreterOf(file)
		if !script {
			continue // Mach-O (or unreadable): dyld is in the baseline
		}
		r, err := execgrant.Grantable(in, writeRoots)
		if err != nil {
			notes.refused = append(notes.refused, file+": "+err.Error())
			continue // not granted: the script cannot run, closed
		}
		if r = canonicalPath(r); covered(r) {
			continue
		}
		out = append(out, pathRule{spec.Path{Given: in, Resolved: r}, accessExec, "interpreter of " + file})
	}
	var execs, execFiles []string
	isDir := map[string]bool{}
	for _, d := range out {
		if d.Access == accessExec {
			execs = append(execs, d.Resolved)
			isDir[d.Resolved] = isDir[d.Resolved] || d.IsDir
			if !d.IsDir {
				execFiles = append(execFiles, d.Resolved)
			}
		}
	}
	libCovered := func(p string) bool {
		return covered(p) || rc.Config.AllowExecWritePaths && writeRootOf(p, writeRoots) != ""
	}
	libs, libRefused := libraryRules(execFiles, writeRoots, libCovered)
	out = append(out, libs...)
	notes.libRefused = libRefused
	if _, _, xcrun := seatbelt.Shims(execs, func(p string) bool { return isDir[p] }); xcrun {
		notes.devDir = developerDir(rc, writeRoots)
		if d := notes.devDir.granted; d != "" {
			out = append(out, pathRule{spec.Path{Given: d, Resolved: d, IsDir: true}, accessDeveloper, "developer directory of the xcrun shims"})
		}
	}
	return out, notes
}

// seatbeltPolicy is the Seatbelt policy for rc with the path rules paths (from
// pathRules). Directory or file comes from ResolvedPath.IsDir, so the
// policy depends on no further file system state. The camera and the
// microphone are allowed only when Config.AllowCamera and
// Config.AllowMicrophone say so; trustd is left out with
// Config.NoTLSTrustService; the shims' rules follow the exec grants.
//
// Git protection follows Config.NoGitProtection, executable write paths
// Config.AllowExecWritePaths, and Python's semaphores
// Config.AllowSharedMemory. A Terminal (Run's) is always the program's
// controlling terminal: Run makes it so (setsid, TIOCSCTTY).
func seatbeltPolicy(rc *spec.Resolved, paths []pathRule) seatbelt.Policy {
	dirs := make(map[string]bool, len(paths))
	p := seatbelt.Policy{
		AllowSpawn:          rc.Config.AllowProcessSpawn,
		AllowUnixSockets:    rc.Config.AllowUnixSockets,
		Camera:              rc.Config.AllowCamera,
		Microphone:          rc.Config.AllowMicrophone,
		NoTrustd:            rc.Config.NoTLSTrustService,
		Terminal:            rc.Terminal,
		ControllingTerminal: rc.Terminal != "",
		ExecWritePaths:      rc.Config.AllowExecWritePaths,
		GitProtection:       !rc.Config.NoGitProtection,
		PythonSemaphores:    rc.Config.AllowSharedMemory,
		IsDir:               func(path string) bool { return dirs[path] },
	}
	for _, d := range paths {
		dirs[d.Resolved] = dirs[d.Resolved] || d.IsDir
		switch d.Access {
		case accessRead:
			p.ReadPaths = append(p.ReadPaths, d.Resolved)
		case accessReadWrite:
			p.WritePaths = append(p.WritePaths, d.Resolved)
		case accessExec:
			p.ExecPaths = append(p.ExecPaths, d.Resolved)
		case accessDeveloper:
			p.DeveloperDir = d.Resolved
		case accessLibrary:
			p.LibraryPaths = append(p.LibraryPaths, d.Resolved)
		}
	}
	p.ShellShim, p.PerlShim, p.XcrunShim = seatbelt.Shims(p.ExecPaths, p.IsDir)
	if p.GitProtection {
		p.GitDirs, _ = gitDirsAt(p.WritePaths) // the plan names those left out
	}
	for _, ep := range rc.Connect {
		p.TCPConnect = append(p.TCPConnect, seatbelt.Endpoint{Host: ep.Host, Port: ep.Port, AnyPort: ep.AnyPort})
	}
	for _, port := range rc.Bind {
		if port != 0 { // see Plan: an ephemeral port cannot be expressed
			p.TCPBind = append(p.TCPBind, port)
		}
	}
	return p
}

// profile generates the profile for rc and paths. A path Seatbelt
// cannot use (on macOS only a resolved path holding a control character, or
// one longer than PATH_MAX; elsewhere also a path under /tmp, /var or /etc,
// which are symlinks on macOS) is a *ConfigError naming the field, or an
// error naming the command for a WrapCommand target.
func profile(rc *spec.Resolved, paths []pathRule) (seatbelt.Profile, error) {
	prof, err := seatbelt.Generate(seatbeltPolicy(rc, paths))
	if err == nil {
		return prof, nil
	}
	for _, d := range paths {
		if _, perr := seatbelt.Generate(seatbelt.Policy{ReadPaths: []string{d.Resolved}}); perr != nil {
			const reason = "cannot be used in a macOS Seatbelt profile"
			switch d.Source {
			case "allowed_read_paths", "allowed_write_paths", "allowed_exec_paths":
				return seatbelt.Profile{}, &spec.ConfigError{Field: d.Source, Value: d.Given, Reason: reason, Err: perr}
			}
			return seatbelt.Profile{}, fmt.Errorf("sandbox: %s %q %s: %w", d.Source, d.Resolved, reason, perr)
		}
	}
	return seatbelt.Profile{}, fmt.Errorf("sandbox: seatbelt profile: %w", err)
}

// SeatbeltProfile is sandbox.SeatbeltProfile: the Seatbelt profile that cfg
// becomes, as WrapCommand passes it to /usr/bin/sandbox-exec. It returns the
// SBPL text, which starts "(version 1)\n(deny default)" and holds no path
// from cfg, and the parameters the text refers to as (param "NAME"), each as
// "NAME=VALUE" with a path as VALUE (sandbox-exec's -D arguments).
//
// It is pure apart from resolving cfg's paths (spec.Resolve, on this
// machine), and works on every OS: on another OS a path under /tmp, /var or
// /etc (symlinks on macOS, where a rule for them would never match) is
// refused with an error saying so. The exec allowlist is cfg's alone:
// WrapCommand also adds the program it starts (and that program's "#!"
// interpreter). A refused Config is a *spec.ConfigError
// (errors.Is(err, spec.ErrInvalidConfig)). cfg.Strict is not considered:
// [Plan] reports what is not enforced.
func SeatbeltProfile(cfg spec.Config) (text string, params []string, err error) {
	rc, err := spec.Resolve(cfg)
	if err != nil {
		return "", nil, err
	}
	prof, err := profile(rc, pathRules(rc))
	if err != nil {
		return "", nil, err
	}
	for _, p := range prof.Params {
		params = append(params, p.Name+"="+p.Value)
	}
	return prof.Text, params, nil
}
