package safefs

import (
	"errors"
	"testing"
)

// TestFallbackWalk repeats the refusals with openat2 taken away, as this
// library's seccomp filter does under ApplySelf (ENOSYS): the
// per-component walk must refuse the same links.
func TestFallbackWalk(t *testing.T) {
	if noOpenat2.Load() {
		t.Log("openat2 is unavailable here: every test already used the per-component walk")
	}
	noOpenat2.Store(true)
	defer noOpenat2.Store(false)
	root, _ := tree(t)
	d := pin(t, root)
	for _, rel := range []string{"linkdir/secret", "self/file", "self/sub/inner"} {
		if _, err := d.ReadFile(rel, 100); !errors.Is(err, ErrSymlink) {
			t.Errorf("ReadFile(%s) with the per-component walk: %v, want ErrSymlink", rel, err)
		}
	}
	if b, err := d.ReadFile("sub/inner", 100); err != nil || string(b) != "inner" {
		t.Errorf("ReadFile(sub/inner) with the per-component walk: %q, %v", b, err)
	}
}
