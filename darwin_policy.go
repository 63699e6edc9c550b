package sandbox

// The macOS policy as data: which Seatbelt profile a Config becomes, what of
// it is enforced, and how WrapCommand rewrites a command to run under it.
// Nothing here runs sandbox-exec or depends on macOS, so it compiles and is
// tested on every OS; sandbox_darwin.go and canary_darwin.go use it.

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/openparallax/sandbox/internal/seatbelt"
)

// Path access names in [PathRule.Access] on macOS.
const (
	darwinRead      = "read"       // file-read*: read, list, stat
	darwinReadWrite = "read-write" // file-read* file-write*
	darwinExec      = "exec"       // process-exec, file-read*, file-map-executable
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
}

// darwinBaseline mirrors the file rules of internal/seatbelt's baseline, for
// [Plan.Paths]; a test holds it to the generated profile in both directions.
var darwinBaseline = []darwinSystemPath{
	{"/usr/lib", "read, map-executable", "system dylibs and dyld"},
	{"/System/Library/Frameworks", "read, map-executable", "public frameworks"},
	{"/System/Library/PrivateFrameworks", "read, map-executable", "private frameworks loaded by libSystem"},
	{"/System/Library/SubFrameworks", "read, map-executable", "framework content split out of Frameworks"},
	{"/System/Library/dyld", "read, map-executable", "dyld shared cache (macOS 11 and 12)"},
	{"/System/Volumes/Preboot/Cryptexes/OS", "read, map-executable", "dyld shared cache (macOS 13 and later)"},
	{"/System/Cryptexes/OS", "read, map-executable", "the OS cryptex through its mount point"},
	{"/System/Library/CoreServices/SystemVersion.plist", darwinRead, "OS version"},
	{"/private/etc/localtime", darwinRead, "local time zone"},
	{"/private/var/db/timezone", darwinRead, "time zone database"},
	{"/dev/null", "read, write-data", "the null device"},
	{"/dev/zero", darwinRead, "zero source"},
	{"/dev/random", darwinRead, "randomness"},
	{"/dev/urandom", darwinRead, "randomness"},
	{"/dev/tty", "read, write-data", "the controlling terminal"},
}

// Paths the profile grants only when a TCP endpoint needs them.
const (
	darwinResolverSocket = "/private/var/run/mDNSResponder"
	darwinTLSDir         = "/private/etc/ssl"
	darwinTrustd         = "com.apple.trustd.agent"
)

// darwinPath is one path rule of a macOS profile.
type darwinPath struct {
	ResolvedPath
	Access string // darwinRead, darwinReadWrite or darwinExec
	Source string // Config field, "WrapCommand target" or "interpreter of …"
}

// darwinPathRules lists the path rules for rc plus the files in targets (the
// resolved program WrapCommand starts): the Config's read, write and exec
// paths, each target unless an exec directory already covers it, and the
// "#!" interpreter of each target and of each file on the exec list, which
// the kernel executes in the script's place and Seatbelt checks as
// process-exec too. macOS runs no interpreter script as an interpreter, so
// one level is all there is. Mach-O programs need nothing else executable:
// dyld and the system libraries are in the baseline.
//
// Interpreters are read from the "#!" line when the rules are made. Scripts
// inside an exec directory get none (they cannot be known in advance): grant
// their interpreter too. A script the confined program can write (one in a
// write path) chooses which interpreter is granted; whatever it picks runs
// under the same profile.
func darwinPathRules(rc *resolvedConfig, targets ...string) []darwinPath {
	var out []darwinPath
	for _, rp := range rc.read {
		out = append(out, darwinPath{rp, darwinRead, "allowed_read_paths"})
	}
	for _, rp := range rc.write {
		out = append(out, darwinPath{rp, darwinReadWrite, "allowed_write_paths"})
	}
	for _, rp := range rc.exec {
		out = append(out, darwinPath{rp, darwinExec, "allowed_exec_paths"})
	}
	covered := func(p string) bool {
		return slices.ContainsFunc(out, func(d darwinPath) bool {
			return d.Access == darwinExec && (d.Resolved == p || d.IsDir && isUnder(p, d.Resolved))
		})
	}
	var files []string // exec files whose "#!" line is read
	for _, rp := range rc.exec {
		if !rp.IsDir {
			files = append(files, rp.Resolved)
		}
	}
	for _, t := range targets {
		files = append(files, t)
		if !covered(t) {
			out = append(out, darwinPath{ResolvedPath{Given: t, Resolved: t}, darwinExec, "WrapCommand target"})
		}
	}
	for _, file := range files {
		in := shebangInterpreter(file)
		if in == "" {
			continue
		}
		r, err := filepath.EvalSymlinks(in)
		if err != nil {
			continue // the script cannot run: exec fails, closed
		}
		if fi, err := os.Stat(r); err != nil || !fi.Mode().IsRegular() || covered(r) {
			continue
		}
		out = append(out, darwinPath{ResolvedPath{Given: in, Resolved: r}, darwinExec, "interpreter of " + file})
	}
	return out
}

