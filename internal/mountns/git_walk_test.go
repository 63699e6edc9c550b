package mountns

import (
	"strings"
	"testing"
	"time"
)

// TestSubmoduleWalkBounded: a modules tree that never ends (what a
// directory of links to "." looks like to a walk that follows them, 20
// names a level) must cost a bounded number of looks, however the host
// callbacks answer. Before the visit budget, the walk made 20^16 looks: it
// spun at 100% CPU on every later spawn.
func TestSubmoduleWalkBounded(t *testing.T) {
	looks := 0
	lookup := func(p string) Kind {
		looks++
		if strings.HasSuffix(p, "/HEAD") {
			return Missing
		}
		return Dir
	}
	readDir := func(string) []string {
		names := make([]string, 20)
		for i := range names {
			names[i] = string(rune('a' + i))
		}
		return names
	}
	done := make(chan []string, 1)
	go func() { done <- submoduleGitDirs("/ws/.git", lookup, readDir) }()
	select {
	case got := <-done:
		if len(got) != 0 {
			t.Errorf("git directories found in a tree without HEAD: %d", len(got))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the walk of an endless modules tree did not return within 10s")
	}
	if max := 2 * maxSubmoduleVisits; looks > max {
		t.Errorf("%d looks, more than %d", looks, max)
	}
}
