package execgrant

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// resolveFile must agree with the walk it replaces on every kind of path
// it meets: links to links, relative links, links through directories,
// a FIFO (never opened for reading), a directory, and a missing file.
func TestResolveFileAgreesWithWalk(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "real/bin"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "real/bin/ld"), []byte("x"), 0o755))
	must(os.Symlink("real", filepath.Join(dir, "usr")))                                 // a directory link
	must(os.Symlink("../bin/ld", filepath.Join(dir, "real/bin/ld.rel")))                // relative
	must(os.Symlink(filepath.Join(dir, "usr/bin/ld.rel"), filepath.Join(dir, "chain"))) // a link to a link
	must(syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o600))
	must(os.Symlink("fifo", filepath.Join(dir, "fifo.link")))

	walked := 0
	resolveFileWalked = func() { walked++ }
	defer func() { resolveFileWalked = func() {} }()
	for _, p := range []string{"usr/bin/ld", "real/bin/ld.rel", "chain", "fifo", "fifo.link", "real", "usr", "missing", "usr/missing"} {
		p = filepath.Join(dir, p)
		r1, fi1, err1 := resolveFile(p)
		r2, fi2, err2 := resolveFileByWalk(p)
		if (err1 == nil) != (err2 == nil) || r1 != r2 {
			t.Errorf("%s: resolveFile = %q, %v; the walk = %q, %v", p, r1, err1, r2, err2)
			continue
		}
		if err1 == nil && (fi1.Mode() != fi2.Mode() || !os.SameFile(fi1, fi2)) {
			t.Errorf("%s: resolveFile found %v, the walk %v", p, fi1.Mode(), fi2.Mode())
		}
	}
	if walked != 0 {
		t.Errorf("resolveFile fell back to the walk %d times: /proc/self/fd was not used", walked)
	}
	if r, _, err := resolveFile(filepath.Join(dir, "chain")); err != nil || r != filepath.Join(dir, "real/bin/ld") {
		t.Errorf("chain resolved to %q, %v; want %s", r, err, filepath.Join(dir, "real/bin/ld"))
	}
}
