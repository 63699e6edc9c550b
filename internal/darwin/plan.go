package darwin

// The Plan of a macOS profile: what of a Config the Seatbelt profile
// enforces, and which channels it leaves open.

import (
	"slices"
	"strconv"
	"strings"

	"github.com/openparallax/sandbox/internal/seatbelt"
	"github.com/openparallax/sandbox/internal/spec"
)

// connectRule is one TCP connect rule of a profile, with the endpoints of
// the Config it serves.
type connectRule struct {
	addr  string // "localhost:PORT" or "*:PORT", as in the profile
	asked []string
}

// netGrants is what a profile grants for rc's TCP endpoints, exactly as
// internal/seatbelt decides it.
type netGrants struct {
	rules []connectRule
	// resolver: a host is a DNS name or "*": mDNSResponder and the
	// network helpers (names lists those endpoints).
	resolver bool
	names    []string
	// hosts: a host is a name (localhost included): /private/etc/hosts.
	hosts bool
	// remote: an endpoint is not loopback: /private/etc/ssl, and trustd
	// unless trustd is false.
	remote, trustd bool
}

// connects groups rc's endpoints by the Seatbelt rule each becomes,
// exactly as internal/seatbelt maps them: a loopback host to localhost,
// everything else to "*"; and says which helpers the profile grants for
// them. The name localhost does not bring the resolver: it is in the hosts
// file, and mDNSResponder would resolve any other name too.
func connects(rc *spec.Resolved) netGrants {
	var n netGrants
	for _, ep := range rc.Connect {
		host := "*"
		if ep.Loopback() {
			host = "localhost"
		} else {
			n.remote = true
		}
		if ep.Named() { // an address or a range needs no resolver
			n.hosts = true
			if ep.Host != "localhost" {
				n.resolver = true // "*" or a DNS name: getaddrinfo asks mDNSResponder
				n.names = append(n.names, ep.String())
			}
		}
		port := strconv.Itoa(int(ep.Port))
		if ep.AnyPort {
			port = "*" // Seatbelt's own any-port form
		}
		addr := host + ":" + port
		i := slices.IndexFunc(n.rules, func(c connectRule) bool { return c.addr == addr })
		if i < 0 {
			n.rules = append(n.rules, connectRule{addr: addr})
			i = len(n.rules) - 1
		}
		n.rules[i].asked = append(n.rules[i].asked, ep.String())
	}
	n.trustd = n.remote && !rc.Config.NoTLSTrustService
	return n
}

// addFeature appends one entry to a plan's features (Plan's f).
type addFeature func(feature string, enforced bool, detail, hint string)

// Plan reports what the profile for rc enforces, with available saying
// whether /usr/bin/sandbox-exec is there: a feature is reported enforced
// only when the profile WrapCommand makes enforces it, and every channel the
// profile opens (the resolver, trustd) is reported not enforced, so that
// Strict refuses it. Without sandbox-exec nothing is enforced. It is the
// Plan of WrapCommand; ApplySelf is never available on macOS (see
// [ApplySelfError]).
func Plan(rc *spec.Resolved, available bool) spec.Plan {
	cfg := rc.Config
	plan := spec.Plan{Platform: "darwin", Mechanism: spec.ModeSandboxExec, Available: available, Reason: noApplySelf}
	if !available {
		plan.Reason = unavailable
	}
	f := func(feature string, enforced bool, detail, hint string) {
		if !available {
			enforced, hint = false, ""
			detail = "sandbox unavailable: " + unavailable
		}
		plan.Features = append(plan.Features, spec.Enforcement{Feature: feature, Enforced: enforced, Detail: detail, Hint: hint})
	}
	paths, notes := pathRulesWhy(rc)
	nt := connects(rc)
	bindPorts := bindPortList(rc)

	fileFeatures(f, rc, paths, notes)
	tcpFeatures(f, rc, nt, bindPorts)
	channelFeatures(f, rc, nt)
	if cfg.AllowProcessSpawn {
		f(spec.FeatureScopeSignal, true, "Seatbelt: signals only to itself and processes of the same sandbox; process-info only of itself", "")
		f(spec.FeatureSpawn, true, "granted: children inherit the sandbox and its exec allowlist (no limit on their number)", "")
	} else {
		f(spec.FeatureScopeSignal, true, "Seatbelt: signals only to itself; process-info only of itself", "")
		f(spec.FeatureSpawn, true, "Seatbelt: process-fork denied", "")
	}
	f(spec.FeatureUserLookup, true, userLookupDetail, "")
	f(spec.FeatureSyscalls, true, "no syscall filter: Seatbelt mediates operations instead, and (deny default) refuses every one "+
		"the profile does not list (mach services, IOKit, sysctl writes, other processes)", "")

	plan.Paths = planPaths(rc, paths, nt)
	plan.Network = planNetwork(rc, nt, bindPorts)
	if cfg.AllowCamera {
		f(spec.FeatureCamera, true, "Seatbelt: (allow device-camera)", "")
	}
	if cfg.AllowMicrophone {
		f(spec.FeatureMicrophone, true, "Seatbelt: (allow device-microphone)", "")
	}
	plan.Features = append(plan.Features, spec.LayerFeatures(rc, "darwin", false)...)
	plan.Features = append(plan.Features, spec.UnenforcedLimits(rc, "resource limits are not implemented on macOS yet")...)
	gitFeatures(f, rc)
	toolchainFeatures(f, rc)
	return plan
}