// isUnder reports whether p is root or inside it (byte-wise).
func isUnder(p, root string) bool {
	return p == root || strings.HasPrefix(p, strings.TrimSuffix(root, "/")+"/")
}

// shebangInterpreter is the absolute interpreter path of a "#!" script, or
// "" for anything else.
func shebangInterpreter(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(f, 512).ReadSlice('\n')
	if err != nil && len(line) == 0 {
		return ""
	}
	s, ok := strings.CutPrefix(string(line), "#!")
	if !ok {
		return ""
	}
	fields := strings.Fields(s)
	if len(fields) == 0 || !filepath.IsAbs(fields[0]) {
		return ""
	}
	return filepath.Clean(fields[0])
}

// darwinPolicy is the Seatbelt policy for rc with the path rules paths (from
// darwinPathRules). Directory or file comes from ResolvedPath.IsDir, so the
// policy depends on no further file system state. The camera and the
// microphone are allowed only when Config.AllowCamera and
// Config.AllowMicrophone say so.
func darwinPolicy(rc *resolvedConfig, paths []darwinPath) seatbelt.Policy {
	dirs := make(map[string]bool, len(paths))
	p := seatbelt.Policy{
		AllowSpawn:       rc.cfg.AllowProcessSpawn,
		AllowUnixSockets: rc.cfg.AllowUnixSockets,
		Camera:           rc.cfg.AllowCamera,
		Microphone:       rc.cfg.AllowMicrophone,
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
	for _, ep := range rc.connect {
		p.TCPConnect = append(p.TCPConnect, seatbelt.Endpoint{Host: ep.Host, Port: ep.Port})
	}
	for _, port := range rc.bind {
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

// darwinConnect is one TCP connect rule of a profile, with the endpoints of
// the Config it serves.
type darwinConnect struct {
	addr  string // "localhost:PORT" or "*:PORT", as in the profile
	asked []string
}

// darwinConnects groups rc's endpoints by the Seatbelt rule each becomes,
// exactly as internal/seatbelt maps them: a loopback host to localhost,
// everything else to "*". It also says whether the profile lets the process
// reach the name resolver (a host that is a name or "*") and trustd (a
// non-loopback endpoint).
func darwinConnects(rc *resolvedConfig) (rules []darwinConnect, resolver, tls bool) {
	for _, ep := range rc.connect {
		host := "*"
		if ep.Loopback() {
			host = "localhost"
		} else {
			tls = true
		}
		if _, err := netip.ParseAddr(ep.Host); err != nil {
			resolver = true // "*", localhost or a DNS name: getaddrinfo asks mDNSResponder
		}
		addr := host + ":" + strconv.Itoa(int(ep.Port))
		i := slices.IndexFunc(rules, func(c darwinConnect) bool { return c.addr == addr })
		if i < 0 {
			rules = append(rules, darwinConnect{addr: addr})
			i = len(rules) - 1
		}
		rules[i].asked = append(rules[i].asked, ep.String())
	}
	return rules, resolver, tls
}

// darwinPlan reports what the profile for rc enforces, with available saying
// whether /usr/bin/sandbox-exec is there. It is the Plan of WrapCommand;
// ApplySelf is never available on macOS (see [darwinApplySelfError]).
func darwinPlan(rc *resolvedConfig, available bool) Plan {
	cfg := rc.cfg
	plan := Plan{Platform: "darwin", Mechanism: ModeSandboxExec, Available: available, Reason: darwinNoApplySelf}
	if !available {
		plan.Reason = darwinUnavailable
	}
	f := func(feature string, enforced bool, detail, hint string) {
		if !available {
			enforced, hint = false, ""
			detail = "sandbox unavailable: " + darwinUnavailable
		}
		plan.Features = append(plan.Features, Enforcement{Feature: feature, Enforced: enforced, Detail: detail, Hint: hint})
	}
	paths := darwinPathRules(rc)
	rules, resolver, tls := darwinConnects(rc)

	if _, err := darwinProfile(rc, paths); err != nil {
		f(FeatureFilesystem, false, "no profile can be made for this Config: "+err.Error()+"; WrapCommand refuses it", "")
	} else {
		f(FeatureFilesystem, true, "Seatbelt (deny default): read only the granted paths and the system baseline, "+
			"write only inside write paths; stat of the directories above each granted path", "")
	}
	f(FeatureTruncate, true, "Seatbelt: truncate needs file-write-data, granted only inside write paths", "")
	f(FeatureIoctlDev, true, "Seatbelt: file-ioctl is granted nowhere, so ioctl on device files is refused, on an inherited terminal too "+
		"(TIOCSTI; also tcsetattr, so no raw mode)", "")
	execDetail := "Seatbelt: process-exec only of the command WrapCommand starts and its \"#!\" interpreter (the exec allowlist is empty)"
	if len(rc.exec) > 0 {
		execDetail = "Seatbelt: process-exec only of the exec allowlist, the command WrapCommand starts and their \"#!\" interpreters"
	}
	f(FeatureExec, true, execDetail, "")

	if len(rules) == 0 {
		f(FeatureTCPConnect, true, "Seatbelt: no TCP granted: every outgoing connection is denied", "")
	} else {
		addrs := make([]string, len(rules))
		for i, r := range rules {
			addrs[i] = r.addr
		}
		f(FeatureTCPConnect, true, "Seatbelt: connect only to "+strings.Join(addrs, ", "), "")
	}
	var loopback []string
	for _, ep := range rc.connect {
		if ep.Loopback() {
			loopback = append(loopback, ep.String())
		}
	}
	if len(loopback) > 0 {
		f(FeatureTCPHost, true, "Seatbelt: "+strings.Join(loopback, ", ")+" limited to Seatbelt's localhost (127.0.0.1 and ::1)", "")
	}
	// The lines internal/seatbelt reports for hosts it cannot express.
	hostOnly := seatbelt.Policy{}
	for _, ep := range rc.connect {
		hostOnly.TCPConnect = append(hostOnly.TCPConnect, seatbelt.Endpoint{Host: ep.Host, Port: ep.Port})
	}
	if prof, err := seatbelt.Generate(hostOnly); err == nil {
		for _, line := range prof.NotEnforced {
			f(FeatureTCPHost, false, line, darwinHostHint)
		}
	}

	var bindPorts []string
	for _, p := range rc.bind {
		if p != 0 {
			bindPorts = append(bindPorts, strconv.Itoa(int(p)))
		}
	}
	bindDetail := "Seatbelt: no bind granted: listening on any port is denied"
	if len(bindPorts) > 0 {
		bindDetail = "Seatbelt: bind and accept only on ports " + strings.Join(bindPorts, ", ") +
			", on every local address (Seatbelt cannot restrict who connects)"
	}
	if slices.Contains(rc.bind, 0) {
		bindDetail += "; port 0 (a port the kernel picks) cannot be expressed in Seatbelt and is not granted: binding it fails"
	}
	f(FeatureTCPBind, true, bindDetail, "")
	if cfg.AllowUDP {
		f(FeatureUDP, true, "Seatbelt: UDP is denied: allow_udp cannot be granted by this profile and is ignored (name resolution goes through mDNSResponder)", "")
	} else {
		f(FeatureUDP, true, "Seatbelt: UDP denied", "")
	}
	switch {
	case cfg.AllowUnixSockets:
		f(FeatureUnixSockets, true, "Seatbelt: AF_UNIX sockets; bind and connect only to socket files inside write paths", "")
	case resolver:
		f(FeatureUnixSockets, true, "Seatbelt: no socket file may be bound or connected to, except mDNSResponder's for name resolution", "")
	default:
		f(FeatureUnixSockets, true, "Seatbelt: AF_UNIX sockets denied: no socket file may be bound or connected to", "")
	}
	if cfg.AllowProcessSpawn {
		f(FeatureScopeSignal, true, "Seatbelt: signals only to itself and processes of the same sandbox; process-info only of itself", "")
		f(FeatureSpawn, true, "granted: children inherit the sandbox and its exec allowlist (no limit on their number)", "")
	} else {
		f(FeatureScopeSignal, true, "Seatbelt: signals only to itself; process-info only of itself", "")
		f(FeatureSpawn, true, "Seatbelt: process-fork denied", "")
	}
	f(FeatureSyscalls, true, "no syscall filter: Seatbelt mediates operations instead, and (deny default) refuses every one "+
		"the profile does not list (mach services, IOKit, sysctl writes, other processes)", "")

	for _, b := range darwinBaseline {
		plan.Paths = append(plan.Paths, PathRule{Path: b.Path, Access: b.Access, Source: "default: " + b.Reason})
	}
	if tls {
		plan.Paths = append(plan.Paths, PathRule{Path: darwinTLSDir, Access: darwinRead, Source: "default: CA certificates for non-loopback TCP connect"})
	}
	for _, d := range paths {
		plan.Paths = append(plan.Paths, PathRule{Path: d.Resolved, Access: d.Access, Source: d.Source})
	}

	for _, r := range rules {
		line := "tcp connect " + r.addr
		if len(r.asked) > 1 || r.asked[0] != r.addr {
			line += " (for " + strings.Join(r.asked, ", ") + ")"
		}
		plan.Network = append(plan.Network, line)
	}
	for _, p := range bindPorts {
		plan.Network = append(plan.Network, "tcp bind and accept *:"+p+" (every local address)")
	}
	if resolver {
		plan.Network = append(plan.Network, "unix connect "+darwinResolverSocket+" (name resolution)")
	}
	if tls {
		plan.Network = append(plan.Network, "mach-lookup "+darwinTrustd+" (TLS certificate evaluation)")
	}
	if cfg.AllowUnixSockets {
		for _, rp := range rc.write {
			plan.Network = append(plan.Network, "unix bind and connect inside "+rp.Resolved)
		}
	}
	if cfg.AllowCamera {
		f(FeatureCamera, true, "Seatbelt: (allow device-camera)", "")
	}
	if cfg.AllowMicrophone {
		f(FeatureMicrophone, true, "Seatbelt: (allow device-microphone)", "")
	}
	plan.Features = append(plan.Features, layerFeatures(rc, false)...)
	return plan
}

// darwinCommand rewrites cmd to run its program under the profile for rc
// through /usr/bin/sandbox-exec: cmd.Path becomes seatbelt.SandboxExecPath and
// cmd.Args become
//
//	sandbox-exec -p PROFILE -D NAME=VALUE … -- TARGET ARGS…
//
// where TARGET is cmd.Path made absolute (relative to cmd.Dir) with symlinks
// resolved, and ARGS are cmd.Args[1:] verbatim. TARGET (and its "#!"
// interpreter) joins the profile's exec allowlist. Nothing else in cmd is
// touched. On any error cmd is left as it was. Whether sandbox-exec exists is
// the caller's question (wrapDarwinCommand); Strict is checked here.
func darwinCommand(cmd *exec.Cmd, rc *resolvedConfig) error {
	if cmd == nil {
		return errors.New("sandbox: WrapCommand: nil *exec.Cmd")
	}
	if cmd.Process != nil {
		return errors.New("sandbox: WrapCommand: command already started")
	}
	if cmd.Err != nil {
		return fmt.Errorf("sandbox: WrapCommand: %w", cmd.Err)
	}
	if rc.cfg.Strict {
		if err := darwinPlan(rc, true).strictError(); err != nil {
			return err
		}
	}
	target, err := darwinTarget(cmd)
	if err != nil {
		return err
	}
	prof, err := darwinProfile(rc, darwinPathRules(rc, target))
	if err != nil {
		return err
	}
	var args []string
	if len(cmd.Args) > 1 {
		args = cmd.Args[1:]
	}
	argv := append([]string{seatbelt.SandboxExecPath}, prof.Args(target, args...)...)
	cmd.Path, cmd.Args = seatbelt.SandboxExecPath, argv
	return nil
}

// darwinTarget resolves the program cmd would run: cmd.Path, relative to
// cmd.Dir when relative (as exec.Cmd does), absolute, symlinks resolved. It
// must be an executable regular file, and not sandbox-exec itself (a command
// wrapped twice: sandbox-exec cannot start inside a sandbox).
func darwinTarget(cmd *exec.Cmd) (string, error) {
	p := cmd.Path
	if p == "" {
		return "", errors.New("sandbox: WrapCommand: cmd.Path is empty")
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(cmd.Dir, p)
	}
	p, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("sandbox: WrapCommand: %w", err)
	}
	resolved, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("sandbox: WrapCommand: program: %w", err)
	}
	fi, err := os.Stat(resolved)
	if err != nil {
		return "", fmt.Errorf("sandbox: WrapCommand: program: %w", err)
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return "", &fs.PathError{Op: "WrapCommand", Path: resolved, Err: errors.New("not an executable regular file")}
	}
	if resolved == seatbelt.SandboxExecPath {
		return "", errors.New("sandbox: WrapCommand: the command already runs " + seatbelt.SandboxExecPath +
			" (wrapped twice?); sandbox-exec cannot start inside a sandbox")
	}
	return resolved, nil
}

// wrapDarwinCommand is WrapCommand on macOS: cfg is validated first
// (*ConfigError), then sandboxExec (the result of checkSandboxExec) must be
// nil (ErrUnavailable), then cmd is rewritten by darwinCommand. cmd is left
// as it was on any error.
func wrapDarwinCommand(cmd *exec.Cmd, cfg Config, sandboxExec error) error {
	rc, err := resolve(cfg)
	if err != nil {
		return err
	}
	if sandboxExec != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, sandboxExec)
	}
	return darwinCommand(cmd, rc)
}

