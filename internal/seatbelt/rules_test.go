package seatbelt

// One test per rule added for real programs on macOS 13 to 26 (issue 21):
// each holds the rule to where it must appear and, for conditional rules, to
// exactly the policies that ask for it.

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

// formIndex is the index of the first top-level form whose text is form, or -1.
func formIndex(a *analysis, form string) int {
	return slices.IndexFunc(a.forms, func(f sexp) bool { return f.String() == form })
}

func TestDenyInfoRightAfterDefault(t *testing.T) {
	for _, tc := range goldenCases {
		_, a := mustCheck(t, tc.policy)
		deny := formIndex(a, "(deny process-info* iokit-get-properties nvram*)")
		self := formIndex(a, "(allow process-info* (target self))")
		if deny != 2 {
			t.Errorf("%s: the process-info/iokit/nvram deny is form %d, want 2 (right after (deny default))", tc.name, deny)
		}
		if self <= deny {
			t.Errorf("%s: the self allowance (form %d) must come after the deny (form %d), or the deny would override it", tc.name, self, deny)
		}
		if a.pairs["process-info* target(same-sandbox)"] {
			t.Errorf("%s: process-info of other processes allowed", tc.name)
		}
	}
}

func TestBaselineSystemData(t *testing.T) {
	prof, a := mustCheck(t, Policy{})
	for _, rule := range []string{
		`(allow file-read* (literal "/"))`,
		`(allow file-read* (subpath "/usr/share"))`,
		`(allow file-read* file-map-executable (subpath "/System/Library/Perl"))`,
		`(allow file-read* file-map-executable (subpath "/Library/Apple/usr/libexec/oah") (subpath "/usr/libexec/rosetta") (subpath "/private/var/db/oah"))`,
		`(allow file-read* (literal "/System/Library/CoreServices/SystemVersion.plist") (literal "/System/Library/CoreServices/SystemVersionCompat.plist"))`,
		`(allow file-read-metadata (literal "/etc") (literal "/tmp") (literal "/var"))`,
		`(allow file-read* file-write-data (literal "/dev/stdin") (literal "/dev/stdout") (literal "/dev/stderr") (subpath "/dev/fd"))`,
	} {
		if formIndex(a, rule) < 0 {
			t.Errorf("baseline lacks %s", rule)
		}
	}
	// "/" is readable as itself only, never recursively, never writable.
	if strings.Contains(prof.Text, `(subpath "/")`) || strings.Count(prof.Text, `(literal "/")`) != 1 {
		t.Error(`the root directory is granted beyond (allow file-read* (literal "/"))`)
	}
	// None of the network helpers without a TCPConnect that needs them.
	for _, s := range []string{"mDNSResponder", "SystemConfiguration", "net.routetable", "/private/etc/hosts", "trustd"} {
		if strings.Contains(prof.Text, s) {
			t.Errorf("zero policy mentions %s", s)
		}
	}
}

func TestExecIsProcessExecStar(t *testing.T) {
	prof, a := mustCheck(t, Policy{ExecPaths: []string{"/bin/ls", "/usr/libexec"}, IsDir: dirs("/usr/libexec")})
	for _, rule := range []string{`(allow process-exec* (literal (param "X0")))`, `(allow process-exec* (subpath (param "X1")))`} {
		if formIndex(a, rule) < 0 {
			t.Errorf("lacks %s", rule)
		}
	}
	if regexpProcessExec := "(allow process-exec "; strings.Contains(prof.Text, regexpProcessExec) {
		t.Error("a plain process-exec rule: interpreters may be checked as process-exec-interpreter")
	}
}

func TestShims(t *testing.T) {
	for _, tc := range []struct {
		name               string
		exec               []string
		dirs               []string
		shell, perl, xcrun bool
	}{
		{"none", []string{"/bin/ls", "/usr/bin/env"}, nil, false, false, false},
		{"sh", []string{"/bin/sh"}, nil, true, false, false},
		{"bin dir", []string{"/bin"}, []string{"/bin"}, true, false, false},
		{"bin as file", []string{"/bin"}, nil, false, false, false},
		{"perl", []string{"/usr/bin/perl"}, nil, false, true, false},
		{"git", []string{"/usr/bin/git"}, nil, false, false, true},
		{"python3", []string{"/usr/bin/python3"}, nil, false, false, true},
		{"usr/bin", []string{"/usr/bin"}, []string{"/usr/bin"}, false, true, true},
		{"usr", []string{"/usr"}, []string{"/usr"}, false, true, true},
		{"root", []string{"/"}, []string{"/"}, true, true, true},
		{"prefix is not a parent", []string{"/usr/bi"}, []string{"/usr/bi"}, false, false, false},
		{"perl5 itself", []string{"/usr/bin/perl5.34"}, nil, false, false, false},
	} {
		shell, perl, xcrun := Shims(tc.exec, dirs(tc.dirs...))
		if shell != tc.shell || perl != tc.perl || xcrun != tc.xcrun {
			t.Errorf("%s: Shims = %v %v %v, want %v %v %v", tc.name, shell, perl, xcrun, tc.shell, tc.perl, tc.xcrun)
		}
	}

	rules := map[string][]string{
		"shell": {
			`(allow file-read* (literal "/private/var/select/sh"))`,
			`(allow process-exec* (literal "/bin/bash") (literal "/bin/dash") (literal "/bin/zsh"))`,
			`(allow file-read* file-map-executable (literal "/bin/bash") (literal "/bin/dash") (literal "/bin/zsh"))`,
		},
		"perl": {
			`(allow process-exec* (regex #"^/usr/bin/perl5[.][0-9]+$"))`,
			`(allow file-read* file-map-executable (regex #"^/usr/bin/perl5[.][0-9]+$"))`,
			`(allow file-read* file-map-executable (subpath "/Library/Perl"))`,
		},
		"xcrun": {
			`(allow file-read* (literal "/private/var/db/xcode_select_link"))`,
			`(allow process-exec* (literal "/usr/bin/xcrun") (subpath "/Library/Developer/CommandLineTools"))`,
			`(allow file-read* file-map-executable (literal "/usr/bin/xcrun") (subpath "/Library/Developer/CommandLineTools"))`,
		},
	}
	for _, set := range []string{"", "shell", "perl", "xcrun"} {
		p := Policy{ExecPaths: []string{"/usr/bin/true"}, IsDir: dirs(),
			ShellShim: set == "shell", PerlShim: set == "perl", XcrunShim: set == "xcrun"}
		_, a := mustCheck(t, p)
		for name, rs := range rules {
			for _, r := range rs {
				if got := formIndex(a, r) >= 0; got != (name == set) {
					t.Errorf("flags for %q: %s present = %v", set, r, got)
				}
			}
		}
	}
}

