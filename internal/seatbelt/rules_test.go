package seatbelt

// One test per rule added for real programs on macOS 13 to 26 (issue 21):
// each holds the rule to where it must appear and, for conditional rules, to
// exactly the policies that ask for it.

import (
	"errors"
	"path"
	"regexp"
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
		deny := formIndex(a, thirdForm)
		self := formIndex(a, "(allow process-info* (target self))")
		if deny != 2 {
			t.Errorf("%s: the map-executable/process-info/iokit/nvram deny is form %d, want 2 (right after (deny default))", tc.name, deny)
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

// TestGitProtectionLast: the git denies are the last forms (SBPL: the last
// matching rule wins, so a deny before the write allow would lose), only
// with GitProtection, and their regular expressions match what they must
// and nothing git needs to write.
func TestGitProtectionLast(t *testing.T) {
	p := goldenPolicy("git")
	prof, a := mustCheck(t, p)
	last := a.forms[len(a.forms)-1].String()
	if !strings.HasPrefix(last, "(deny file-write* (regex ") {
		t.Fatalf("the last form is %s, want the git deny", last)
	}
	write := formIndex(a, `(allow file-read* file-write* (subpath (param "W0")))`)
	if write < 0 || write >= len(a.forms)-1 {
		t.Errorf("the write allow is form %d, the git deny %d: the deny must come after it", write, len(a.forms)-1)
	}
	p.GitProtection = false
	off, _ := mustCheck(t, p)
	if strings.Contains(off.Text, "(deny file-write*") || !strings.Contains(prof.Text, "(deny file-write*") {
		t.Error("the git deny must be there exactly when GitProtection is set")
	}
	var res []*regexp.Regexp
	for _, re := range GitProtectRegexes {
		res = append(res, regexp.MustCompile(re)) // these constructs mean the same in RE2 and POSIX ERE
	}
	matches := func(path string) bool {
		return slices.ContainsFunc(res, func(re *regexp.Regexp) bool { return re.MatchString(path) })
	}
	for _, path := range []string{
		"/ws/.git", "/ws/.git/hooks", "/ws/.git/hooks/pre-commit", "/ws/.git/config", "/ws/.git/commondir",
		"/ws/.git/config.worktree", "/ws/a/b/.git/hooks/post-checkout", "/ws/.GIT/Hooks/x", "/ws/.Git/CONFIG",
		"/ws/.git/modules/sub/hooks/pre-commit", "/ws/.git/modules/a/b/config", "/ws/.git/modules/a/modules/b/hooks",
		"/ws/.git/worktrees/wt/commondir", "/ws/.git/worktrees/wt/config.worktree", "/ws/remote.git/hooks/post-receive",
		"/ws/remote.git/config", "/ws/remote.git",
	} {
		if !matches(path) {
			t.Errorf("%s is not protected", path)
		}
	}
	for _, path := range []string{
		"/ws/.git/index", "/ws/.git/index.lock", "/ws/.git/HEAD", "/ws/.git/objects/ab/cdef", "/ws/.git/refs/heads/main",
		"/ws/.git/config.lock/x", "/ws/.git/logs/HEAD", "/ws/.git/modules/sub/index", "/ws/.git/worktrees/wt/HEAD",
		"/ws/src/hooks/useThing.js", "/ws/config", "/ws/.gitignore", "/ws/.github/hooks/x", "/ws/.gitmodules", "/ws/.git2/config",
	} {
		if matches(path) {
			t.Errorf("%s is protected: git or the program needs to write it", path)
		}
	}
}

// TestMapExecutableDenied: file-map-executable is denied right after
// (deny default), and allowed again only for the baseline, the exec paths,
// the shims and, with ExecWritePaths only, the write paths; never for a
// read path.
func TestMapExecutableDenied(t *testing.T) {
	p := Policy{ReadPaths: []string{"/Users/me/data"}, WritePaths: []string{"/Users/me/ws"}, ExecPaths: []string{"/usr/bin/python3"}}
	prof, a := mustCheck(t, p)
	if formIndex(a, thirdForm) != 2 {
		t.Fatalf("no %s as the third form", thirdForm)
	}
	for _, f := range a.forms[3:] {
		s := f.String()
		if strings.Contains(s, "file-map-executable") && (strings.Contains(s, `(param "R0")`) || strings.Contains(s, `(param "W0")`)) {
			t.Errorf("a read or write path is mappable as code without ExecWritePaths: %s", s)
		}
	}
	if !strings.Contains(prof.Text, `(allow file-read* file-map-executable (subpath (param "X0")))`) {
		t.Error("the exec path is not mappable")
	}
	p.ExecWritePaths = true
	_, a = mustCheck(t, p)
	rule := `(allow process-exec* file-map-executable (subpath (param "W0")))`
	if i := formIndex(a, rule); i <= 2 {
		t.Errorf("with ExecWritePaths, %s is form %d: it must come after the deny (form 2)", rule, i)
	}
}

// TestControllingTerminal: ioctl on /dev/tty only when the Terminal is the
// controlling one.
func TestControllingTerminal(t *testing.T) {
	const rule = `(allow file-ioctl (literal "/dev/tty"))`
	_, a := mustCheck(t, Policy{Terminal: "/dev/ttys003"})
	if formIndex(a, rule) >= 0 {
		t.Error("ioctl on /dev/tty without ControllingTerminal")
	}
	_, a = mustCheck(t, Policy{Terminal: "/dev/ttys003", ControllingTerminal: true})
	if formIndex(a, rule) < 0 {
		t.Errorf("no %s with ControllingTerminal", rule)
	}
	if _, err := Generate(Policy{ControllingTerminal: true}); !errors.Is(err, ErrInvalidPolicy) {
		t.Errorf("ControllingTerminal without a Terminal: %v, want ErrInvalidPolicy", err)
	}
}

// TestPythonSemaphores: ipc-posix-sem only for Python's names, only when
// asked.
func TestPythonSemaphores(t *testing.T) {
	const rule = `(allow ipc-posix-sem (ipc-posix-name-prefix "/mp-") (ipc-posix-name-prefix "mp-"))`
	off, _ := mustCheck(t, Policy{})
	if strings.Contains(off.Text, "ipc-posix") {
		t.Error("semaphores granted without PythonSemaphores")
	}
	_, a := mustCheck(t, Policy{PythonSemaphores: true})
	if formIndex(a, rule) < 0 {
		t.Errorf("no %s", rule)
	}
}

// TestBaselineAncestors: every directory above a constant path of the
// profile can be stat()ed (realpath component by component), as a literal.
func TestBaselineAncestors(t *testing.T) {
	prof, a := mustCheck(t, goldenPolicy("shims"))
	meta := map[string]bool{"/": true, "/etc": true, "/tmp": true, "/var": true}
	for _, f := range a.forms {
		if len(f.items) > 2 && f.items[0].isSym("allow") && f.items[1].isSym("file-read-metadata") {
			for _, flt := range f.items[2:] {
				if flt.items[0].isSym("literal") && flt.items[1].kind == sString {
					meta[flt.items[1].text] = true
				}
			}
		}
	}
	for _, c := range a.consts {
		if !strings.HasPrefix(c, "/") || meta[c] {
			continue
		}
		for d := path.Dir(c); d != "/"; d = path.Dir(d) {
			if !meta[d] {
				t.Errorf("%s is above %s but has no file-read-metadata literal", d, c)
			}
		}
	}
	if t.Failed() {
		t.Log(prof.Text)
	}
}

// TestDeveloperDir: an active developer directory outside the Command Line
// Tools gets what they get, as a parameter, only with XcrunShim.
func TestDeveloperDir(t *testing.T) {
	const dev = "/Applications/Xcode.app/Contents/Developer"
	const rule = `(allow process-exec* file-read* file-map-executable (subpath (param "D0")))`
	prof, a := mustCheck(t, Policy{ExecPaths: []string{"/usr/bin/git"}, XcrunShim: true, DeveloperDir: dev})
	if formIndex(a, rule) < 0 || !slices.Contains(prof.Params, Param{Name: "D0", Value: dev}) {
		t.Errorf("no %s with D0=%s", rule, dev)
	}
	if strings.Contains(prof.Text, "Xcode") && !strings.Contains(prof.Text, "; XcrunShim: DeveloperDir") {
		t.Error("the developer directory's path is in the text")
	}
	prof, _ = mustCheck(t, Policy{ExecPaths: []string{"/usr/bin/true"}, DeveloperDir: dev})
	if strings.Contains(prof.Text, `"D0"`) || len(prof.Params) != 1 {
		t.Error("DeveloperDir granted without XcrunShim")
	}
	if _, err := Generate(Policy{XcrunShim: true, DeveloperDir: "/tmp/Xcode.app"}); !errors.Is(err, ErrInvalidPolicy) {
		t.Errorf("DeveloperDir under /tmp: %v, want ErrInvalidPolicy", err)
	}
}

// TestGitDirs: a git directory the regular expressions miss is denied by
// parameters, in the same last form, only with GitProtection.
func TestGitDirs(t *testing.T) {
	const dir = "/Users/me/ws/repo-gitdir"
	p := Policy{WritePaths: []string{"/Users/me/ws"}, GitProtection: true, GitDirs: []string{dir, dir}}
	prof, a := mustCheck(t, p)
	want := []Param{{"W0", "/Users/me/ws"}, {"G0", dir}, {"G1", dir + "/hooks"}, {"G2", dir + "/config"},
		{"G3", dir + "/config.worktree"}, {"G4", dir + "/commondir"}}
	if !slices.Equal(prof.Params, want) {
		t.Errorf("params %q, want %q", prof.Params, want)
	}
	last := a.forms[len(a.forms)-1].String()
	for _, flt := range []string{`(literal (param "G0"))`, `(subpath (param "G1"))`, `(literal (param "G2"))`, `(literal (param "G4"))`} {
		if !strings.HasPrefix(last, "(deny file-write*") || !strings.Contains(last, flt) {
			t.Errorf("the last form %s lacks %s", last, flt)
		}
	}
	p.GitProtection = false
	if prof, _ := mustCheck(t, p); strings.Contains(prof.Text, `"G0"`) || len(prof.Params) != 1 {
		t.Error("GitDirs without GitProtection")
	}
	if _, err := Generate(Policy{GitProtection: true, GitDirs: []string{"/tmp/x"}}); !errors.Is(err, ErrInvalidPolicy) {
		t.Errorf("GitDirs under /tmp: %v, want ErrInvalidPolicy", err)
	}
	bad := prof
	bad.Text = strings.Replace(bad.Text, thirdForm, thirdForm+"\n(allow file-read* (subpath (param \"G1\")))", 1) // before the deny
	if _, err := analyzeProfile(bad); err == nil {
		t.Error("the checker accepts an allow on a GitDirs parameter")
	}
}

// TestGitDirsOddPaths: GitDirs reach the profile only as parameters,
// whatever they hold, and one whose files would pass PATH_MAX is refused.
func TestGitDirsOddPaths(t *testing.T) {
	for _, d := range []string{`/Users/me/a"b`, `/Users/me/")(allow default)(`, "/Users/me/日本", `/Users/me/(param "W0")`} {
		p := Policy{WritePaths: []string{"/Users/me"}, GitProtection: true, GitDirs: []string{d}}
		prof, _ := mustCheck(t, p)
		noUserText(t, prof, p)
	}
	long := "/Users/" + strings.Repeat("x", 1010)
	if _, err := Generate(Policy{GitProtection: true, GitDirs: []string{long}}); !errors.Is(err, ErrInvalidPolicy) {
		t.Errorf("a git directory whose config.worktree passes PATH_MAX: %v, want ErrInvalidPolicy", err)
	}
}
