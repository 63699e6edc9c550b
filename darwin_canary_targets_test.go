package sandbox

// How the macOS canary picks its targets, on every OS.

import (
	"syscall"
	"testing"

	"github.com/openparallax/sandbox/internal/probe"
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
	rcRead := func(paths ...string) *resolvedConfig {
		rc := &resolvedConfig{}
		for _, p := range paths {
			rc.Read = append(rc.Read, ResolvedPath{Given: p, Resolved: p, IsDir: true})
		}
		return rc
	}
	cases := []struct {
		name   string
		rc     *resolvedConfig
		cands  []darwinCandidate
		access func(string) error
		root   bool
		want   string
	}{
		{"first", rcRead(), darwinReadTargets, ok, false, "/private/etc/hosts"},
		{"granted skipped", rcRead("/private/etc/hosts"), darwinReadTargets, ok, false, "/private/etc/passwd"},
		{"granted, other case", rcRead("/PRIVATE/ETC/HOSTS"), darwinReadTargets, ok, false, "/private/etc/passwd"},
		{"granted directory", rcRead("/private/etc"), darwinReadTargets, ok, true, ""},
		{"ordinary permissions deny", rcRead(), darwinReadTargets, denyOnly("/private/etc/hosts", syscall.EACCES), false, "/private/etc/passwd"},
		{"missing", rcRead(), darwinReadTargets, denyOnly("/private/etc/hosts", syscall.ENOENT), false, "/private/etc/passwd"},
		{"access sandboxed, world readable", rcRead(), darwinReadTargets, eperm, false, "/private/etc/hosts"},
		{"root only, not root", rcRead("/private/etc/hosts", "/private/etc/passwd", "/private/etc/group", "/private/etc/shells"), darwinReadTargets, eperm, false, ""},
		{"root only, root", rcRead("/private/etc/hosts", "/private/etc/passwd", "/private/etc/group", "/private/etc/shells"), darwinReadTargets, eperm, true, "/private/etc/master.passwd"},
		{"root only, access allows", rcRead("/private/etc/hosts", "/private/etc/passwd", "/private/etc/group", "/private/etc/shells"), darwinReadTargets, ok, false, "/private/etc/master.passwd"},
		{"write", rcRead(), darwinWriteTargets, ok, false, "/private/tmp"},
		{"write, tmp granted", rcRead("/private/tmp"), darwinWriteTargets, eperm, false, "/private/var/tmp"},
		{"write, all granted", rcRead("/private"), darwinWriteTargets, ok, true, ""},
		{"write, subdirectory granted", rcRead("/private/tmp/ws"), darwinWriteTargets, ok, false, "/private/tmp"},
	}
	for _, c := range cases {
		got, found := pickDarwinTarget(c.rc, c.cands, c.access, c.root)
		if got != c.want || found != (c.want != "") {
			t.Errorf("%s: got %q %v, want %q", c.name, got, found, c.want)
		}
	}

	for _, p := range []string{"/dev/urandom", "/usr/lib/libSystem.B.dylib", "/private/etc/localtime"} {
		if !darwinGranted(&resolvedConfig{}, p) {
			t.Errorf("baseline path %s not seen as granted", p)
		}
	}
	tlsRC := &resolvedConfig{Connect: []Endpoint{{Host: "example.com", Port: 443}}}
	if darwinGranted(&resolvedConfig{}, "/private/etc/ssl/cert.pem") || !darwinGranted(tlsRC, "/private/etc/ssl/cert.pem") {
		t.Error("/private/etc/ssl is granted exactly when a remote endpoint is")
	}

	rc := &resolvedConfig{Connect: []Endpoint{{Host: "*", Port: 1}, {Host: "example.com", Port: 9}}}
	if p := probe.Port(rc); p != 7 {
		t.Errorf("probe port %d, want 7 (1 and 9 are granted)", p)
	}

	for in, want := range map[string]string{
		"/tmp": "/private/tmp", "/tmp/x": "/private/tmp/x", "/var/folders/ab/T": "/private/var/folders/ab/T",
		"/etc/hosts": "/private/etc/hosts", "/tmpx": "/tmpx", "/Users/dev": "/Users/dev", "/private/tmp": "/private/tmp",
	} {
		if got := darwinPrivatePath(in); got != want {
			t.Errorf("darwinPrivatePath(%q) = %q, want %q", in, got, want)
		}
	}
}
