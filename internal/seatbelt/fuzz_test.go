package seatbelt

import (
	"errors"
	"path"
	"reflect"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

const benignPath = "/private/tmp/benign"

// fuzzPolicy puts path in every path list, with every path-dependent feature
// on, so that any way a path could leak into the profile is exercised.
// GitDirs is left out: its entries bring longer paths (DIR/config.worktree)
// that a path of PATH_MAX bytes cannot have; TestGitDirsOddPaths covers it.
func fuzzPolicy(path string, dir bool) Policy {
	return Policy{
		ReadPaths:        []string{path},
		WritePaths:       []string{path},
		ExecPaths:        []string{path},
		LibraryPaths:     []string{path},
		IsDir:            func(string) bool { return dir },
		AllowSpawn:       true,
		AllowUnixSockets: true,
		TCPConnect:       []Endpoint{{Host: "localhost", Port: 8080}, {Host: "example.com", Port: 443}},
		TCPBind:          []uint16{3000},
		Camera:           true,
		Microphone:       true,
		ShellShim:        true,
		PerlShim:         true,
		XcrunShim:        true,
		DeveloperDir:     path,
		GitProtection:    true,
		ExecWritePaths:   true,
		PythonSemaphores: true,
	}
}

var fuzzSeeds = []string{
	benignPath,
	"/",
	"",
	"relative/path",
	"/private/tmp/../etc",
	`/private/tmp/a"b`,
	`/private/tmp/a\b`,
	`/private/tmp/a\"b`,
	`/private/tmp/(x)`,
	`/private/tmp/")(allow default)(`,
	`/private/tmp/"))(allow default)(deny (literal "`,
	`/private/tmp/(param "R0")`,
	"/private/tmp/a\n(allow default)",
	"/private/tmp/a\r\nb",
	"/private/tmp/a\x00b",
	"/private/tmp/; comment",
	`/private/tmp/#"regex"`,
	"/private/tmp/a=b",
	"/private/tmp/=",
	"/private/tmp/-D",
	"/private/tmp/--",
	"/private/tmp/日本語",
	"/private/tmp/emoji 🙂",
	"/private/tmp/\u2028\u2029",
	"/private/tmp/\u200b\ufeff",
	"/private/tmp/\u0085",
	"/private/tmp/\xff\xfe",
	"/tmp/x",
	"/var",
	"/private/tmp/" + strings.Repeat("x", 1011),
}

// oracleValid is an independent statement of which paths must be accepted.
func oracleValid(p string) bool {
	if p == "" || p[0] != '/' || path.Clean(p) != p || len(p) > 1024 || !utf8.ValidString(p) {
		return false
	}
	for _, r := range p {
		if unicode.IsControl(r) {
			return false
		}
	}
	for _, l := range []string{"/tmp", "/var", "/etc"} {
		if p == l || strings.HasPrefix(p, l+"/") {
			return false
		}
	}
	return true
}

// FuzzGenerate checks that for any path Generate either rejects it, or the
// profile's parameters decode back to exactly that path and the profile is
// the very same text, with the same (operation, filter-kind) pairs, as for a
// fixed benign path: a path can change nothing but a parameter value.
func FuzzGenerate(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add(s)
	}
	type ref struct {
		prof  Profile
		pairs []string
	}
	refs := map[bool]ref{}
	for _, dir := range []bool{false, true} {
		prof, err := Generate(fuzzPolicy(benignPath, dir))
		if err != nil {
			f.Fatal(err)
		}
		a, err := analyzeProfile(prof)
		if err != nil {
			f.Fatal(err)
		}
		refs[dir] = ref{prof, a.sortedPairs()}
	}
	f.Fuzz(func(t *testing.T, p string) {
		for _, dir := range []bool{false, true} {
			prof, err := Generate(fuzzPolicy(p, dir))
			if err != nil {
				if !errors.Is(err, ErrInvalidPolicy) {
					t.Fatalf("error does not wrap ErrInvalidPolicy: %v", err)
				}
				if oracleValid(p) {
					t.Fatalf("valid path %q rejected: %v", p, err)
				}
				return
			}
			if !oracleValid(p) {
				t.Fatalf("invalid path %q accepted", p)
			}
			a, err := analyzeProfile(prof)
			if err != nil {
				t.Fatalf("profile check for %q: %v", p, err)
			}
			want := refs[dir]
			if prof.Text != want.prof.Text {
				t.Fatalf("profile text for %q differs from the benign profile", p)
			}
			if got := a.sortedPairs(); !reflect.DeepEqual(got, want.pairs) {
				t.Fatalf("(operation, filter) pairs for %q:\n%q\nwant\n%q", p, got, want.pairs)
			}
			if !reflect.DeepEqual(prof.NotEnforced, want.prof.NotEnforced) {
				t.Fatalf("NotEnforced for %q: %q", p, prof.NotEnforced)
			}
			text, params, cmd, err := decodeArgs(prof.Args("/bin/sh", "-c", p))
			if err != nil {
				t.Fatalf("decoding args for %q: %v", p, err)
			}
			if text != prof.Text {
				t.Fatalf("decoded profile text differs for %q", p)
			}
			wantParams := map[string]string{"R0": p, "W0": p, "X0": p, "L0": p, "D0": p}
			if !reflect.DeepEqual(params, wantParams) {
				t.Fatalf("params decode to %q, want %q", params, wantParams)
			}
			if !reflect.DeepEqual(cmd, []string{"/bin/sh", "-c", p}) {
				t.Fatalf("command decodes to %q", cmd)
			}
		}
	})
}

// FuzzGenerateHost checks that an endpoint host never reaches the profile
// text: whatever the host, the text is that of one of the canonical hosts of
// its class, and the only network hosts are localhost and *.
func FuzzGenerateHost(f *testing.F) {
	for _, s := range []string{"localhost", "LOCALHOST.", "127.0.0.1", "::1", "[::1]", "", "*", "example.com",
		"10.0.0.1", "2001:db8::1", `")(allow default)(`, "a\nb", "xn--bcher-kva.example", "a_b.example", "1.2.3",
		"::ffff:127.0.0.1", "fe80::1%en0", "localhost:80", "*.example.com"} {
		f.Add(s, uint16(443))
	}
	f.Add("example.com", uint16(0))
	f.Fuzz(func(t *testing.T, host string, port uint16) {
		prof, err := Generate(Policy{TCPConnect: []Endpoint{{Host: host, Port: port}}})
		if err != nil {
			if !errors.Is(err, ErrInvalidPolicy) {
				t.Fatalf("error does not wrap ErrInvalidPolicy: %v", err)
			}
			return
		}
		if _, err := analyzeProfile(prof); err != nil {
			t.Fatalf("profile check for %q: %v", host, err)
		}
		for _, canon := range []string{"localhost", "127.0.0.1", "*", "example.com", "192.0.2.1"} {
			c, err := Generate(Policy{TCPConnect: []Endpoint{{Host: canon, Port: port}}})
			if err == nil && c.Text == prof.Text {
				return
			}
		}
		t.Fatalf("profile for host %q is not that of any canonical host:\n%s", host, prof.Text)
	})
}
