package runtemp

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDir: New makes the directory with a tmp and (without HOME in env) a
// home inside it; Environ replaces the caller's temporary-directory
// variables and adds HOME; Remove deletes what the program left, removing
// a link as a link.
func TestDir(t *testing.T) {
	victim := filepath.Join(t.TempDir(), "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := New([]string{"PATH=/bin", "TMPDIR=/tmp"})
	if err != nil {
		t.Fatal(err)
	}
	env := d.Environ([]string{"PATH=/bin", "TMPDIR=/tmp"})
	want := []string{"PATH=/bin"}
	for _, k := range tempEnvVars {
		want = append(want, k+"="+filepath.Join(d.Path(), "tmp"))
	}
	want = append(want, "HOME="+filepath.Join(d.Path(), "home"))
	if !slices.Equal(env, want) {
		t.Errorf("Environ = %q, want %q", env, want)
	}
	for _, p := range []string{"tmp", "home"} {
		if fi, err := os.Stat(filepath.Join(d.Path(), p)); err != nil || !fi.IsDir() {
			t.Errorf("%s: %v", p, err)
		}
	}
	os.MkdirAll(filepath.Join(d.Path(), "tmp", "a", "b"), 0o700)
	os.WriteFile(filepath.Join(d.Path(), "tmp", "a", "b", "f"), []byte("x"), 0o600)
	os.Symlink(filepath.Dir(victim), filepath.Join(d.Path(), "tmp", "link")) // may fail on Windows
	if err := d.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(d.Path()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s left after Remove: %v", d.Path(), err)
	}
	if b, err := os.ReadFile(victim); err != nil || string(b) != "keep" {
		t.Errorf("the link's target was touched: %q %v", b, err)
	}
}

// TestDirCallerHome: with HOME in env, no home is made and Environ keeps
// the caller's.
func TestDirCallerHome(t *testing.T) {
	d, err := New([]string{"HOME=/h"})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Remove()
	if _, err := os.Lstat(filepath.Join(d.Path(), "home")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("home made although the caller set HOME: %v", err)
	}
	if env := d.Environ([]string{"HOME=/h"}); env[0] != "HOME=/h" || slices.ContainsFunc(env[1:], func(kv string) bool { return strings.HasPrefix(kv, "HOME=") }) {
		t.Errorf("Environ = %q", env)
	}
}
