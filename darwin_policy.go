package sandbox

// The macOS policy as data: which Seatbelt profile a Config becomes. The Plan
// of it is in darwin_plan.go, the command rewrite in darwin_wrap.go, the
// canary's targets in darwin_canary_targets.go. Nothing here runs
// sandbox-exec or depends on macOS (canonicalPath is the identity elsewhere),
// so it compiles and is tested on every OS; sandbox_darwin.go and
// canary_darwin.go use it.

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/openparallax/sandbox/internal/execgrant"
	"github.com/openparallax/sandbox/internal/seatbelt"
)

// Path access names in [PathRule.Access] on macOS.
const (
	darwinRead      = "read"       // file-read*: read, list, stat
	darwinReadWrite = "read-write" // file-read* file-write*
	darwinExec      = "exec"       // process-exec*, file-read*, file-map-executable
)

const (
	// darwinHostLimit is Probe's note on what Seatbelt cannot filter.
	darwinHostLimit = `Seatbelt network rules take only "localhost" or "*" as host: ` +
		`a TCP endpoint with any other host is enforced by port only (as *:PORT)`
	// darwinNoApplySelf explains ApplySelf's error, in Probe and Plan too.
	darwinNoApplySelf = "ApplySelf is not available on macOS: " +
		"start the process with WrapCommand (sandbox-exec) and verify it with VerifyCanaryFor"
	// darwinUnavailable is the Plan's reason when sandbox-exec is missing.
	darwinUnavailable = seatbelt.SandboxExecPath + " is missing or not executable"
	// darwinHostHint is the remedy for a host Seatbelt cannot enforce.
	darwinHostHint = `write "*:PORT" to state what is enforced, or "localhost:PORT" for a local service`
)

// darwinSystemPath is a path every profile grants, whatever the Config
// (internal/seatbelt's baseline).
type darwinSystemPath struct {
	Path, Access, Reason string
	// Exact: the path itself only (its names or its metadata), nothing
	// below it.
	Exact bool
}

// darwinBaseline mirrors the file rules of internal/seatbelt's baseline, for
// [Plan.Paths]; a test holds it to the generated profile in both directions.
var darwinBaseline = []darwinSystemPath{
	{Path: "/usr/lib", Access: "read, map-executable", Reason: "system dylibs and dyld"},
	{Path: "/System/Library/Frameworks", Access: "read, map-executable", Reason: "public frameworks"},
	{Path: "/System/Library/PrivateFrameworks", Access: "read, map-executable", Reason: "private frameworks loaded by libSystem"},
	{Path: "/System/Library/SubFrameworks", Access: "read, map-executable", Reason: "framework content split out of Frameworks"},
	{Path: "/System/Library/dyld", Access: "read, map-executable", Reason: "dyld shared cache (macOS 11 and 12)"},
	{Path: "/System/Volumes/Preboot/Cryptexes/OS", Access: "read, map-executable", Reason: "dyld shared cache (macOS 13 and later)"},
	{Path: "/System/Cryptexes/OS", Access: "read, map-executable", Reason: "the OS cryptex through its mount point"},
	{Path: "/", Access: "read (the names in / and its attributes, nothing below)", Reason: "dyld on macOS 26 reads the root directory", Exact: true},
	{Path: "/usr/share", Access: darwinRead, Reason: "read-only system data: locale, terminfo, ICU, file(1)'s magic"},
	{Path: "/System/Library/Perl", Access: "read, map-executable", Reason: "the system Perl's modules"},
	{Path: "/Library/Apple/usr/libexec/oah", Access: "read, map-executable", Reason: "Rosetta 2 runtime (x86_64 programs on Apple silicon)"},
	{Path: "/usr/libexec/rosetta", Access: "read, map-executable", Reason: "Rosetta 2 runtime (x86_64 programs on Apple silicon)"},
	{Path: "/private/var/db/oah", Access: "read, map-executable", Reason: "Rosetta 2 translation cache"},
	{Path: "/System/Library/CoreServices/SystemVersion.plist", Access: darwinRead, Reason: "OS version"},
	{Path: "/System/Library/CoreServices/SystemVersionCompat.plist", Access: darwinRead, Reason: "OS version for programs built for 10.x"},
	{Path: "/etc", Access: "metadata", Reason: "stat of the root symlink", Exact: true},
	{Path: "/tmp", Access: "metadata", Reason: "stat of the root symlink", Exact: true},
	{Path: "/var", Access: "metadata", Reason: "stat of the root symlink", Exact: true},
	{Path: "/private/etc/localtime", Access: darwinRead, Reason: "local time zone"},
	{Path: "/private/var/db/timezone", Access: darwinRead, Reason: "time zone database"},
	{Path: "/dev/null", Access: "read, write-data", Reason: "the null device"},
	{Path: "/dev/zero", Access: darwinRead, Reason: "zero source"},
	{Path: "/dev/random", Access: darwinRead, Reason: "randomness"},
	{Path: "/dev/urandom", Access: darwinRead, Reason: "randomness"},
	{Path: "/dev/tty", Access: "read, write-data", Reason: "the controlling terminal"},
	{Path: "/dev/stdin", Access: "read, write-data", Reason: "the process's own descriptor 0"},
	{Path: "/dev/stdout", Access: "read, write-data", Reason: "the process's own descriptor 1"},
	{Path: "/dev/stderr", Access: "read, write-data", Reason: "the process's own descriptor 2"},
	{Path: "/dev/fd", Access: "read, write-data", Reason: "the process's own descriptors by number"},
}