// checkSandboxExec reports why path is not a usable sandbox-exec: missing,
// not a regular file, or not executable. It only stats the file.
func checkSandboxExec(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("%s not found: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", path)
	}
	if fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%s is not executable", path)
	}
	return nil
}

// darwinStatus is Probe on macOS, given checkSandboxExec's answer.
func darwinStatus(sandboxExec error) Status {
	if sandboxExec != nil {
		return Status{Mode: ModeSandboxExec, Reason: sandboxExec.Error() +
			": sandbox-exec ships with every macOS release; nothing can be sandboxed without it"}
	}
	return Status{Active: true, Mode: ModeSandboxExec, Filesystem: true, Network: true,
		Reason: darwinHostLimit + "; " + darwinNoApplySelf}
}

// darwinApplySelfError is ApplySelf's error on macOS.
func darwinApplySelfError() error {
	return fmt.Errorf("%w: %s (macOS offers no public API for a running process to apply a Seatbelt profile "+
		"to itself, and this library does not use cgo)", ErrUnavailable, darwinNoApplySelf)
}

// darwinPrivatePath maps a path under the macOS root symlinks /tmp, /var and
// /etc to its real place under /private. Inside a Seatbelt sandbox those
// symlinks usually cannot be read (they are not granted), so resolving such
// a path there fails; the mapping is the one every macOS installation has.
func darwinPrivatePath(p string) string {
	for _, l := range []string{"/tmp", "/var", "/etc"} {
		if p == l || strings.HasPrefix(p, l+"/") {
			return "/private" + p
		}
	}
	return p
}

