package safefs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/openparallax/sandbox/internal/winjob"
)

func TestReadFileNoFollowWindows(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "file")
	if err := os.WriteFile(f, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := ReadFileNoFollow(f, 10); err != nil || string(b) != "hello" {
		t.Errorf("regular file: %q, %v", b, err)
	}
	if _, err := ReadFileNoFollow(f, 3); !errors.Is(err, ErrTooLarge) {
		t.Errorf("bound 3 for 5 bytes: %v, want ErrTooLarge", err)
	}
	if _, err := ReadFileNoFollow(dir, 10); err == nil {
		t.Errorf("a directory was read")
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(f, link); err != nil {
		t.Logf("no symlink test: creating one needs a privilege here: %v", err)
	} else if b, err := ReadFileNoFollow(link, 10); winjob.UnderWine() {
		// Wine makes os.Symlink a Unix symlink, and answers an open of
		// it with FILE_FLAG_OPEN_REPARSE_POINT "file not found" instead
		// of opening the link itself: what must hold is that the
		// target was not read.
		if err == nil || string(b) == "hello" {
			t.Errorf("a symlink under Wine: read %q, %v: want it refused, the target unread", b, err)
		} else {
			t.Logf("under Wine a symlink is refused as %v (Windows: ErrSymlink)", err)
		}
	} else if !errors.Is(err, ErrSymlink) {
		t.Errorf("a symlink: %v, want ErrSymlink", err)
	}
	if _, err := Pin(dir); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Pin on Windows: %v, want ErrUnsupported", err)
	}
}
