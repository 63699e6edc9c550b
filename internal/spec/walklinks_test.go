package spec

import (
	"errors"
	"io/fs"
	"slices"
	"strconv"
	"testing"
)

// TestWalkLinks: the walk meets links as the kernel follows them ("..")
// after a link goes up from its target, not lexically), stops where visit
// says, and reports a loop and an unreadable link at the link.
func TestWalkLinks(t *testing.T) {
	f := fakeFS{
		dirs:  map[string]bool{"/a": true, "/a/b": true, "/c": true, "/c/d": true},
		files: map[string]bool{"/c/f": true},
		links: map[string]string{"/a/l": "/c/d", "/c/d/up": "../f", "/x": "x2", "/x2": "/x"},
	}
	var met []string
	all := func(l string, _ fs.FileInfo, target string) bool { met = append(met, l+"->"+target); return true }
	if l, err := WalkLinks(f, "/a/l/../f", all); l != "" || err != nil {
		t.Errorf("walk through /a/l: %q, %v", l, err)
	}
	if want := []string{"/a/l->/c/d"}; !slices.Equal(met, want) {
		t.Errorf("met %q, want %q (\"..\" after /a/l leaves /c/d for /c, where f is)", met, want)
	}
	met = nil
	if l, err := WalkLinks(f, "/a/l/up", all); l != "" || err != nil || len(met) != 2 {
		t.Errorf("two links: %q, %v, met %q", l, err, met)
	}
	stop := func(l string, _ fs.FileInfo, _ string) bool { return l != "/c/d/up" }
	if l, err := WalkLinks(f, "/a/l/up", stop); l != "/c/d/up" || err != nil {
		t.Errorf("stopped at: %q, %v", l, err)
	}
	if l, err := WalkLinks(f, "/x/y", all); l == "" || !errors.Is(err, ErrLinkLoop) {
		t.Errorf("a loop: %q, %v; want the link and ErrLinkLoop", l, err)
	}
	if l, err := WalkLinks(f, "/missing/a/l", all); l != "" || err != nil {
		t.Errorf("a missing name ends the walk: %q, %v", l, err)
	}
	chain := fakeFS{links: map[string]string{}}
	for i := range 40 {
		chain.links["/l"+strconv.Itoa(i)] = "/l" + strconv.Itoa(i+1)
	}
	chain.dirs = map[string]bool{"/l40": true}
	if l, err := WalkLinks(chain, "/l0", func(string, fs.FileInfo, string) bool { return true }); l != "" || err != nil {
		t.Errorf("40 links are allowed, as by the kernel: %q, %v", l, err)
	}
	chain.links["/l40"] = "/l41"
	if _, err := WalkLinks(chain, "/l0", func(string, fs.FileInfo, string) bool { return true }); !errors.Is(err, ErrLinkLoop) {
		t.Errorf("41 links: %v; want ErrLinkLoop", err)
	}
}
