package seatbelt

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden profiles in testdata/*.sb")

// dirs returns an IsDir that answers true exactly for the given paths.
func dirs(ds ...string) func(string) bool {
	set := map[string]bool{}
	for _, d := range ds {
		set[d] = true
	}
	return func(p string) bool { return set[p] }
}

// mustCheck generates p and runs the profile checker on it.
func mustCheck(t *testing.T, p Policy) (Profile, *analysis) {
	t.Helper()
	prof, err := Generate(p)
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	a, err := analyzeProfile(prof)
	if err != nil {
		t.Fatalf("profile check: %v\n%s", err, prof.Text)
	}
	return prof, a
}

// noUserText fails if any user path or host appears anywhere in the text.
func noUserText(t *testing.T, prof Profile, p Policy) {
	t.Helper()
	var user []string
	user = append(user, p.ReadPaths...)
	user = append(user, p.WritePaths...)
	user = append(user, p.ExecPaths...)
	user = append(user, p.GitDirs...)
	user = append(user, p.LibraryPaths...)
	if p.DeveloperDir != "" {
		user = append(user, p.DeveloperDir)
	}
	for _, ep := range p.TCPConnect {
		if ep.Host != "" && ep.Host != "*" && ep.Host != "localhost" {
			user = append(user, ep.Host)
		}
	}
	for _, u := range user {
		// A shim's own path is part of a constant rule (the perl regex
		// holds /usr/bin/perl) when the policy asks for that shim.
		if p.PerlShim && u == PerlShim || p.ShellShim && u == ShellShim || p.XcrunShim && slices.Contains(XcrunShims, u) {
			continue
		}
		if strings.Contains(prof.Text, u) {
			t.Errorf("user text %q appears in the profile", u)
		}
	}
}

var goldenCases = []struct {
	name        string
	policy      Policy
	params      []Param
	notEnforced []string
}{
	{
		name: "workspace",
		policy: Policy{
			ReadPaths:        []string{"/usr/share/dict"},
			WritePaths:       []string{"/private/tmp/ws"},
			ExecPaths:        []string{"/bin/sh", "/usr/bin"},
			IsDir:            dirs("/usr/share/dict", "/private/tmp/ws", "/usr/bin"),
			AllowSpawn:       true,
			AllowUnixSockets: true,
		},
		params: []Param{{"R0", "/usr/share/dict"}, {"W0", "/private/tmp/ws"}, {"X0", "/bin/sh"}, {"X1", "/usr/bin"}},
	},
	{
		name: "readonly",
		policy: Policy{
			ReadPaths: []string{"/private/tmp/data"},
			ExecPaths: []string{"/bin/cat"},
			IsDir:     dirs("/private/tmp/data"),
		},
		params: []Param{{"R0", "/private/tmp/data"}, {"X0", "/bin/cat"}},
	},
	{
		name: "network",
		policy: Policy{
			ExecPaths:  []string{"/usr/bin/curl"},
			IsDir:      dirs(),
			TCPConnect: []Endpoint{{Host: "localhost", Port: 8080}, {Host: "example.com", Port: 443}},
		},
		params:      []Param{{"X0", "/usr/bin/curl"}},
		notEnforced: []string{`host of "example.com:443" not enforced: Seatbelt network filters accept only "localhost" or "*"; allowed as *:443`},
	},
	{
		name: "camera",
		policy: Policy{
			ExecPaths: []string{"/opt/homebrew/bin/imagesnap"},
			IsDir:     dirs(),
			Camera:    true,
		},
		params: []Param{{"X0", "/opt/homebrew/bin/imagesnap"}},
	},
	{
		name: "shims",
		policy: Policy{
			ExecPaths: []string{"/bin/sh", "/usr/bin/perl", "/usr/bin/git"},
			IsDir:     dirs(),
			ShellShim: true, PerlShim: true, XcrunShim: true,
		},
		params: []Param{{"X0", "/bin/sh"}, {"X1", "/usr/bin/perl"}, {"X2", "/usr/bin/git"}},
	},
	{
		name: "loopback",
		policy: Policy{
			ExecPaths:  []string{"/usr/bin/curl"},
			IsDir:      dirs(),
			TCPConnect: []Endpoint{{Host: "localhost", Port: 8080}, {Host: "::1", Port: 8081}},
		},
		params: []Param{{"X0", "/usr/bin/curl"}},
	},
	{
		name: "notrustd",
		policy: Policy{
			ExecPaths:  []string{"/usr/bin/curl"},
			IsDir:      dirs(),
			TCPConnect: []Endpoint{{Host: "*", Port: 443}},
			NoTrustd:   true,
		},
		params: []Param{{"X0", "/usr/bin/curl"}},
	},
	{
		name: "git",
		policy: Policy{
			WritePaths:          []string{"/Users/me/ws"},
			ExecPaths:           []string{"/usr/bin/git", "/usr/bin/python3"},
			LibraryPaths:        []string{"/opt/homebrew/opt/pcre2/lib/libpcre2-8.0.dylib"},
			IsDir:               dirs("/Users/me/ws", "/opt/homebrew/opt/pcre2/lib/libpcre2-8.0.dylib"),
			AllowSpawn:          true,
			XcrunShim:           true,
			DeveloperDir:        "/Applications/Xcode.app/Contents/Developer",
			ExecWritePaths:      true,
			GitProtection:       true,
			PythonSemaphores:    true,
			Terminal:            "/dev/ttys004",
			ControllingTerminal: true,
		},
		params: []Param{{"W0", "/Users/me/ws"}, {"X0", "/usr/bin/git"}, {"X1", "/usr/bin/python3"},
			{"L0", "/opt/homebrew/opt/pcre2/lib/libpcre2-8.0.dylib"},
			{"T0", "/dev/ttys004"}, {"D0", "/Applications/Xcode.app/Contents/Developer"}},
	},
	{
		name: "server",
		policy: Policy{
			WritePaths: []string{"/private/tmp/site"},
			ExecPaths:  []string{"/usr/bin/python3"},
			IsDir:      dirs("/private/tmp/site"),
			TCPBind:    []uint16{8000},
		},
		params: []Param{{"W0", "/private/tmp/site"}, {"X0", "/usr/bin/python3"}},
	},
}

// goldenPolicy is the policy of the golden case called name.
func goldenPolicy(name string) Policy {
	for _, tc := range goldenCases {
		if tc.name == name {
			return tc.policy
		}
	}
	panic("no golden case " + name)
}

func TestGolden(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			prof, _ := mustCheck(t, tc.policy)
			noUserText(t, prof, tc.policy)
			if !reflect.DeepEqual(prof.Params, tc.params) {
				t.Errorf("Params = %q, want %q", prof.Params, tc.params)
			}
			if !reflect.DeepEqual(prof.NotEnforced, tc.notEnforced) {
				t.Errorf("NotEnforced = %q, want %q", prof.NotEnforced, tc.notEnforced)
			}
			golden := filepath.Join("testdata", tc.name+".sb")
			if *update {
				if err := os.WriteFile(golden, []byte(prof.Text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestGolden -update to create it)", err)
			}
			if prof.Text != string(want) {
				t.Errorf("profile differs from %s (rerun with -update if intended):\n%s", golden, prof.Text)
			}
		})
	}
}

func TestGoldenContents(t *testing.T) {
	// Spot checks that do not depend on the golden files being right.
	ws, a := mustCheck(t, goldenCases[0].policy)
	for _, want := range []string{
		`(allow file-read* (subpath (param "R0")))`,
		`(allow file-read* file-write* (subpath (param "W0")))`,
		`(allow process-exec* (literal (param "X0")))`,
		`(allow process-exec* (subpath (param "X1")))`,
		`(allow process-fork)`,
		`(allow network-bind (local unix-socket (subpath (param "W0"))))`,
		`(allow network-outbound (remote unix-socket (subpath (param "W0"))))`,
	} {
		if !strings.Contains(ws.Text, want) {
			t.Errorf("workspace profile lacks %s", want)
		}
	}
	for _, p := range a.sortedPairs() {
		if strings.HasPrefix(p, "network-outbound remote(tcp)") || strings.HasPrefix(p, "network-inbound") || strings.HasPrefix(p, "device-") {
			t.Errorf("workspace profile has %q", p)
		}
	}

	net, a := mustCheck(t, goldenCases[2].policy)
	if got, want := a.netAddrs, []string{"localhost:8080", "*:443"}; !reflect.DeepEqual(got, want) {
		t.Errorf("network addresses = %q, want %q", got, want)
	}
	for _, want := range []string{
		`(allow network-outbound (literal "/private/var/run/mDNSResponder"))`,
		`(allow mach-lookup (global-name "com.apple.trustd.agent"))`,
		`(allow system-socket (socket-domain AF_UNIX))`,
	} {
		if !strings.Contains(net.Text, want) {
			t.Errorf("network profile lacks %s", want)
		}
	}
	if strings.Contains(net.Text, "unix-socket") {
		t.Error("network profile grants unix-socket paths without AllowUnixSockets")
	}

	srv, a := mustCheck(t, goldenPolicy("server"))
	if got, want := a.netAddrs, []string{"*:8000", "*:8000"}; !reflect.DeepEqual(got, want) {
		t.Errorf("server addresses = %q, want %q", got, want)
	}
	for _, want := range []string{`(allow network-bind (local tcp "*:8000"))`, `(allow network-inbound (local tcp "*:8000"))`} {
		if !strings.Contains(srv.Text, want) {
			t.Errorf("server profile lacks %s", want)
		}
	}

	cam, a := mustCheck(t, goldenCases[3].policy)
	if !a.pairs["device-camera "] || a.pairs["device-microphone "] {
		t.Errorf("camera profile pairs: %q", a.sortedPairs())
	}
	if !strings.Contains(cam.Text, "(allow device-camera)") {
		t.Error("camera profile lacks (allow device-camera)")
	}
}

func TestZeroPolicy(t *testing.T) {
	prof, a := mustCheck(t, Policy{})
	if len(prof.Params) != 0 || len(prof.NotEnforced) != 0 {
		t.Errorf("zero policy: Params %q NotEnforced %q", prof.Params, prof.NotEnforced)
	}
	for p := range a.pairs {
		for _, bad := range []string{"process-exec", "process-fork", "file-write*", "network-", "system-socket", "device-"} {
			if strings.HasPrefix(p, bad) {
				t.Errorf("zero policy allows %q", p)
			}
		}
	}
	if !strings.Contains(prof.Text, "; none: process-exec is denied") {
		t.Error("zero policy does not explain that nothing can be executed")
	}
	// Writes are limited to the data of /dev/null, /dev/tty and the
	// process's own descriptors (/dev/fd, /dev/std*): the checker holds
	// file-write-data to exactly those constants.
	if got := pairsWithPrefix(a, "file-write"); !reflect.DeepEqual(got, []string{"file-write-data literal", "file-write-data subpath"}) {
		t.Errorf("zero policy write pairs: %q", pairsWithPrefix(a, "file-write"))
	}
}

func pairsWithPrefix(a *analysis, prefix string) []string {
	var out []string
	for _, p := range a.sortedPairs() {
		if strings.HasPrefix(p, prefix) {
			out = append(out, p)
		}
	}
	return out
}

func TestFlagsOnlyWhenGranted(t *testing.T) {
	base := Policy{ExecPaths: []string{"/bin/sh"}, WritePaths: []string{"/private/tmp/w"}}
	_, off := mustCheck(t, base)
	for _, tc := range []struct {
		name  string
		set   func(*Policy)
		pairs []string
	}{
		{"AllowSpawn", func(p *Policy) { p.AllowSpawn = true }, []string{"process-fork ", "signal target(same-sandbox)"}},
		{"Camera", func(p *Policy) { p.Camera = true }, []string{"device-camera "}},
		{"Microphone", func(p *Policy) { p.Microphone = true }, []string{"device-microphone "}},
		{"AllowUnixSockets", func(p *Policy) { p.AllowUnixSockets = true }, []string{
			"system-socket socket-domain",
			"network-bind local(unix-socket(subpath(param)))",
			"network-outbound remote(unix-socket(subpath(param)))",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := base
			tc.set(&p)
			_, on := mustCheck(t, p)
			var added []string
			for k := range on.pairs {
				if !off.pairs[k] {
					added = append(added, k)
				}
			}
			for _, want := range tc.pairs {
				if off.pairs[want] {
					t.Errorf("%q present without %s", want, tc.name)
				}
				if !on.pairs[want] {
					t.Errorf("%q missing with %s", want, tc.name)
				}
			}
			if len(added) != len(tc.pairs) {
				t.Errorf("%s added %q, want exactly %q", tc.name, added, tc.pairs)
			}
		})
	}
}

func TestUnixSocketsScopedToWritePaths(t *testing.T) {
	p := Policy{
		ReadPaths:        []string{"/private/tmp/r"},
		WritePaths:       []string{"/private/tmp/w1", "/private/tmp/w2"},
		AllowUnixSockets: true,
	}
	prof, _ := mustCheck(t, p)
	for _, w := range []string{"W0", "W1"} {
		for _, want := range []string{
			`(allow network-bind (local unix-socket (subpath (param "` + w + `"))))`,
			`(allow network-outbound (remote unix-socket (subpath (param "` + w + `"))))`,
		} {
			if !strings.Contains(prof.Text, want) {
				t.Errorf("missing %s", want)
			}
		}
	}
	if strings.Contains(prof.Text, `unix-socket (subpath (param "R0"))`) {
		t.Error("unix sockets allowed inside a ReadPaths entry")
	}
	// The checker refuses an unscoped unix-socket rule.
	bad := prof
	bad.Text += "(allow network-outbound (remote unix-socket))\n"
	if _, err := analyzeProfile(bad); err == nil {
		t.Error("checker accepted an unscoped unix-socket rule")
	}
}

func TestNetworkMapping(t *testing.T) {
	const ne = ` not enforced: Seatbelt network filters accept only "localhost" or "*"; allowed as *:`
	for _, tc := range []struct {
		host        string
		addr        string
		notEnforced string
		resolver    bool
	}{
		{"localhost", "localhost:80", "", false},
		{"LocalHost.", "localhost:80", "", false},
		{"127.0.0.1", "localhost:80", "", false},
		{"127.1.2.3", "localhost:80", "", false},
		{"::1", "localhost:80", "", false},
		{"[::1]", "localhost:80", "", false},
		{"::ffff:127.0.0.1", "localhost:80", "", false},
		{"", "*:80", "", true},
		{"*", "*:80", "", true},
		{"example.com", "*:80", `host of "example.com:80"` + ne + "80", true},
		{"api.example.com.", "*:80", `host of "api.example.com.:80"` + ne + "80", true},
		{"10.0.0.5", "*:80", `host of "10.0.0.5:80"` + ne + "80", false},
		{"2001:db8::1", "*:80", `host of "[2001:db8::1]:80"` + ne + "80", false},
		{"[2001:db8::1]", "*:80", `host of "[2001:db8::1]:80"` + ne + "80", false},
		{"::ffff:10.0.0.1", "*:80", `host of "[::ffff:10.0.0.1]:80"` + ne + "80", false},
	} {
		t.Run(tc.host, func(t *testing.T) {
			p := Policy{TCPConnect: []Endpoint{{Host: tc.host, Port: 80}}}
			prof, a := mustCheck(t, p)
			if !reflect.DeepEqual(a.netAddrs, []string{tc.addr}) {
				t.Errorf("addresses = %q, want [%q]", a.netAddrs, tc.addr)
			}
			var wantNE []string
			if tc.notEnforced != "" {
				wantNE = []string{tc.notEnforced}
			}
			if !reflect.DeepEqual(prof.NotEnforced, wantNE) {
				t.Errorf("NotEnforced = %q, want %q", prof.NotEnforced, wantNE)
			}
			if got := strings.Contains(prof.Text, "mDNSResponder"); got != tc.resolver {
				t.Errorf("resolver allowed = %v, want %v", got, tc.resolver)
			}
			// The network helpers come exactly with the resolver.
			for _, helper := range []string{"com.apple.SystemConfiguration.DNSConfiguration", "com.apple.SystemConfiguration.configd", `(sysctl-name-prefix "net.routetable")`} {
				if got := strings.Contains(prof.Text, helper); got != tc.resolver {
					t.Errorf("%s allowed = %v, want %v (as the resolver)", helper, got, tc.resolver)
				}
			}
			// A host that is a name is looked up in the hosts file first.
			isName := tc.resolver || strings.EqualFold(strings.TrimSuffix(tc.host, "."), "localhost")
			if got := strings.Contains(prof.Text, `(allow file-read* (literal "/private/etc/hosts"))`); got != isName {
				t.Errorf("hosts file readable = %v, want %v", got, isName)
			}
			if got, want := strings.Contains(prof.Text, "trustd"), strings.HasPrefix(tc.addr, "*"); got != want {
				t.Errorf("trustd allowed = %v, want %v", got, want)
			}
			noUserText(t, prof, p)
		})
	}
}

func TestNetworkDedup(t *testing.T) {
	p := Policy{
		TCPConnect: []Endpoint{{Host: "a.example", Port: 443}, {Host: "b.example", Port: 443}, {Host: "*", Port: 443}, {Host: "localhost", Port: 5432}, {Host: "127.0.0.1", Port: 5432}},
		TCPBind:    []uint16{9000, 9000},
	}
	prof, a := mustCheck(t, p)
	if want := []string{"*:443", "localhost:5432", "*:9000", "*:9000"}; !reflect.DeepEqual(a.netAddrs, want) {
		t.Errorf("addresses = %q, want %q", a.netAddrs, want)
	}
	if len(prof.NotEnforced) != 2 {
		t.Errorf("NotEnforced = %q, want one line per named host", prof.NotEnforced)
	}
}

func TestPathsDedupAndIsDir(t *testing.T) {
	calls := map[string]int{}
	p := Policy{
		ReadPaths:  []string{"/private/tmp/a", "/private/tmp/f", "/private/tmp/a"},
		WritePaths: []string{"/private/tmp/a"},
		IsDir: func(s string) bool {
			calls[s]++
			return s == "/private/tmp/a"
		},
	}
	prof, _ := mustCheck(t, p)
	want := []Param{{"R0", "/private/tmp/a"}, {"R1", "/private/tmp/f"}, {"W0", "/private/tmp/a"}}
	if !reflect.DeepEqual(prof.Params, want) {
		t.Errorf("Params = %q, want %q", prof.Params, want)
	}
	for _, r := range []string{
		`(allow file-read* (subpath (param "R0")))`,
		`(allow file-read* (literal (param "R1")))`,
		`(allow file-read* file-write* (subpath (param "W0")))`,
	} {
		if !strings.Contains(prof.Text, r) {
			t.Errorf("missing %s", r)
		}
	}
	if calls["/private/tmp/a"] != 2 || calls["/private/tmp/f"] != 1 {
		t.Errorf("IsDir calls = %v, want once per distinct path per list", calls)
	}

	// nil IsDir: every path is a directory.
	prof, _ = mustCheck(t, Policy{ExecPaths: []string{"/bin/ls"}})
	if !strings.Contains(prof.Text, `(allow process-exec* (subpath (param "X0")))`) {
		t.Error("nil IsDir did not use subpath")
	}
}

func TestDeterministic(t *testing.T) {
	p := goldenCases[0].policy
	p.TCPConnect = []Endpoint{{Host: "example.com", Port: 443}, {Host: "localhost", Port: 1}}
	p.TCPBind = []uint16{3000}
	first, err := Generate(p)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		again, err := Generate(p)
		if err != nil || !reflect.DeepEqual(first, again) {
			t.Fatalf("run %d differs (err %v)", i, err)
		}
	}
}

func TestRejects(t *testing.T) {
	long := "/" + strings.Repeat("a", 1024)
	for _, tc := range []struct {
		name   string
		policy Policy
		msg    string
	}{
		{"empty", Policy{ReadPaths: []string{""}}, "ReadPaths[0]"},
		{"relative", Policy{ReadPaths: []string{"private/tmp"}}, "not absolute"},
		{"dot", Policy{WritePaths: []string{"."}}, "not absolute"},
		{"dotdot", Policy{ReadPaths: []string{"/private/tmp/../etc"}}, "not clean"},
		{"dot component", Policy{ReadPaths: []string{"/private/./tmp"}}, "not clean"},
		{"double slash", Policy{ReadPaths: []string{"/private//tmp"}}, "not clean"},
		{"trailing slash", Policy{ExecPaths: []string{"/usr/bin/"}}, "not clean"},
		{"NUL", Policy{ReadPaths: []string{"/private/tmp/a\x00b"}}, "NUL"},
		{"newline", Policy{WritePaths: []string{"/private/tmp/a\nb"}}, "control character U+000A"},
		{"carriage return", Policy{WritePaths: []string{"/private/tmp/a\rb"}}, "control character U+000D"},
		{"tab", Policy{ReadPaths: []string{"/private/tmp/a\tb"}}, "control character U+0009"},
		{"escape", Policy{ReadPaths: []string{"/private/tmp/\x1b[31m"}}, "control character U+001B"},
		{"DEL", Policy{ReadPaths: []string{"/private/tmp/\x7f"}}, "control character U+007F"},
		{"C1 control", Policy{ReadPaths: []string{"/private/tmp/\u0085"}}, "control character U+0085"},
		{"invalid UTF-8", Policy{ReadPaths: []string{"/private/tmp/\xff"}}, "UTF-8"},
		{"too long", Policy{ReadPaths: []string{long}}, "longer than 1024"},
		{"tmp symlink", Policy{WritePaths: []string{"/tmp/ws"}}, `"/private/tmp/ws"`},
		{"var symlink", Policy{WritePaths: []string{"/var/folders/x"}}, "/var"},
		{"etc symlink", Policy{ReadPaths: []string{"/etc"}}, "/etc"},
		{"second entry", Policy{ExecPaths: []string{"/bin/sh", "sh"}}, "ExecPaths[1]"},
		{"connect port 0", Policy{TCPConnect: []Endpoint{{Host: "localhost", Port: 0}}}, "port 0"},
		{"bind port 0", Policy{TCPBind: []uint16{8080, 0}}, "TCPBind[1]: port 0"},
		{"host with space", Policy{TCPConnect: []Endpoint{{Host: "exa mple.com", Port: 443}}}, "not"},
		{"host with quote", Policy{TCPConnect: []Endpoint{{Host: `a"b`, Port: 443}}}, "DNS name"},
		{"host with paren", Policy{TCPConnect: []Endpoint{{Host: `")(allow default)(`, Port: 443}}}, "DNS name"},
		{"host with port", Policy{TCPConnect: []Endpoint{{Host: "example.com:443", Port: 443}}}, "DNS name"},
		{"host newline", Policy{TCPConnect: []Endpoint{{Host: "a\nb", Port: 1}}}, "DNS name"},
		{"empty label", Policy{TCPConnect: []Endpoint{{Host: "a..b", Port: 1}}}, "DNS name"},
		{"leading hyphen", Policy{TCPConnect: []Endpoint{{Host: "-a.example", Port: 1}}}, "DNS name"},
		{"long label", Policy{TCPConnect: []Endpoint{{Host: strings.Repeat("a", 64) + ".example", Port: 1}}}, "DNS name"},
		{"unicode host", Policy{TCPConnect: []Endpoint{{Host: "bücher.example", Port: 1}}}, "DNS name"},
		{"zone", Policy{TCPConnect: []Endpoint{{Host: "fe80::1%en0", Port: 1}}}, "zones"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prof, err := Generate(tc.policy)
			if err == nil {
				t.Fatalf("accepted; profile:\n%s", prof.Text)
			}
			if !errors.Is(err, ErrInvalidPolicy) {
				t.Errorf("error %v does not wrap ErrInvalidPolicy", err)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q does not mention %q", err, tc.msg)
			}
			if strings.ContainsAny(err.Error(), "\n\r\x00") {
				t.Errorf("error %q contains raw control characters", err)
			}
			if !reflect.DeepEqual(prof, Profile{}) {
				t.Errorf("non-zero Profile returned with error")
			}
		})
	}
}

func TestAcceptsOddButValidPaths(t *testing.T) {
	// Characters that are meaningful in SBPL or in argv are fine in a path,
	// because paths only travel as parameter values.
	for _, path := range []string{
		"/",
		`/private/tmp/a"b`,
		`/private/tmp/a\b`,
		`/private/tmp/(allow default)`,
		`/private/tmp/")(allow default)(`,
		"/private/tmp/a=b=c",
		"/private/tmp/-D",
		"/private/tmp/; comment",
		`/private/tmp/#"re"`,
		"/private/tmp/日本語 ✓",
		"/private/tmp/\u2028",
		"/tmpfoo",
		"/private/" + strings.Repeat("a", 1015),
	} {
		prof, _ := mustCheck(t, Policy{ReadPaths: []string{path}, WritePaths: []string{path}, ExecPaths: []string{path}, AllowUnixSockets: true})
		_, params, _, err := decodeArgs(prof.Args("/bin/true"))
		if err != nil {
			t.Fatalf("%q: %v", path, err)
		}
		for _, n := range []string{"R0", "W0", "X0"} {
			if params[n] != path {
				t.Errorf("%q: param %s decodes to %q", path, n, params[n])
			}
		}
	}
}

func TestArgs(t *testing.T) {
	prof := Profile{
		Text:   "(version 1)\n(deny default)\n",
		Params: []Param{{"R0", "/private/tmp/a=b"}, {"W0", "/private/tmp/w"}},
	}
	got := prof.Args("/bin/echo", "-n", "--", "hi")
	want := []string{
		"-p", "(version 1)\n(deny default)\n",
		"-D", "R0=/private/tmp/a=b",
		"-D", "W0=/private/tmp/w",
		"--", "/bin/echo", "-n", "--", "hi",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Args = %q\nwant %q", got, want)
	}
	text, params, cmd, err := decodeArgs(got)
	if err != nil {
		t.Fatal(err)
	}
	if text != prof.Text || params["R0"] != "/private/tmp/a=b" || params["W0"] != "/private/tmp/w" || len(params) != 2 {
		t.Errorf("decoded text %q params %q", text, params)
	}
	if !reflect.DeepEqual(cmd, []string{"/bin/echo", "-n", "--", "hi"}) {
		t.Errorf("decoded command %q", cmd)
	}
	// "--" is what keeps a command that looks like an option from being
	// parsed as one.
	_, _, cmd, err = decodeArgs(Profile{Text: "x"}.Args("-n"))
	if err != nil || !reflect.DeepEqual(cmd, []string{"-n"}) {
		t.Errorf("command %q err %v", cmd, err)
	}
	if got := (Profile{}).Args("/bin/true"); !reflect.DeepEqual(got, []string{"-p", "", "--", "/bin/true"}) {
		t.Errorf("empty profile Args = %q", got)
	}
}

func TestSBPLQuote(t *testing.T) {
	for in, want := range map[string]string{
		"":              `""`,
		"/usr/lib":      `"/usr/lib"`,
		`a"b`:           `"a\"b"`,
		`a\b`:           `"a\\b"`,
		`")(allow x)(`:  `"\")(allow x)("`,
		"日本":            `"日本"`,
		`\"`:            `"\\\""`,
		"localhost:443": `"localhost:443"`,
	} {
		got, err := sbplQuote(in)
		if err != nil || got != want {
			t.Errorf("sbplQuote(%q) = %q, %v; want %q", in, got, err, want)
			continue
		}
		// Round trip through the independent reader.
		forms, err := parseSBPL(got)
		if err != nil || len(forms) != 1 || forms[0].kind != sString || forms[0].text != in {
			t.Errorf("reader(%s) = %v, %v", got, forms, err)
		}
	}
	for _, bad := range []string{"a\nb", "a\x00", "\x1b", "\u0085", "\xff"} {
		if q, err := sbplQuote(bad); err == nil {
			t.Errorf("sbplQuote(%q) = %q, want error", bad, q)
		}
	}
}

func TestReader(t *testing.T) {
	forms, err := parseSBPL("; c\n(version 1) ; trailing\n(allow x (regex #\"^/a\\\"b[0-9]+$\") (s \"q\\\\\\\"\") -12 #t)")
	if err != nil {
		t.Fatal(err)
	}
	if len(forms) != 2 || forms[1].items[2].items[1].kind != sRegex || forms[1].items[2].items[1].text != `^/a\"b[0-9]+$` ||
		forms[1].items[3].items[1].text != `q\"` || forms[1].items[4].kind != sNumber || forms[1].items[5].kind != sSymbol {
		t.Errorf("parsed %v", forms)
	}
	for _, bad := range []string{
		"(", ")", "(a))", "(a", `("abc)`, `("a\nb")`, `("a\tb")`, `("\x")`, `("\n")`, "('a)", "(`a)", `(#"abc)`, "(a\x01)",
	} {
		if f, err := parseSBPL(bad); err == nil {
			t.Errorf("parseSBPL(%q) = %v, want error", bad, f)
		}
	}
}

// TestCheckerRejects makes sure the checker is not vacuous: each mutation of
// a valid profile must be refused.
func TestCheckerRejects(t *testing.T) {
	good, _ := mustCheck(t, goldenCases[0].policy)
	for _, tc := range []struct{ name, text string }{
		{"allow default", good.Text + "(allow default)\n"},
		{"unknown operation", good.Text + "(allow file-write-unlink (literal \"/dev/null\"))\n"},
		{"wildcard operation", good.Text + "(allow network*)\n"},
		{"unfiltered write", good.Text + "(allow file-write*)\n"},
		{"unknown filter", good.Text + "(allow file-read* (vnode-type REGULAR-FILE))\n"},
		{"constant user path", good.Text + "(allow file-read* (subpath \"/Users\"))\n"},
		{"undefined param", good.Text + "(allow file-read* (subpath (param \"R9\")))\n"},
		{"named host", good.Text + "(allow network-outbound (remote tcp \"example.com:443\"))\n"},
		{"ip host", good.Text + "(allow network-outbound (remote tcp \"1.2.3.4:443\"))\n"},
		{"port 0 text", good.Text + "(allow network-outbound (remote tcp \"*:0\"))\n"},
		{"big port", good.Text + "(allow network-outbound (remote tcp \"*:65536\"))\n"},
		{"udp", good.Text + "(allow network-outbound (remote udp \"*:53\"))\n"},
		{"other mach", good.Text + "(allow mach-lookup (global-name \"com.apple.pasteboard.1\"))\n"},
		{"procargs", good.Text + "(allow sysctl-read (sysctl-name \"kern.procargs2\"))\n"},
		{"deny rule", good.Text + "(deny file-read*)\n"},
		{"unbalanced", good.Text + "(allow process-fork\n"},
		{"bad start", strings.Replace(good.Text, "(deny default)", "(allow default)", 1)},
		{"version 2", strings.Replace(good.Text, "(version 1)", "(version 2)", 1)},
		{"mismatched filter", good.Text + "(allow process-exec* (global-name \"com.apple.trustd.agent\"))\n"},
		{"socket outside writes", good.Text + "(allow network-outbound (remote unix-socket (subpath (param \"R0\"))))\n"},
		{"other socket literal", good.Text + "(allow network-outbound (literal \"/dev/null\"))\n"},
		{"non-ASCII", good.Text + "; é\n"},
		{"no early deny", strings.Replace(good.Text, thirdForm+"\n", "", 1)},
		{"early deny weakened", strings.Replace(good.Text, thirdForm, "(deny nvram*)", 1)},
		{"map-executable not denied", strings.Replace(good.Text, thirdForm, "(deny process-info* iokit-get-properties nvram*)", 1)},
		{"read path mapped", good.Text + "(allow file-map-executable (subpath (param \"R0\")))\n"},
		{"read path executed", good.Text + "(allow process-exec* (subpath (param \"R0\")))\n"},
		{"tty ioctl without a terminal", good.Text + "(allow file-ioctl (literal \"/dev/tty\"))\n"},
		{"other semaphores", good.Text + "(allow ipc-posix-sem (ipc-posix-name-prefix \"/\"))\n"},
		{"unfiltered semaphores", good.Text + "(allow ipc-posix-sem)\n"},
		{"ancestor listed", good.Text + "(allow file-read* (literal \"/System\"))\n"},
		{"other deny regex", good.Text + "(deny file-write* (regex #\"^/x$\"))\n"},
		{"root listed recursively", good.Text + "(allow file-read* (subpath \"/\"))\n"},
		{"root writable", good.Text + "(allow file-write-data (literal \"/\"))\n"},
		{"root mapped", good.Text + "(allow file-map-executable (literal \"/\"))\n"},
		{"root symlink read", good.Text + "(allow file-read* (literal \"/etc\"))\n"},
		{"root symlink subtree", good.Text + "(allow file-read-metadata (subpath \"/var\"))\n"},
		{"other regex", good.Text + "(allow process-exec* (regex #\"^/usr/bin/\"))\n"},
		{"write to shared data", good.Text + "(allow file-write-data (subpath \"/usr/share\"))\n"},
		{"other net sysctl", good.Text + "(allow sysctl-read (sysctl-name-prefix \"net.inet\"))\n"},
		{"route sysctl as name", good.Text + "(allow sysctl-read (sysctl-name \"net.routetable.0\"))\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := good
			bad.Text = tc.text
			if _, err := analyzeProfile(bad); err == nil {
				t.Error("checker accepted the mutated profile")
			}
		})
	}
	// With GitProtection: nothing may follow the denies, which must win.
	git, _ := mustCheck(t, goldenPolicy("git"))
	for _, tc := range []struct{ name, text string }{
		{"allow after the git deny", git.Text + "(allow file-write* (subpath (param \"W0\")))\n"},
		{"library executed", strings.Replace(git.Text, thirdForm, thirdForm+"\n(allow process-exec* (literal (param \"L0\")))", 1)},
		{"library as a tree", strings.Replace(git.Text, thirdForm, thirdForm+"\n(allow file-read* (subpath (param \"L0\")))", 1)},
		{"git deny weakened", strings.Replace(git.Text, `(regex #"^.*/[^/]*[.][gG][iI][tT]$")`, "", 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := git
			bad.Text = tc.text
			if _, err := analyzeProfile(bad); err == nil {
				t.Error("checker accepted the mutated profile")
			}
		})
	}
	unused := good
	unused.Params = append(append([]Param(nil), good.Params...), Param{"R7", "/x"})
	if _, err := analyzeProfile(unused); err == nil {
		t.Error("checker accepted an unreferenced parameter")
	}
}