// fileFeatures reports the file and exec features of the profile for rc
// with the path rules paths; notes are pathRulesWhy's (the "#!"
// interpreters not granted, the xcrun shims' developer directory).
func fileFeatures(f addFeature, rc *spec.Resolved, paths []pathRule, notes pathNotes) {
	if _, err := profile(rc, paths); err != nil {
		f(spec.FeatureFilesystem, false, "no profile can be made for this Config: "+err.Error()+"; WrapCommand refuses it", "")
	} else {
		f(spec.FeatureFilesystem, true, "Seatbelt (deny default): read only the granted paths and the system baseline, "+
			"write only inside write paths; stat of the directories above each granted path and above the baseline's", "")
	}
	f(spec.FeatureTruncate, true, "Seatbelt: truncate needs file-write-data, granted only inside write paths", "")
	f(spec.FeatureIoctlDev, true, "Seatbelt: file-ioctl is granted on no device but the pseudo-terminal Run opens for the program "+
		"(RunOptions.TTY), also through /dev/tty as its controlling terminal; so ioctl on any other terminal, an inherited one included, "+
		"is refused (TIOCSTI; also tcsetattr, so no raw mode there)", "")
	f(spec.FeatureExec, true, execDetail(rc, notes), "")
}

// execDetail is the exec feature's detail: what may be executed and mapped
// as code, and what was not granted.
func execDetail(rc *spec.Resolved, notes pathNotes) string {
	d := "Seatbelt: process-exec only of the command WrapCommand starts and its \"#!\" interpreter (the exec allowlist is empty)"
	if len(rc.Exec) > 0 {
		d = "Seatbelt: process-exec only of the exec allowlist, the command WrapCommand starts and their \"#!\" interpreters"
	}
	d += "; an interpreter only when it is an executable regular file outside every write path, and the command only outside every write path " +
		"unless an exec path or allow_exec_write_paths covers it (WrapCommand refuses it otherwise: the program could replace it); " +
		"with /bin/sh, /usr/bin/perl or an xcrun tool, also the programs that shim executes (an xcrun tool: the Command Line Tools)"
	if n := notes.devDir.note; n != "" {
		d += "; the xcrun shims' developer directory: " + n
	}
	d += "; file-map-executable (code mapped by dyld, dlopen, Python extension modules, Node addons, DYLD_INSERT_LIBRARIES) is denied " +
		"but for the system libraries, the exec paths and the shims' programs"
	if rc.Config.AllowExecWritePaths {
		d += " and the write paths (allow_exec_write_paths)"
	}
	d += ", and the libraries a program granted as a file loads from elsewhere (its Mach-O imports, @rpath, @loader_path and @executable_path " +
		"resolved, followed through their own, each granted as itself: read and map, never executed) unless they lie in a write path; " +
		"a read path is never code; a program inside an exec directory gets none of its libraries beyond that directory, and what a program dlopens by name " +
		"(Python's lib-dynload, Node addons) is no import: grant their directory as an exec path"
	for _, r := range notes.refused {
		d += "; not granted, so that script cannot run: " + r
	}
	for _, r := range notes.libRefused {
		d += "; library not granted, so its program fails to load it: " + r
	}
	return d
}

