//go:build linux

package linux

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The host reads, with openat2 and with its fallback (per-component
// openat(O_NOFOLLOW), what runs where openat2 answers ENOSYS, as under
// this library's own filter): the same repositories found, and a link in
// any component of a path is never followed (ELOOP, which the walk takes
// for "gone": nothing to walk). A FIFO is never opened (the walk would
// block on it): the whole walk runs within a deadline.
func TestGitHostFSNoFollow(t *testing.T) {
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	for _, d := range []string{"a/b/.git/hooks", "c", filepath.Join(outside, "r/.git")} {
		p := d
		if !filepath.IsAbs(d) {
			p = filepath.Join(ws, d)
		}
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	os.Symlink(outside, filepath.Join(ws, "c", "out"))
	os.Symlink(ws, filepath.Join(ws, "loop"))
	if err := syscall.Mkfifo(filepath.Join(ws, "c", "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	defer openat2Missing.Store(openat2Missing.Load())
	for _, fallback := range []bool{false, true} {
		openat2Missing.Store(fallback)
		done := make(chan gitWalkResult, 1)
		go func() { done <- gitWalkHost([]string{ws}, gitWalkBudget{dirs: 100, entries: 1000}) }()
		var r gitWalkResult
		select {
		case r = <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("fallback %v: the walk did not end within 10 s", fallback)
		}
		if want := []string{filepath.Join(ws, "a", "b")}; !slices.Equal(r.Repos, want) || !r.complete() || r.Dirs != 4 {
			t.Errorf("fallback %v: %+v; want repositories %q, 4 directories, complete", fallback, r, want)
		}
		f, err := openGitHostFS(ws)
		if err != nil {
			t.Fatal(err)
		}
		for _, rel := range []string{"c/out", "c/out/r", "loop/a", "c/fifo"} {
			if _, _, err := f.Read(rel, 10); !errors.Is(err, unix.ELOOP) && !errors.Is(err, unix.ENOTDIR) {
				t.Errorf("fallback %v: Read(%s) = %v, want ELOOP (a link, not followed) or ENOTDIR (a FIFO, not opened)", fallback, rel, err)
			}
		}
		f.close()
	}
}
