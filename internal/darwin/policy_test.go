package darwin

// The macOS policy as data, on every OS: which Seatbelt policy, profile,
// Plan and sandbox-exec command line a Config becomes, and how the darwin
// canary picks its targets. Enforcement itself is tested on a Mac by
// sandbox_darwin_test.go.

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/openparallax/sandbox/internal/seatbelt"
	"github.com/openparallax/sandbox/internal/spec"
)

// testRC is a resolved Config as it would be on a Mac, built by hand
// so that it depends on no file system: an agent with a workspace, a
// read-only data directory under /private/tmp, one tool, a local and a
// remote endpoint, and a bind port (plus port 0, which Seatbelt cannot
// express).
func testRC(t *testing.T) *spec.Resolved {
	t.Helper()
	cfg := spec.Config{
		AllowedReadPaths:  []string{"/tmp/data"},
		AllowedWritePaths: []string{"/Users/dev/ws"},
		AllowedExecPaths:  []string{"/Users/dev/tools/lint"},
		AllowedTCPConnect: []string{"localhost:8080", "example.com:443"},
		AllowedTCPBind:    []uint16{9000, 0},
		AllowProcessSpawn: true,
		AllowUnixSockets:  true,
	}
	rc := &spec.Resolved{
		Config: cfg,
		Read:   []spec.Path{{Given: "/tmp/data", Resolved: "/private/tmp/data", IsDir: true}},
		Write:  []spec.Path{{Given: "/Users/dev/ws", Resolved: "/Users/dev/ws", IsDir: true}},
		Exec:   []spec.Path{{Given: "/Users/dev/tools/lint", Resolved: "/Users/dev/tools/lint"}},
		Bind:   cfg.AllowedTCPBind,
	}
	for _, s := range cfg.AllowedTCPConnect {
		ep, err := spec.ParseEndpoint(s)
		if err != nil {
			t.Fatal(err)
		}
		rc.Connect = append(rc.Connect, ep)
	}
	return rc
}

// safeDir is a temporary directory whose resolved path a Seatbelt
// profile accepts: not under /tmp, /var or /etc, which are symlinks on macOS
// (t.TempDir is fine on a Mac, where it resolves under /private; on Linux it
// is under /tmp, so /dev/shm is tried instead).
func safeDir(t *testing.T) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("a Seatbelt profile takes POSIX paths; Windows paths cannot appear in one")
	}
	try := func(d string) (string, bool) {
		r, err := filepath.EvalSymlinks(d)
		return r, err == nil && privatePath(r) == r
	}
	if d, ok := try(t.TempDir()); ok {
		return d
	}
	if d, err := os.MkdirTemp("/dev/shm", "darwin-policy-test-"); err == nil {
		t.Cleanup(func() { os.RemoveAll(d) })
		if r, ok := try(d); ok {
			return r
		}
	}
	t.Skip("no temporary directory outside /tmp, /var and /etc, which a Seatbelt profile refuses off macOS")
	return ""
}

func features(p spec.Plan, name string) []spec.Enforcement {
	var out []spec.Enforcement
	for _, f := range p.Features {
		if f.Feature == name {
			out = append(out, f)
		}
	}
	return out
}

// checkSBPL is a small reader for the profile's shape: balanced lists,
// ";" comments, strings with only \\ and \" escapes, and top-level forms
// that are (version …), (deny …) or (allow …).
func checkSBPL(t *testing.T, text string) {
	t.Helper()
	depth, top := 0, ""
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case c == ';':
			for i < len(text) && text[i] != '\n' {
				i++
			}
		case c == '"':
			for i++; i < len(text) && text[i] != '"'; i++ {
				if text[i] == '\\' {
					i++
					if i >= len(text) || text[i] != '\\' && text[i] != '"' {
						t.Fatalf("bad escape at byte %d", i)
					}
				}
				if text[i] == '\n' {
					t.Fatalf("string spans lines at byte %d", i)
				}
			}
			if i >= len(text) {
				t.Fatal("unterminated string")
			}
		case c == '(':
			if depth == 0 {
				rest := text[i+1:]
				top = rest[:strings.IndexAny(rest, " )\n")]
				if top != "version" && top != "deny" && top != "allow" {
					t.Fatalf("top-level form (%s …) at byte %d", top, i)
				}
			}
			depth++
		case c == ')':
			depth--
			if depth < 0 {
				t.Fatalf("unbalanced ) at byte %d", i)
			}
		case depth == 0 && c != ' ' && c != '\n' && c != '\t':
			t.Fatalf("text outside a form at byte %d: %q", i, text[i:min(len(text), i+20)])
		}
	}
	if depth != 0 {
		t.Fatalf("%d lists not closed", depth)
	}
}

