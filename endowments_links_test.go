package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// fakeLinks is a tree of directories and symbolic links for the link
// rule: links maps a path to its target; system marks the machine's own.
type fakeLinks struct {
	links  map[string]string
	system map[string]bool
}

type fakeInfo struct {
	name string
	mode fs.FileMode
}

func (i fakeInfo) Name() string       { return i.name }
func (i fakeInfo) Size() int64        { return 0 }
func (i fakeInfo) Mode() fs.FileMode  { return i.mode }
func (i fakeInfo) ModTime() time.Time { return time.Time{} }
func (i fakeInfo) IsDir() bool        { return i.mode.IsDir() }
func (i fakeInfo) Sys() any           { return nil }

func (f fakeLinks) Lstat(p string) (fs.FileInfo, error) {
	if _, ok := f.links[p]; ok {
		return fakeInfo{filepath.Base(p), fs.ModeSymlink}, nil
	}
	return fakeInfo{filepath.Base(p), fs.ModeDir}, nil
}

func (f fakeLinks) Readlink(p string) (string, error) {
	if t, ok := f.links[p]; ok {
		return t, nil
	}
	return "", errors.New("not a link")
}

func (f fakeLinks) EvalSymlinks(p string) (string, error) {
	for range 40 {
		changed := false
		for l, t := range f.links {
			if p == l || strings.HasPrefix(p, l+"/") {
				if !strings.HasPrefix(t, "/") {
					t = filepath.Join(filepath.Dir(l), t)
				}
				p, changed = t+strings.TrimPrefix(p, l), true
				break
			}
		}
		if !changed {
			return p, nil
		}
	}
	return "", errors.New("too many links")
}

func (f fakeLinks) System(p string, _ fs.FileInfo) bool { return f.system[p] }

// TestEndowmentsLinkScope: a user's link that leads out of what the
// descriptor declares is refused, naming the link and where it leads;
// the machine's layout links and links into another declared path of at
// least the same mode are followed.
func TestEndowmentsLinkScope(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the link rule walks POSIX paths: the plugin runs on Linux and macOS")
	}
	lfs := fakeLinks{
		links: map[string]string{
			"/bin":                "usr/bin",      // layout
			"/tmp":                "private/tmp",  // layout (macOS)
			"/home/u/project":     "/etc",         // user link out of scope
			"/home/u/current":     "/home/u/v2",   // user link into a declared path
			"/home/u/rw/evil":     "/etc/shadow",  // planted in a write path
			"/home/u/rw/ok":       "/home/u/data", // planted, but into a declared path
			"/home/u/rw/sys":      "/usr/lib",     // root-owned, but in a write path
			"/home/u/ro/shortcut": "/home/u/rw2",
		},
		system: map[string]bool{"/bin": true, "/tmp": true, "/home/u/rw/sys": true},
	}
	d := func(p string, write bool) declared { return declared{field: "f", path: p, write: write} }
	for _, c := range []struct {
		path  string
		write bool
		list  []declared
		want  string // "" accepted, else in the error
	}{
		{"/bin/sh", false, nil, ""},
		{"/tmp/work", true, nil, ""},
		{"/home/u/plain", false, nil, ""},
		{"/home/u/project", false, nil, "symbolic link /home/u/project and resolves to /etc"},
		{"/home/u/current", false, []declared{d("/home/u/v2", false)}, ""},
		{"/home/u/current", true, []declared{d("/home/u/v2", false)}, "resolves to /home/u/v2"}, // rw through a link into a read-only one
		{"/home/u/current", true, []declared{d("/home/u/v2", true)}, ""},
		{"/home/u/rw/evil", false, []declared{d("/home/u/rw", true)}, "/etc/shadow"},
		{"/home/u/rw/ok/file", false, []declared{d("/home/u/rw", true), d("/home/u/data", false)}, ""},
		{"/home/u/rw/sys", false, []declared{d("/home/u/rw", true)}, "/usr/lib"},
		{"/home/u/ro/shortcut", true, []declared{d("/home/u/rw2", false)}, "resolves to /home/u/rw2"},
	} {
		self := d(c.path, c.write)
		list := append([]declared{self}, c.list...)
		var writable []string
		for _, x := range list {
			if x.write && x.path != c.path {
				writable = append(writable, x.path)
			}
		}
		err := checkLinksOf(self, list, writable, lfs)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s (write %v): %v, want accepted", c.path, c.write, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "declare")):
			t.Errorf("%s (write %v): %v, want refused saying %q", c.path, c.write, err, c.want)
		}
	}
}

// TestEndowmentsLinkScopeHost: the rule on this machine: a link inside a
// read-write path leading out of the descriptor is refused by
// ParseEndowments, even when root made it.
func TestEndowmentsLinkScopeHost(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the plugin runs on Linux and macOS")
	}
	dir := t.TempDir()
	rw, outside := filepath.Join(dir, "rw"), filepath.Join(dir, "outside")
	os.Mkdir(rw, 0o755)
	os.Mkdir(outside, 0o755)
	if err := os.Symlink(outside, filepath.Join(rw, "link")); err != nil {
		t.Fatal(err)
	}
	js := `{"fs": [{"path": "` + rw + `", "mode": "read-write"}, {"path": "` + rw + `/link", "mode": "read"}]}`
	_, err := ParseEndowments([]byte(js))
	var ee *EndowmentsError
	if !errors.As(err, &ee) || ee.Field != "fs[1].path" || !strings.Contains(err.Error(), "resolves to "+outside) {
		t.Errorf("link out of scope: %v, want fs[1].path refused", err)
	}
	js = `{"fs": [{"path": "` + rw + `", "mode": "read-write"}, {"path": "` + rw + `/link", "mode": "read"}, {"path": "` + outside + `", "mode": "read"}]}`
	if _, err := ParseEndowments([]byte(js)); err != nil {
		t.Errorf("link into a declared path: %v, want accepted", err)
	}
}