// tcpFeatures reports TCP connect, its hosts, and bind (bindPorts: the
// granted ports Seatbelt can express, bindPortList).
func tcpFeatures(f addFeature, rc *spec.Resolved, nt netGrants, bindPorts []string) {
	if len(nt.rules) == 0 {
		f(spec.FeatureTCPConnect, true, "Seatbelt: no TCP granted: every outgoing connection is denied", "")
	} else {
		addrs := make([]string, len(nt.rules))
		for i, r := range nt.rules {
			addrs[i] = r.addr
		}
		detail := "Seatbelt: connect only to " + strings.Join(addrs, ", ")
		if slices.ContainsFunc(rc.Connect, spec.Endpoint.Unrestricted) {
			detail = "granted: Seatbelt (remote tcp \"*:*\"): TCP connect to any host on any port (outgoing TCP is unrestricted)"
		}
		f(spec.FeatureTCPConnect, true, detail, "")
	}
	var loopback []string
	for _, ep := range rc.Connect {
		if ep.Loopback() {
			loopback = append(loopback, ep.String())
		}
	}
	if len(loopback) > 0 {
		f(spec.FeatureTCPHost, true, "Seatbelt: "+strings.Join(loopback, ", ")+" limited to Seatbelt's localhost (127.0.0.1 and ::1)", "")
	}
	// The lines internal/seatbelt reports for hosts it cannot express.
	hostOnly := seatbelt.Policy{}
	for _, ep := range rc.Connect {
		hostOnly.TCPConnect = append(hostOnly.TCPConnect, seatbelt.Endpoint{Host: ep.Host, Port: ep.Port, AnyPort: ep.AnyPort})
	}
	if prof, err := seatbelt.Generate(hostOnly); err == nil {
		for _, line := range prof.NotEnforced {
			f(spec.FeatureTCPHost, false, line, hostHint)
		}
	}

	bindDetail := "Seatbelt: no bind granted: listening on any port is denied"
	if len(bindPorts) > 0 {
		bindDetail = "Seatbelt: bind and accept only on ports " + strings.Join(bindPorts, ", ") +
			", on every local address (Seatbelt cannot restrict who connects)"
	}
	if slices.Contains(rc.Bind, 0) {
		bindDetail += "; port 0 (a port the kernel picks) cannot be expressed in Seatbelt and is not granted: binding it fails"
	}
	f(spec.FeatureTCPBind, true, bindDetail, "")
}

// bindPortList lists rc's bind ports but 0, which Seatbelt cannot express.
func bindPortList(rc *spec.Resolved) []string {
	var bindPorts []string
	for _, p := range rc.Bind {
		if p != 0 {
			bindPorts = append(bindPorts, strconv.Itoa(int(p)))
		}
	}
	return bindPorts
}