func TestDarwinPolicyMapping(t *testing.T) {
	rc := testRC(t)
	paths := pathRules(rc)
	pol := seatbeltPolicy(rc, paths)
	if want := []string{"/private/tmp/data"}; !slices.Equal(pol.ReadPaths, want) {
		t.Errorf("ReadPaths = %q, want %q", pol.ReadPaths, want)
	}
	if want := []string{"/Users/dev/ws"}; !slices.Equal(pol.WritePaths, want) {
		t.Errorf("WritePaths = %q, want %q", pol.WritePaths, want)
	}
	if want := []string{"/Users/dev/tools/lint"}; !slices.Equal(pol.ExecPaths, want) {
		t.Errorf("ExecPaths = %q, want %q", pol.ExecPaths, want)
	}
	if !pol.IsDir("/private/tmp/data") || !pol.IsDir("/Users/dev/ws") || pol.IsDir("/Users/dev/tools/lint") {
		t.Error("IsDir does not follow ResolvedPath.IsDir")
	}
	wantConnect := []seatbelt.Endpoint{{Host: "localhost", Port: 8080}, {Host: "example.com", Port: 443}}
	if !slices.Equal(pol.TCPConnect, wantConnect) {
		t.Errorf("TCPConnect = %v, want %v", pol.TCPConnect, wantConnect)
	}
	if want := []uint16{9000}; !slices.Equal(pol.TCPBind, want) {
		t.Errorf("TCPBind = %v, want %v (port 0 cannot be expressed)", pol.TCPBind, want)
	}
	if !pol.AllowSpawn || !pol.AllowUnixSockets || pol.Camera || pol.Microphone {
		t.Errorf("flags: spawn %v unix %v camera %v microphone %v", pol.AllowSpawn, pol.AllowUnixSockets, pol.Camera, pol.Microphone)
	}

	rc.Config.AllowProcessSpawn, rc.Config.AllowUnixSockets = false, false
	pol = seatbeltPolicy(rc, paths)
	if pol.AllowSpawn || pol.AllowUnixSockets {
		t.Error("spawn or unix sockets allowed without the Config asking")
	}
}

