package darwin

// How the macOS canary picks its targets, on every OS.

import (
	"syscall"
	"testing"

	"github.com/openparallax/sandbox/internal/probe"
	"github.com/openparallax/sandbox/internal/spec"
)

func TestDarwinCanaryTargets(t *testing.T) {
	ok := func(string) error { return nil }
	eperm := func(string) error { return syscall.EPERM }
	denyOnly := func(path string, errno syscall.Errno) func(string) error {
		return func(p string) error {
			if p == path {
				return errno
			}
			return nil
		}
	}
	rcRead := func(paths ...string) *spec.Resolved {
		rc := &spec.Resolved{}
		for _, p := range paths {
			rc.Read = append(rc.Read, spec.Path{Given: p, Resolved: p, IsDir: true})
		}
		return rc
	}
	cases := []struct {
		name   string
		rc     *spec.Resolved
		cands  []candidate
		access func(string) error
		root   bool
		want   string
	}{
		{"first", rcRead(), readTargets, ok, false, "/private/etc/hosts"},
		{"granted skipped", rcRead("/private/etc/hosts"), readTargets, ok, false, "/private/etc/passwd"},
		{"granted, other case", rcRead("/PRIVATE/ETC/HOSTS"), readTargets, ok, false, "/private/etc/passwd"},
		{"granted directory", rcRead("/private/etc"), readTargets, ok, true, ""},
		{"ordinary permissions deny", rcRead(), readTargets, denyOnly("/private/etc/hosts", syscall.EACCES), false, "/private/etc/passwd"},
		{"missing", rcRead(), readTargets, denyOnly("/private/etc/hosts", syscall.ENOENT), false, "/private/etc/passwd"},
		{"access sandboxed, world readable", rcRead(), readTargets, eperm, false, "/private/etc/hosts"},
		{"root only, not root", rcRead("/private/etc/hosts", "/private/etc/passwd", "/private/etc/group", "/private/etc/shells"), readTargets, eperm, false, ""},
		{"root only, root", rcRead("/private/etc/hosts", "/private/etc/passwd", "/private/etc/group", "/private/etc/shells"), readTargets, eperm, true, "/private/etc/master.passwd"},
		{"root only, access allows", rcRead("/private/etc/hosts", "/private/etc/passwd", "/private/etc/group", "/private/etc/shells"), readTargets, ok, false, "/private/etc/master.passwd"},
		{"write", rcRead(), writeTargets, ok, false, "/private/tmp"},
		{"write, tmp granted", rcRead("/private/tmp"), writeTargets, eperm, false, "/private/var/tmp"},
		{"write, all granted", rcRead("/private"), writeTargets, ok, true, ""},
		{"write, subdirectory granted", rcRead("/private/tmp/ws"), writeTargets, ok, false, "/private/tmp"},
	}
	for _, c := range cases {
		got, found := pickTarget(c.rc, c.cands, c.access, c.root)
		if got != c.want || found != (c.want != "") {
			t.Errorf("%s: got %q %v, want %q", c.name, got, found, c.want)
		}
	}

	for _, p := range []string{"/dev/urandom", "/usr/lib/libSystem.B.dylib", "/private/etc/localtime"} {
		if !isGranted(&spec.Resolved{}, p) {
			t.Errorf("baseline path %s not seen as granted", p)
		}
	}
	tlsRC := &spec.Resolved{Connect: []spec.Endpoint{{Host: "example.com", Port: 443}}}
	if isGranted(&spec.Resolved{}, "/private/etc/ssl/cert.pem") || !isGranted(tlsRC, "/private/etc/ssl/cert.pem") {
		t.Error("/private/etc/ssl is granted exactly when a remote endpoint is")
	}

	rc := &spec.Resolved{Connect: []spec.Endpoint{{Host: "*", Port: 1}, {Host: "example.com", Port: 9}}}
	if p := probe.Port(rc); p != 7 {
		t.Errorf("probe port %d, want 7 (1 and 9 are granted)", p)
	}

	for in, want := range map[string]string{
		"/tmp": "/private/tmp", "/tmp/x": "/private/tmp/x", "/var/folders/ab/T": "/private/var/folders/ab/T",
		"/etc/hosts": "/private/etc/hosts", "/tmpx": "/tmpx", "/Users/dev": "/Users/dev", "/private/tmp": "/private/tmp",
	} {
		if got := privatePath(in); got != want {
			t.Errorf("privatePath(%q) = %q, want %q", in, got, want)
		}
	}
}