// darwinGranted reports whether path is inside anything the profile for rc
// grants: a Config path or a baseline path. macOS file systems are usually
// case-insensitive, so the comparison is too (when in doubt, granted: the
// probe then picks another target).
func darwinGranted(rc *resolvedConfig, path string) bool {
	lp := strings.ToLower(path)
	under := func(root string) bool { return isUnder(lp, strings.ToLower(root)) }
	for _, list := range [][]ResolvedPath{rc.read, rc.write, rc.exec} {
		for _, rp := range list {
			if under(rp.Resolved) {
				return true
			}
		}
	}
	for _, b := range darwinBaseline {
		if under(b.Path) {
			return true
		}
	}
	_, _, tls := darwinConnects(rc)
	return tls && under(darwinTLSDir)
}

// darwinCandidate is a canary target on macOS.
type darwinCandidate struct {
	path string
	// world: ordinary permissions let every user have the access wanted
	// (mode 0644 file, 1777 directory) on every macOS installation.
	world bool
}

// Canary targets: resolved paths (no /etc or /tmp symlink to read) of files
// and directories every macOS installation has. /private/etc/master.passwd
// (mode 0600) is a target only for root.
var (
	darwinReadTargets = []darwinCandidate{
		{"/private/etc/hosts", true}, {"/private/etc/passwd", true}, {"/private/etc/group", true},
		{"/private/etc/shells", true}, {"/private/etc/master.passwd", false},
	}
	darwinWriteTargets = []darwinCandidate{{"/private/tmp", true}, {"/private/var/tmp", true}}
)

// pickDarwinTarget returns the first candidate that rc does not grant and
// that ordinary permissions allow. access is access(2) with the effective
// IDs. Seatbelt mediates access(2) as well and refuses it with EPERM outside
// the granted paths; then ordinary permissions cannot be asked from inside
// the sandbox, and a candidate is used only if they allow everyone (world)
// or the caller is root. Either way the probe's own errno decides: EACCES
// (ordinary permissions) is never counted as blocked.
func pickDarwinTarget(rc *resolvedConfig, cands []darwinCandidate, access func(string) error, root bool) (string, bool) {
	for _, c := range cands {
		if darwinGranted(rc, c.path) {
			continue
		}
		err := access(c.path)
		if err == nil || errnoOf(err) == syscall.EPERM && (c.world || root) {
			return c.path, true
		}
	}
	return "", false
}