// darwinShimPaths mirror the fixed rules internal/seatbelt adds for each
// shim the exec grants hold, for [Plan.Paths].
var darwinShimPaths = map[string][]darwinSystemPath{
	"sh": {
		{Path: "/private/var/select/sh", Access: darwinRead, Reason: "/bin/sh reads which shell it is"},
		{Path: "/bin/bash", Access: darwinExec, Reason: "a shell /bin/sh re-executes"},
		{Path: "/bin/dash", Access: darwinExec, Reason: "a shell /bin/sh re-executes"},
		{Path: "/bin/zsh", Access: darwinExec, Reason: "a shell /bin/sh re-executes"},
	},
	"perl": {
		{Path: "/usr/bin/perl5.*", Access: darwinExec, Reason: "the versioned perl /usr/bin/perl executes"},
		{Path: "/Library/Perl", Access: "read, map-executable", Reason: "site modules, early in the system perl's @INC"},
	},
	"xcrun": {
		{Path: "/private/var/db/xcode_select_link", Access: darwinRead, Reason: "the active developer directory, read by the xcrun shims"},
		{Path: "/usr/bin/xcrun", Access: darwinExec, Reason: "xcrun, which the shims may execute"},
		{Path: "/Library/Developer/CommandLineTools", Access: darwinExec, Reason: "the tools the xcrun shims (git, python3, make, clang, ...) execute"},
	},
}

// Paths the profile grants only when a TCP endpoint needs them.
const (
	darwinResolverSocket = "/private/var/run/mDNSResponder"
	darwinHostsFile      = "/private/etc/hosts"
	darwinTLSDir         = "/private/etc/ssl"
	darwinTrustd         = "com.apple.trustd.agent"
)

// darwinPath is one path rule of a macOS profile.
type darwinPath struct {
	ResolvedPath
	Access string // darwinRead, darwinReadWrite or darwinExec
	Source string // Config field, "WrapCommand target" or "interpreter of …"
}

// canonicalPath returns the path the kernel reports for p, which is what
// Seatbelt matches: on macOS, p opened (O_EVTONLY, never following a symlink
// at the last step, never blocking) and asked with fcntl(F_GETPATH), which
// normalises case, Unicode form and firmlink aliases that EvalSymlinks
// keeps. Elsewhere, and when p cannot be opened, p itself. Set by
// sandbox_darwin.go.
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

// darwinPathRules lists the path rules for rc plus the files in targets (the
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
func darwinPathRules(rc *resolvedConfig, targets ...string) []darwinPath {
	out, _ := darwinPathRulesWhy(rc, targets...)
	return out
}

// darwinPathRulesWhy is darwinPathRules that also says, one line each, which
// "#!" interpreters were not granted and why (for the Plan).
func darwinPathRulesWhy(rc *resolvedConfig, targets ...string) (out []darwinPath, refused []string) {
	canon := func(rp ResolvedPath) ResolvedPath {
		rp.Resolved = canonicalPath(rp.Resolved)
		return rp
	}
	var writeRoots []string
	for _, rp := range rc.Read {
		out = append(out, darwinPath{canon(rp), darwinRead, "allowed_read_paths"})
	}
	for _, rp := range rc.Write {
		rp = canon(rp)
		writeRoots = append(writeRoots, rp.Resolved)
		out = append(out, darwinPath{rp, darwinReadWrite, "allowed_write_paths"})
	}
	for _, rp := range rc.Exec {
		out = append(out, darwinPath{canon(rp), darwinExec, "allowed_exec_paths"})
	}
	covered := func(p string) bool {
		return slices.ContainsFunc(out, func(d darwinPath) bool {
			return d.Access == darwinExec && (d.Resolved == p || d.IsDir && isUnder(p, d.Resolved))
		})
	}
	var files []string // exec files whose "#!" line is read
	for _, d := range out {
		if d.Access == darwinExec && !d.IsDir {
			files = append(files, d.Resolved)
		}
	}
	for _, t := range targets {
		t = canonicalPath(t)
		files = append(files, t)
		if !covered(t) {
			out = append(out, darwinPath{ResolvedPath{Given: t, Resolved: t}, darwinExec, "WrapCommand target"})
		}
	}
	for _, file := range files {
		in, script := execgrant.InterpreterOf(file)
		if !script {
			continue // Mach-O (or unreadable): dyld is in the baseline
		}
		r, err := execgrant.Grantable(in, writeRoots)
		if err != nil {
			refused = append(refused, file+": "+err.Error())
			continue // not granted: the script cannot run, closed
		}
		if r = canonicalPath(r); covered(r) {
			continue
		}
		out = append(out, darwinPath{ResolvedPath{Given: in, Resolved: r}, darwinExec, "interpreter of " + file})
	}
	return out, refused
}