func TestResolverOnlyForNames(t *testing.T) {
	resolverRules := []string{
		`(allow network-outbound (literal "/private/var/run/mDNSResponder"))`,
		`(allow mach-lookup (global-name "com.apple.SystemConfiguration.DNSConfiguration") (global-name "com.apple.SystemConfiguration.configd"))`,
		`(allow sysctl-read (sysctl-name-prefix "net.routetable"))`,
		`(allow system-socket (socket-domain AF_UNIX))`,
	}
	for _, tc := range []struct {
		eps      []Endpoint
		resolver bool
	}{
		{[]Endpoint{{Host: "localhost", Port: 80}}, false},
		{[]Endpoint{{Host: "localhost", Port: 80}, {Host: "127.0.0.1", Port: 81}, {Host: "::1", Port: 82}}, false},
		{[]Endpoint{{Host: "10.0.0.1", Port: 443}}, false},
		{[]Endpoint{{Host: "localhost", Port: 80}, {Host: "example.com", Port: 443}}, true},
		{[]Endpoint{{Host: "*", Port: 443}}, true},
		{[]Endpoint{{Host: "", Port: 443}}, true},
	} {
		_, a := mustCheck(t, Policy{TCPConnect: tc.eps})
		for _, r := range resolverRules {
			if got := formIndex(a, r) >= 0; got != tc.resolver {
				t.Errorf("%v: %s present = %v, want %v", tc.eps, r, got, tc.resolver)
			}
		}
	}
}

func TestNoTrustd(t *testing.T) {
	const trustd = `(allow mach-lookup (global-name "com.apple.trustd.agent"))`
	const certs = `(allow file-read* (subpath "/private/etc/ssl"))`
	eps := []Endpoint{{Host: "*", Port: 443}}
	_, on := mustCheck(t, Policy{TCPConnect: eps})
	_, off := mustCheck(t, Policy{TCPConnect: eps, NoTrustd: true})
	if formIndex(on, trustd) < 0 || formIndex(off, trustd) >= 0 {
		t.Errorf("trustd: granted by default %v, with NoTrustd %v", formIndex(on, trustd) >= 0, formIndex(off, trustd) >= 0)
	}
	// The CA bundle is a file, not a channel: it stays for OpenSSL clients.
	if formIndex(on, certs) < 0 || formIndex(off, certs) < 0 {
		t.Error("the CA bundle must stay readable with and without trustd")
	}
}

func TestDevicesOnlyWhenAsked(t *testing.T) {
	for _, tc := range []struct{ camera, mic bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		_, a := mustCheck(t, Policy{Camera: tc.camera, Microphone: tc.mic})
		if a.pairs["device-camera "] != tc.camera || a.pairs["device-microphone "] != tc.mic {
			t.Errorf("camera %v microphone %v: pairs %q", tc.camera, tc.mic, a.sortedPairs())
		}
	}
}

// TestTerminal: ioctl is granted on no terminal by default, and with
// Policy.Terminal on exactly that pseudo-terminal (as a parameter), read
// and write with it; anything but a /dev/ttysNNN path is refused.
func TestTerminal(t *testing.T) {
	const rule = `(allow file-read* file-write-data file-ioctl (literal (param "T0")))`
	_, off := mustCheck(t, Policy{})
	for _, f := range off.forms {
		if strings.Contains(f.String(), "file-ioctl") {
			t.Errorf("without a Terminal the profile grants an ioctl: %s", f)
		}
	}
	prof, on := mustCheck(t, Policy{Terminal: "/dev/ttys003"})
	if formIndex(on, rule) < 0 {
		t.Errorf("with a Terminal, no %s in\n%s", rule, prof.Text)
	}
	if !slices.Contains(prof.Params, Param{Name: "T0", Value: "/dev/ttys003"}) {
		t.Errorf("params %v lack T0=/dev/ttys003", prof.Params)
	}
	for _, bad := range []string{"/dev/tty", "/dev/ttys", "/dev/console", "/dev/ttys1a", "/dev/ttys003/..", "/dev/ttyp0", "/dev/ttys0000000", "ttys003"} {
		if _, err := Generate(Policy{Terminal: bad}); !errors.Is(err, ErrInvalidPolicy) {
			t.Errorf("Terminal %q: err %v, want ErrInvalidPolicy", bad, err)
		}
	}
}