func TestDarwinProfileOnlyParams(t *testing.T) {
	rc := testRC(t)
	hostile := `/Users/dev/ws "x") (allow default) ; \`
	rc.Write = append(rc.Write, spec.Path{Given: hostile, Resolved: hostile, IsDir: true})
	prof, err := profile(rc, pathRules(rc))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(prof.Text, "(version 1)\n(deny default)\n") {
		t.Errorf("profile does not start with (deny default):\n%s", prof.Text[:min(80, len(prof.Text))])
	}
	checkSBPL(t, prof.Text)
	for _, p := range []string{"/private/tmp/data", "/Users/dev", "lint", hostile, "(allow default)"} {
		if strings.Contains(prof.Text, p) {
			t.Errorf("profile text contains %q: user paths must only be parameters", p)
		}
	}
	params := map[string]string{}
	for _, p := range prof.Params {
		params[p.Name] = p.Value
	}
	want := map[string]string{"R0": "/private/tmp/data", "W0": "/Users/dev/ws", "W1": hostile, "X0": "/Users/dev/tools/lint"}
	for k, v := range want {
		if params[k] != v {
			t.Errorf("param %s = %q, want %q", k, params[k], v)
		}
	}
	for _, rule := range []string{
		`(allow file-read* (subpath (param "R0")))`,
		`(allow file-read* file-write* (subpath (param "W0")))`,
		`(allow process-exec* (literal (param "X0")))`,
		`(allow process-fork)`,
		`(allow network-outbound (remote tcp "localhost:8080"))`,
		`(allow network-outbound (remote tcp "*:443"))`,
		`(allow network-bind (local tcp "*:9000"))`,
	} {
		if !strings.Contains(prof.Text, rule) {
			t.Errorf("profile lacks %s", rule)
		}
	}
	if strings.Contains(prof.Text, `"*:0"`) {
		t.Error("bind port 0 reached the profile")
	}
	if len(prof.NotEnforced) != 1 || !strings.Contains(prof.NotEnforced[0], "example.com:443") {
		t.Errorf("NotEnforced = %q, want one line for example.com:443", prof.NotEnforced)
	}
}

func TestDarwinPlan(t *testing.T) {
	rc := testRC(t)
	plan := Plan(rc, true)
	if plan.Platform != "darwin" || plan.Mechanism != spec.ModeSandboxExec || !plan.Available || plan.Reason != noApplySelf {
		t.Errorf("plan header: %+v", plan)
	}
	for _, f := range []string{spec.FeatureFilesystem, spec.FeatureTruncate, spec.FeatureIoctlDev, spec.FeatureExec, spec.FeatureTCPConnect,
		spec.FeatureTCPBind, spec.FeatureUDP, spec.FeatureUnixSockets, spec.FeatureScopeSignal, spec.FeatureSpawn, spec.FeatureSyscalls} {
		fs := features(plan, f)
		if len(fs) != 1 || !fs[0].Enforced || fs[0].Detail == "" {
			t.Errorf("%s: %+v, want one enforced entry with a detail", f, fs)
		}
	}
	if fs := features(plan, spec.FeatureScopeUnix); len(fs) != 0 {
		t.Errorf("%s reported on macOS, which has no abstract unix sockets: %+v", spec.FeatureScopeUnix, fs)
	}
	hosts := features(plan, spec.FeatureTCPHost)
	if len(hosts) != 2 {
		t.Fatalf("tcp_connect_host: %+v, want the localhost entry and the example.com entry", hosts)
	}
	if !hosts[0].Enforced || !strings.Contains(hosts[0].Detail, "localhost:8080") {
		t.Errorf("loopback host entry: %+v", hosts[0])
	}
	if hosts[1].Enforced || !strings.Contains(hosts[1].Detail, `"example.com:443"`) || !strings.Contains(hosts[1].Detail, "*:443") || hosts[1].Hint == "" {
		t.Errorf("named host entry: %+v", hosts[1])
	}
	var ne []string
	for _, f := range plan.NotEnforced() {
		ne = append(ne, f.Feature)
	}
	if want := []string{spec.FeatureTCPHost, spec.FeatureResolver, spec.FeatureTLSTrust}; !slices.Equal(ne, want) {
		t.Errorf("NotEnforced = %q, want %q: the example.com host and the two channels it opens", ne, want)
	}
	if r := features(plan, spec.FeatureResolver)[0]; !strings.Contains(r.Detail, "example.com:443") || strings.Contains(r.Detail, "localhost:8080") || r.Hint == "" {
		t.Errorf("resolver entry %+v: want it to name example.com:443 (not localhost) with a hint", r)
	}
	if tr := features(plan, spec.FeatureTLSTrust)[0]; !strings.Contains(tr.Detail, "OCSP") || !strings.Contains(tr.Hint, "no_tls_trust_service") {
		t.Errorf("trustd entry %+v: want the AIA/OCSP/CRL channel and the way to leave it out", tr)
	}
	bind := features(plan, spec.FeatureTCPBind)[0]
	if !strings.Contains(bind.Detail, "9000") || !strings.Contains(bind.Detail, "port 0") {
		t.Errorf("tcp_bind detail %q, want port 9000 and the port 0 note", bind.Detail)
	}
	wantNet := []string{
		"tcp connect localhost:8080",
		"tcp connect *:443 (for example.com:443)",
		"tcp bind and accept *:9000 (every local address)",
		"unix connect /private/var/run/mDNSResponder (name resolution: a channel, see name_resolver)",
		"mach-lookup com.apple.SystemConfiguration.DNSConfiguration, com.apple.SystemConfiguration.configd; sysctl-read net.routetable (resolver configuration)",
		"mach-lookup com.apple.trustd.agent (TLS certificate evaluation: a channel, see tls_trust_service)",
		"unix bind and connect inside /Users/dev/ws",
	}
	if !slices.Equal(plan.Network, wantNet) {
		t.Errorf("Network =\n%q\nwant\n%q", plan.Network, wantNet)
	}
	for _, want := range []spec.PathRule{
		{Path: "/private/tmp/data", Access: "read", Source: "allowed_read_paths"},
		{Path: "/Users/dev/ws", Access: "read-write", Source: "allowed_write_paths"},
		{Path: "/Users/dev/tools/lint", Access: "exec", Source: "allowed_exec_paths"},
		{Path: "/usr/lib", Access: "read, map-executable", Source: "default: system dylibs and dyld"},
		{Path: "/private/etc/ssl", Access: "read", Source: "default: CA certificates for non-loopback TCP connect"},
	} {
		if !slices.Contains(plan.Paths, want) {
			t.Errorf("Paths lacks %+v", want)
		}
	}

	// Strict: the named host is an error, before anything is applied.
	rc.Config.Strict = true
	err := spec.CheckApplicable(Plan(rc, true), rc.Config.Strict, spec.ScopeCommand)
	if !errors.Is(err, spec.ErrNotEnforced) || !strings.Contains(err.Error(), "tcp_connect_host") || !strings.Contains(err.Error(), "example.com:443") {
		t.Errorf("strict: %v, want ErrNotEnforced naming tcp_connect_host and example.com:443", err)
	}
	// Loopback only: nothing left unenforced, and no resolver.
	rc.Connect = []spec.Endpoint{{Host: "localhost", Port: 8080}, {Host: "127.0.0.1", Port: 5432}, {Host: "::1", Port: 5433}}
	if err := spec.CheckApplicable(Plan(rc, true), rc.Config.Strict, spec.ScopeCommand); err != nil {
		t.Errorf("strict with localhost, 127.0.0.1 and ::1: %v", err)
	}
	if f := features(Plan(rc, true), spec.FeatureResolver); len(f) != 1 || !f[0].Enforced || !strings.Contains(f[0].Detail, "not reachable") {
		t.Errorf("loopback-only resolver entry: %+v", f)
	}
	// "*" is expressible, but it brings the resolver and trustd: Strict
	// refuses the channels, and without trustd only the resolver.
	rc.Connect = []spec.Endpoint{{Host: "*", Port: 443}}
	err = spec.CheckApplicable(Plan(rc, true), rc.Config.Strict, spec.ScopeCommand)
	if !errors.Is(err, spec.ErrNotEnforced) || !strings.Contains(err.Error(), spec.FeatureResolver) || !strings.Contains(err.Error(), spec.FeatureTLSTrust) {
		t.Errorf("strict with *:443: %v, want ErrNotEnforced naming %s and %s", err, spec.FeatureResolver, spec.FeatureTLSTrust)
	}
	rc.Config.NoTLSTrustService = true
	err = spec.CheckApplicable(Plan(rc, true), rc.Config.Strict, spec.ScopeCommand)
	if !errors.Is(err, spec.ErrNotEnforced) || !strings.Contains(err.Error(), spec.FeatureResolver) || strings.Contains(err.Error(), spec.FeatureTLSTrust) {
		t.Errorf("strict with *:443 and no trustd: %v, want only %s refused", err, spec.FeatureResolver)
	}
	if f := features(Plan(rc, true), spec.FeatureTLSTrust); len(f) != 1 || !f[0].Enforced {
		t.Errorf("no_tls_trust_service: %+v, want an enforced entry saying trustd is not granted", f)
	}
	rc.Config.NoTLSTrustService = false

	// Without sandbox-exec nothing is enforced and applying fails closed.
	off := Plan(rc, false)
	if off.Available || off.Reason != unavailable {
		t.Errorf("unavailable plan header: available %v reason %q", off.Available, off.Reason)
	}
	for _, f := range off.Features {
		if f.Enforced || !strings.Contains(f.Detail, "sandbox unavailable") {
			t.Errorf("unavailable plan: %+v", f)
		}
	}
	if err := spec.CheckApplicable(off, rc.Config.Strict, spec.ScopeCommand); !errors.Is(err, spec.ErrUnavailable) {
		t.Errorf("unavailable: %v, want ErrUnavailable", err)
	}
}

func TestDarwinPlanMinimal(t *testing.T) {
	plan := Plan(&spec.Resolved{}, true)
	if ne := plan.NotEnforced(); len(ne) != 0 {
		t.Errorf("empty Config: not enforced %+v", ne)
	}
	if len(plan.Network) != 0 {
		t.Errorf("empty Config: network %q", plan.Network)
	}
	for name, want := range map[string]string{
		spec.FeatureTCPConnect:  "every outgoing connection is denied",
		spec.FeatureTCPBind:     "listening on any port is denied",
		spec.FeatureSpawn:       "process-fork denied",
		spec.FeatureUnixSockets: "AF_UNIX sockets denied",
		spec.FeatureExec:        "exec allowlist is empty",
	} {
		if f := features(plan, name); len(f) != 1 || !strings.Contains(f[0].Detail, want) {
			t.Errorf("%s: %+v, want detail with %q", name, f, want)
		}
	}
	if f := features(plan, spec.FeatureTCPHost); len(f) != 0 {
		t.Errorf("tcp_connect_host without endpoints: %+v", f)
	}
	if f := features(Plan(&spec.Resolved{Config: spec.Config{AllowUDP: true}}, true), spec.FeatureUDP); !strings.Contains(f[0].Detail, "ignored") {
		t.Errorf("allow_udp: %+v, want it reported as not granted", f)
	}
}

// The Plan's network lines and TLS path follow the profile for every kind of
// host.
func TestDarwinNetworkMatchesProfile(t *testing.T) {
	for _, eps := range [][]string{
		nil, {"localhost:80"}, {"127.0.0.1:80"}, {"[::1]:80"}, {"*:443"}, {"example.com:443"},
		{"10.0.0.1:22"}, {"[2001:db8::1]:443"}, {"127.0.0.1:80", "10.0.0.1:22"}, {"localhost:80", "example.com:443", "*:443"},
		{"localhost:*"}, {"[::1]:*", "10.0.0.1:*"}, {"api.example.com:*", "localhost:80"}, {"*:*"},
	} {
		rc := &spec.Resolved{Config: spec.Config{AllowedTCPConnect: eps}}
		for _, s := range eps {
			ep, err := spec.ParseEndpoint(s)
			if err != nil {
				t.Fatal(err)
			}
			rc.Connect = append(rc.Connect, ep)
		}
		prof, err := profile(rc, nil)
		if err != nil {
			t.Fatal(err)
		}
		plan := Plan(rc, true)
		has := func(prefix string) bool {
			return slices.ContainsFunc(plan.Network, func(l string) bool { return strings.HasPrefix(l, prefix) })
		}
		if has("unix connect "+resolverSocket) != strings.Contains(prof.Text, resolverSocket) {
			t.Errorf("%q: resolver line %v, profile has the resolver socket: %v", eps, has("unix connect"), strings.Contains(prof.Text, resolverSocket))
		}
		trustd, tls := strings.Contains(prof.Text, trustdService), strings.Contains(prof.Text, tlsDir)
		if has("mach-lookup "+trustdService) != trustd || (len(features(plan, spec.FeatureTLSTrust)) == 1 && !features(plan, spec.FeatureTLSTrust)[0].Enforced) != trustd ||
			slices.ContainsFunc(plan.Paths, func(r spec.PathRule) bool { return r.Path == tlsDir }) != tls {
			t.Errorf("%q: TLS lines disagree with the profile (profile has trustd: %v, CA dir: %v)", eps, trustd, tls)
		}
		resolver := strings.Contains(prof.Text, resolverSocket)
		if f := features(plan, spec.FeatureResolver); (len(f) == 1 && !f[0].Enforced) != resolver {
			t.Errorf("%q: resolver granted %v, plan reports %+v", eps, resolver, f)
		}
		if hosts := strings.Contains(prof.Text, hostsFile); slices.ContainsFunc(plan.Paths, func(r spec.PathRule) bool { return r.Path == hostsFile }) != hosts {
			t.Errorf("%q: hosts file in the profile %v, not so in the plan", eps, hosts)
		}
		rules := connects(rc).rules
		for _, r := range rules {
			if !strings.Contains(prof.Text, `(remote tcp "`+r.addr+`")`) {
				t.Errorf("%q: rule %s not in the profile", eps, r.addr)
			}
		}
		if n := strings.Count(prof.Text, "(remote tcp "); n != len(rules) {
			t.Errorf("%q: profile has %d connect rules, plan %d", eps, n, len(rules))
		}
		if got := len(features(plan, spec.FeatureTCPHost)) - boolInt(slices.ContainsFunc(rc.Connect, spec.Endpoint.Loopback)); got != len(prof.NotEnforced) {
			t.Errorf("%q: %d unenforced host entries, profile reports %d", eps, got, len(prof.NotEnforced))
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// baseline lists exactly the paths the generated baseline grants.
func TestDarwinBaselineMatchesProfile(t *testing.T) {
	quoted := regexp.MustCompile(`"(/[^"]*)"`)
	paths := func(text string) []string {
		var out []string
		for _, m := range quoted.FindAllStringSubmatch(text, -1) {
			if !slices.Contains(out, m[1]) {
				out = append(out, m[1])
			}
		}
		slices.Sort(out)
		return out
	}
	var want []string
	for _, b := range baseline {
		want = append(want, b.Path)
	}
	slices.Sort(want)
	prof, err := seatbelt.Generate(seatbelt.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	if got := paths(prof.Text); !slices.Equal(got, want) {
		t.Errorf("baseline paths in the profile:\n%q\ndarwinBaseline:\n%q", got, want)
	}
	prof, err = seatbelt.Generate(seatbelt.Policy{TCPConnect: []seatbelt.Endpoint{{Host: "example.com", Port: 443}}})
	if err != nil {
		t.Fatal(err)
	}
	want = append(want, resolverSocket, tlsDir, hostsFile)
	slices.Sort(want)
	if got := paths(prof.Text); !slices.Equal(got, want) {
		t.Errorf("paths with a remote endpoint:\n%q\nwant\n%q", got, want)
	}
}