// darwinPolicy is the Seatbelt policy for rc with the path rules paths (from
// darwinPathRules). Directory or file comes from ResolvedPath.IsDir, so the
// policy depends on no further file system state. The camera and the
// microphone are allowed only when Config.AllowCamera and
// Config.AllowMicrophone say so; trustd is left out with
// Config.NoTLSTrustService; the shims' rules follow the exec grants.
func darwinPolicy(rc *resolvedConfig, paths []darwinPath) seatbelt.Policy {
	dirs := make(map[string]bool, len(paths))
	p := seatbelt.Policy{
		AllowSpawn:       rc.Config.AllowProcessSpawn,
		AllowUnixSockets: rc.Config.AllowUnixSockets,
		Camera:           rc.Config.AllowCamera,
		Microphone:       rc.Config.AllowMicrophone,
		NoTrustd:         rc.Config.NoTLSTrustService,
		Terminal:         rc.Terminal,
		IsDir:            func(path string) bool { return dirs[path] },
	}
	for _, d := range paths {
		dirs[d.Resolved] = dirs[d.Resolved] || d.IsDir
		switch d.Access {
		case darwinRead:
			p.ReadPaths = append(p.ReadPaths, d.Resolved)
		case darwinReadWrite:
			p.WritePaths = append(p.WritePaths, d.Resolved)
		case darwinExec:
			p.ExecPaths = append(p.ExecPaths, d.Resolved)
		}
	}
	p.ShellShim, p.PerlShim, p.XcrunShim = seatbelt.Shims(p.ExecPaths, p.IsDir)
	for _, ep := range rc.Connect {
		p.TCPConnect = append(p.TCPConnect, seatbelt.Endpoint{Host: ep.Host, Port: ep.Port, AnyPort: ep.AnyPort})
	}
	for _, port := range rc.Bind {
		if port != 0 { // see darwinPlan: an ephemeral port cannot be expressed
			p.TCPBind = append(p.TCPBind, port)
		}
	}
	return p
}

// darwinProfile generates the profile for rc and paths. A path Seatbelt
// cannot use (on macOS only a resolved path holding a control character, or
// one longer than PATH_MAX; elsewhere also a path under /tmp, /var or /etc,
// which are symlinks on macOS) is a *ConfigError naming the field, or an
// error naming the command for a WrapCommand target.
func darwinProfile(rc *resolvedConfig, paths []darwinPath) (seatbelt.Profile, error) {
	prof, err := seatbelt.Generate(darwinPolicy(rc, paths))
	if err == nil {
		return prof, nil
	}
	for _, d := range paths {
		if _, perr := seatbelt.Generate(seatbelt.Policy{ReadPaths: []string{d.Resolved}}); perr != nil {
			const reason = "cannot be used in a macOS Seatbelt profile"
			switch d.Source {
			case "allowed_read_paths", "allowed_write_paths", "allowed_exec_paths":
				return seatbelt.Profile{}, &ConfigError{Field: d.Source, Value: d.Given, Reason: reason, Err: perr}
			}
			return seatbelt.Profile{}, fmt.Errorf("sandbox: %s %q %s: %w", d.Source, d.Resolved, reason, perr)
		}
	}
	return seatbelt.Profile{}, fmt.Errorf("sandbox: seatbelt profile: %w", err)
}

// SeatbeltProfile returns the macOS Seatbelt profile that cfg becomes, as
// WrapCommand passes it to /usr/bin/sandbox-exec: the SBPL text, which starts
// "(version 1)\n(deny default)" and holds no path from cfg, and the
// parameters the text refers to as (param "NAME"), each as "NAME=VALUE" with
// a path as VALUE (sandbox-exec's -D arguments).
//
// It is pure apart from resolving cfg's paths, and works on every OS, so a
// tool can show the macOS profile anywhere. The paths are resolved on this
// machine: on macOS /tmp/x becomes /private/tmp/x, as Seatbelt needs; on
// another OS a path under /tmp, /var or /etc (symlinks on macOS, where a rule
// for them would never match) is refused with an error saying so.
//
// The exec allowlist is cfg's alone: WrapCommand also adds the program it
// starts (and that program's "#!" interpreter) as further exec paths. A
// refused Config is a *ConfigError (errors.Is(err, ErrInvalidConfig)).
// cfg.Strict is not considered: what is not enforced is reported by
// [PlanFor] on macOS.
func SeatbeltProfile(cfg Config) (text string, params []string, err error) {
	rc, err := resolve(cfg)
	if err != nil {
		return "", nil, err
	}
	prof, err := darwinProfile(rc, darwinPathRules(rc))
	if err != nil {
		return "", nil, err
	}
	for _, p := range prof.Params {
		params = append(params, p.Name+"="+p.Value)
	}
	return prof.Text, params, nil
}
