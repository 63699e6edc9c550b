package mountns

import (
	"errors"
	"slices"
	"testing"
)

func TestGitBareProtected(t *testing.T) {
	kinds := map[string]Kind{
		"/ws/b.git": Dir, "/ws/b.git/hooks": Dir, "/ws/b.git/config": File, "/ws/b.git/HEAD": File,
		"/ws/b.git/modules": Dir, "/ws/b.git/modules/s": Dir, "/ws/b.git/modules/s/HEAD": File,
	}
	lookup := func(p string) Kind { return kinds[p] } // Missing is the zero Kind
	readFile := func(string) ([]byte, error) { return nil, errors.New("none") }
	readDir := func(p string) []string {
		if p == "/ws/b.git/modules" {
			return []string{"s"}
		}
		return nil
	}
	protect, pin := GitBareProtected("/ws/b.git", lookup, readFile, readDir)
	want := []string{"/ws/b.git/hooks", "/ws/b.git/config", "/ws/b.git/modules/s/hooks", "/ws/b.git/modules/s/config"}
	if !slices.Equal(protect, want) || !slices.Equal(pin, []string{"/ws/b.git"}) {
		t.Errorf("protect %q pin %q; want %q and the directory itself", protect, pin, want)
	}
	if p, q := GitBareProtected("/ws/gone", lookup, readFile, readDir); p != nil || q != nil {
		t.Errorf("a missing directory: %q %q", p, q)
	}
}
