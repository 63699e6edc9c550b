package spec

import (
	"strings"
	"testing"
)

func TestUnder(t *testing.T) {
	for _, c := range []struct {
		p, root string
		want    bool
	}{
		{"/a/b", "/a/b", true},
		{"/a/b/c", "/a/b", true},
		{"/a/b/c", "/a/b/", true},
		{"/a/b", "/a/b/", false}, // as before: p is not root's spelling
		{"/a/bc", "/a/b", false},
		{"/a", "/a/b", false},
		{"/", "/", true},
		{"/x", "/", true},
		{"/a//b", "/a", true},
		{"", "/", false},
		{"a/b", "/", false},
		{"/a/b", "", true}, // "" is read as "/" with its slash trimmed
	} {
		if got := Under(c.p, c.root); got != c.want {
			t.Errorf("Under(%q, %q) = %v, want %v", c.p, c.root, got, c.want)
		}
		// The formula every package had its own copy of, which Under
		// replaces: the same answer on every case.
		old := c.p == c.root || strings.HasPrefix(c.p, strings.TrimSuffix(c.root, "/")+"/")
		if old != c.want {
			t.Errorf("the old formula on (%q, %q) = %v, want %v", c.p, c.root, old, c.want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { Under("/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/lib/") }); n != 0 {
		t.Errorf("Under allocates %v times", n)
	}
}
