package linux

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
	"time"
	"weak"

	"github.com/openparallax/sandbox/internal/safefs"
	"github.com/openparallax/sandbox/internal/spec"
)

// TestGitEndNotFinishedClosesPins: WrapCommand pins the git directories
// of a protected repository before the spawn; a command its caller never
// finishes (nor even starts) must not hold those descriptors forever: once
// the command is reclaimed, its gitEnds entry goes and the descriptors are
// closed.
func TestGitEndNotFinishedClosesPins(t *testing.T) {
	if !New().Available() {
		t.Skip("no sandbox on this kernel")
	}
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("/usr/bin/git", "init", "-q", ws).CombinedOutput(); err != nil {
		t.Skipf("git init: %v %s", err, out)
	}
	count := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skipf("cannot count descriptors: %v", err)
		}
		return len(ents)
	}
	cfg := Config{AllowedWritePaths: []string{ws}, AllowProcessSpawn: true, AllowedExecPaths: []string{"/bin"}}
	wrapOne := func() *exec.Cmd {
		cmd := exec.Command("/bin/true")
		cmd.Dir = ws
		if err := New().WrapCommand(cmd, cfg); err != nil {
			t.Fatal(err)
		}
		if _, ok := gitEnds.Load(weak.Make(cmd)); !ok {
			t.Fatal("WrapCommand registered no git checks for a protected repository")
		}
		return cmd
	}
	wrapOne() // the first pays for what stays (probes, caches)
	for range 5 {
		runtime.GC()
	}
	time.Sleep(50 * time.Millisecond)
	before := count()
	var held []*exec.Cmd // alive until counted
	for range 20 {
		held = append(held, wrapOne())
	}
	if n := count(); n < before+20 {
		t.Fatalf("%d descriptors after 20 WrapCommands, %d before: the pins cannot be observed", n, before)
	}
	runtime.KeepAlive(held)
	held = nil
	deadline := time.Now().Add(10 * time.Second)
	for count() > before+2 {
		if time.Now().After(deadline) {
			t.Fatalf("%d descriptors, %d before 20 commands never finished: their pins were not closed", count(), before)
		}
		runtime.GC()
		time.Sleep(20 * time.Millisecond)
	}
}

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