func TestSeatbeltProfile(t *testing.T) {
	dir := safeDir(t)
	ws, data := filepath.Join(dir, "ws"), filepath.Join(dir, "data")
	for _, d := range []string{ws, data} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(dir, "data-link")
	if err := os.Symlink(data, link); err != nil {
		t.Fatal(err)
	}
	text, params, err := SeatbeltProfile(spec.Config{
		AllowedWritePaths: []string{ws},
		AllowedReadPaths:  []string{link},
		AllowedTCPConnect: []string{"localhost:8080"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"R0=" + data, "W0=" + ws}; !slices.Equal(params, want) {
		t.Errorf("params = %q, want %q (symlink resolved)", params, want)
	}
	if !strings.HasPrefix(text, "(version 1)\n(deny default)\n") || strings.Contains(text, dir) {
		t.Errorf("profile text: deny default missing or a path in the text")
	}
	checkSBPL(t, text)

	_, _, err = SeatbeltProfile(spec.Config{AllowedReadPaths: []string{"relative"}})
	var ce *spec.ConfigError
	if !errors.Is(err, spec.ErrInvalidConfig) || !errors.As(err, &ce) || ce.Field != "allowed_read_paths" {
		t.Errorf("relative path: %v, want a *ConfigError for allowed_read_paths", err)
	}

	// Off macOS /tmp is a real directory; a profile naming it would never
	// match on a Mac, so it is refused with the path a Mac would need.
	if fi, err := os.Lstat("/tmp"); err == nil && fi.IsDir() && runtime.GOOS != "darwin" {
		_, _, err := SeatbeltProfile(spec.Config{AllowedWritePaths: []string{"/tmp"}})
		if !errors.As(err, &ce) || ce.Field != "allowed_write_paths" || !strings.Contains(err.Error(), "/private/tmp") {
			t.Errorf("/tmp off macOS: %v, want a *ConfigError naming /private/tmp", err)
		}
	}
}
