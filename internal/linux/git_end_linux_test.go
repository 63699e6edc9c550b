package linux

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/openparallax/sandbox/internal/safefs"
	"github.com/openparallax/sandbox/internal/spec"
)

// TestGitIndexBound: an index past the bound is not read, and the caller
// turns that into a bound_exceeded finding saying what was not checked; a
// link as the index into symlink_not_followed (a FIFO's special_file is
// TestGitIndexFIFO's); a component that is no directory into nothing
// (git does not enter such a path either).
func TestGitIndexBound(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "index"), make([]byte, 100), 0o644); err != nil {
		t.Fatal(err)
	}
	d, err := safefs.Pin(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	_, err = gitlinks(d, 20, 99)
	f, ok := findingOf(filepath.Join(dir, "index"), err, "not checked")
	if !ok || f.Kind != spec.FindingBoundExceeded {
		t.Errorf("an index of 100 bytes with a bound of 99: %v, finding %+v", err, f)
	}
	if _, err := gitlinks(d, 20, 100); err == nil {
		t.Errorf("100 zero bytes parsed as an index")
	} else if _, ok := findingOf("x", err, ""); ok {
		t.Errorf("a malformed index within the bound became a finding (%v): it is an error", err)
	}
	os.Remove(filepath.Join(dir, "index"))
	os.Symlink("/dev/zero", filepath.Join(dir, "index"))
	os.WriteFile(filepath.Join(dir, "file"), nil, 0o644)
	for rel, want := range map[string]string{"index": spec.FindingSymlink, "file/x/.git": ""} {
		_, err := d.Lstat(rel)
		if rel == "index" {
			_, err = d.ReadFile(rel, 10)
		}
		f, ok := findingOf(rel, err, "")
		if ok != (want != "") || f.Kind != want {
			t.Errorf("%s: %v gave finding %+v (%v), want kind %q", rel, err, f, ok, want)
		}
	}
}