// channelFeatures reports UDP, AF_UNIX sockets, and the channels the
// profile opens for the endpoints (the resolver, trustd).
func channelFeatures(f addFeature, rc *spec.Resolved, nt netGrants) {
	cfg := rc.Config
	if cfg.AllowUDP {
		f(spec.FeatureUDP, true, "Seatbelt: UDP is denied: allow_udp cannot be granted by this profile and is ignored", "")
	} else {
		f(spec.FeatureUDP, true, "Seatbelt: UDP denied", "")
	}
	switch {
	case cfg.AllowUnixSockets:
		f(spec.FeatureUnixSockets, true, "Seatbelt: AF_UNIX sockets; bind and connect only to socket files inside write paths", "")
	case nt.resolver:
		f(spec.FeatureUnixSockets, true, "Seatbelt: no socket file may be bound or connected to, except mDNSResponder's for name resolution", "")
	default:
		f(spec.FeatureUnixSockets, true, "Seatbelt: AF_UNIX sockets denied: no socket file may be bound or connected to", "")
	}
	if nt.resolver {
		f(spec.FeatureResolver, false, "channel: for "+strings.Join(nt.names, ", ")+" the profile lets the process reach mDNSResponder "+
			"(and configd's DNS configuration), which resolves any name: queries for names the process makes up reach "+
			"any authoritative DNS server, a way to send data out that no rule limits",
			`connect by IP address, or to localhost (resolved from /private/etc/hosts), and the resolver is not granted`)
	} else if len(rc.Connect) > 0 {
		f(spec.FeatureResolver, true, "Seatbelt: mDNSResponder not reachable: every endpoint is an IP address or localhost "+
			"(resolved from "+hostsFile+"; a libc that only asks mDNSResponder fails to resolve it: use 127.0.0.1)", "")
	}
	switch {
	case nt.trustd:
		f(spec.FeatureTLSTrust, false, "channel: "+trustdService+" is granted for TLS certificate evaluation (Security.framework, "+
			"Go's crypto/x509, curl); trustd fetches the AIA, OCSP and CRL URLs named in certificates the process hands it, "+
			"reaching hosts no rule names", "set no_tls_trust_service to leave it out (TLS verification through the system then fails)")
	case nt.remote:
		f(spec.FeatureTLSTrust, true, "Seatbelt: "+trustdService+" not granted (no_tls_trust_service): TLS certificate verification "+
			"through the system fails; clients with their own CA bundle (/private/etc/ssl) still work", "")
	}
}

// planPaths is the Plan's path rules: the baseline, the files the endpoints
// bring, the shims' rules, and paths.
func planPaths(rc *spec.Resolved, paths []pathRule, nt netGrants) []spec.PathRule {
	var out []spec.PathRule
	for _, b := range baseline {
		out = append(out, spec.PathRule{Path: b.Path, Access: b.Access, Source: "default: " + b.Reason})
	}
	if nt.hosts {
		out = append(out, spec.PathRule{Path: hostsFile, Access: accessRead, Source: "default: host names (localhost) for TCP connect"})
	}
	if nt.remote {
		out = append(out, spec.PathRule{Path: tlsDir, Access: accessRead, Source: "default: CA certificates for non-loopback TCP connect"})
	}
	pol := seatbeltPolicy(rc, paths)
	for _, shim := range []struct {
		name string
		on   bool
	}{{"sh", pol.ShellShim}, {"perl", pol.PerlShim}, {"xcrun", pol.XcrunShim}} {
		if shim.on {
			for _, b := range shimPaths[shim.name] {
				out = append(out, spec.PathRule{Path: b.Path, Access: b.Access, Source: "default: " + b.Reason})
			}
		}
	}
	for _, d := range paths {
		out = append(out, spec.PathRule{Path: d.Resolved, Access: d.Access, Source: d.Source})
	}

	return out
}

// planNetwork is the Plan's network rules, one line each.
func planNetwork(rc *spec.Resolved, nt netGrants, bindPorts []string) []string {
	var out []string
	for _, r := range nt.rules {
		line := "tcp connect " + r.addr
		if len(r.asked) > 1 || r.asked[0] != r.addr {
			line += " (for " + strings.Join(r.asked, ", ") + ")"
		}
		out = append(out, line)
	}
	for _, p := range bindPorts {
		out = append(out, "tcp bind and accept *:"+p+" (every local address)")
	}
	if nt.resolver {
		out = append(out, "unix connect "+resolverSocket+" (name resolution: a channel, see "+spec.FeatureResolver+")",
			"mach-lookup com.apple.SystemConfiguration.DNSConfiguration, com.apple.SystemConfiguration.configd; sysctl-read net.routetable (resolver configuration)")
	}
	if nt.trustd {
		out = append(out, "mach-lookup "+trustdService+" (TLS certificate evaluation: a channel, see "+spec.FeatureTLSTrust+")")
	}
	if rc.Config.AllowUnixSockets {
		for _, rp := range rc.Write {
			out = append(out, "unix bind and connect inside "+rp.Resolved)
		}
	}
	return out
}
