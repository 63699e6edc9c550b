package execgrant

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"
)

// cacheTree is a granted directory of symlinks leading out of it, one of
// them through an alternatives-like directory, for the cache's tests.
type cacheTree struct {
	t                   *testing.T
	base, bin, alt, lib string
	scans               int
	tick                int64
	// outside is the version of each directory above base, which the
	// scan's walk reads too (a link's target is resolved from /): /tmp is
	// one, and other tests add and remove entries in it at any time.
	outside map[string]fileVersion
}

func newCacheTree(t *testing.T) *cacheTree {
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	c := &cacheTree{t: t, base: base, bin: filepath.Join(base, "bin"), alt: filepath.Join(base, "alt"), lib: filepath.Join(base, "lib")}
	for _, d := range []string{c.bin, c.alt, c.lib} {
		c.must(os.Mkdir(d, 0o755))
	}
	for name, content := range map[string]string{
		"tool1": "#!/bin/sh\n", "tool2": "#!/bin/sh\n", "gone": "#!/bin/sh\n",
		"interpA": "#!/bin/sh\n", "interpB": "#!/bin/sh\n", "script": "#!" + filepath.Join(c.lib, "interpA") + "\n",
	} {
		c.must(os.WriteFile(filepath.Join(c.lib, name), []byte(content), 0o755))
	}
	c.must(os.Symlink("../lib/tool1", filepath.Join(c.alt, "tool")))
	for name, target := range map[string]string{"tool": "../alt/tool", "script": "../lib/script", "gone": "../lib/gone"} {
		c.must(os.Symlink(target, filepath.Join(c.bin, name)))
	}
	c.outside = map[string]fileVersion{}
	for d := filepath.Dir(base); ; d = filepath.Dir(d) {
		c.outside[d] = pathVersion(d)
		if d == "/" {
			break
		}
	}
	// The tree was made just now: its times are within any racy window.
	old := racyWindow
	racyWindow = 0
	execDirScanned = func(dir string) {
		if dir == c.bin {
			c.scans++
		}
	}
	t.Cleanup(func() { racyWindow, execDirScanned = old, func(string) {} })
	return c
}

func (c *cacheTree) must(err error) {
	c.t.Helper()
	if err != nil {
		c.t.Fatal(err)
	}
}

// touched sets p's modification time to one not seen before: a change
// made in the same clock tick as the tree keeps its times (see racyWindow).
func (c *cacheTree) touched(p string) {
	c.t.Helper()
	c.tick++
	when := time.Unix(1_000_000_000+c.tick*10, 0)
	c.must(os.Chtimes(p, when, when))
}

// extras is Extras of the granted directory, which must be what the
// reference walk finds now, after wantScans scans in all.
func (c *cacheTree) extras(wantScans int) []Extra {
	c.t.Helper()
	got := Extras([]Grant{{Path: c.bin, IsDir: true}})
	if want := scanExecDirByWalk(c.bin); !reflect.DeepEqual(got, want) {
		c.t.Errorf("Extras = %+v\nwant (a fresh walk) %+v", got, want)
	}
	if c.scans == wantScans+1 {
		if d := c.outsideChanged(); d != "" {
			// A rescan the test did not cause: it is what the cache
			// must do then. Counted as expected, the test goes on.
			c.t.Logf("one scan more than the test caused: %s, above the tree, changed meanwhile (another test's files)", d)
			c.scans--
		}
	}
	if c.scans != wantScans {
		c.t.Errorf("%d scans, want %d", c.scans, wantScans)
	}
	return got
}

// outsideChanged returns a directory above the tree whose version changed
// since it was last looked at (and notes the new versions), or "".
func (c *cacheTree) outsideChanged() string {
	changed := ""
	for d, v := range c.outside {
		if now := pathVersion(d); now != v {
			c.outside[d], changed = now, d
		}
	}
	return changed
}

func hasExtra(extras []Extra, path string) bool {
	return slices.ContainsFunc(extras, func(e Extra) bool { return e.Path == path })
}

// TestExtrasCacheReusedUnchanged: with nothing changed, a second Extras
// answers the same without scanning again.
func TestExtrasCacheReusedUnchanged(t *testing.T) {
	c := newCacheTree(t)
	first := c.extras(1)
	if len(first) != 3 {
		t.Fatalf("want 3 extras, got %+v", first)
	}
	if again := c.extras(1); !reflect.DeepEqual(again, first) {
		t.Errorf("cached %+v, first %+v", again, first)
	}
}

// TestExtrasCacheSeesRepointedLink: a link re-pointed in another directory
// (an alternative switched) changes the answer at once, though the
// granted directory did not change.
func TestExtrasCacheSeesRepointedLink(t *testing.T) {
	c := newCacheTree(t)
	c.extras(1)
	link := filepath.Join(c.alt, "tool")
	c.must(os.Symlink("../lib/tool2", link+".new"))
	c.must(os.Rename(link+".new", link))
	c.touched(c.alt)
	got := c.extras(2)
	if !hasExtra(got, filepath.Join(c.lib, "tool2")) || hasExtra(got, filepath.Join(c.lib, "tool1")) {
		t.Errorf("after re-pointing %s to tool2: %+v", link, got)
	}
	c.extras(2) // and that answer is kept
}

// TestExtrasCacheSeesNewInterpreter: a target rewritten in place to name
// another interpreter gives the new chain.
func TestExtrasCacheSeesNewInterpreter(t *testing.T) {
	c := newCacheTree(t)
	c.extras(1)
	script := filepath.Join(c.lib, "script")
	c.must(os.WriteFile(script, []byte("#!"+filepath.Join(c.lib, "interpB")+"\n"), 0o755))
	c.touched(script)
	got := c.extras(2)
	i := slices.IndexFunc(got, func(e Extra) bool { return e.Path == script })
	if i < 0 || len(got[i].Interps) == 0 || got[i].Interps[0] != filepath.Join(c.lib, "interpB") {
		t.Errorf("after rewriting %s: %+v", script, got)
	}
	// The interpreter itself rewritten to name another: the chain's rest.
	interp, next := filepath.Join(c.lib, "interpB"), filepath.Join(c.lib, "tool2")
	c.must(os.WriteFile(interp, []byte("#!"+next+"\n"), 0o755))
	c.touched(interp)
	got = c.extras(3)
	if i := slices.IndexFunc(got, func(e Extra) bool { return e.Path == script }); i < 0 || !slices.Contains(got[i].Interps, next) {
		t.Errorf("after rewriting %s to name %s: %+v", interp, next, got)
	}
}

// TestExtrasCacheSeesRemovedTarget: a target removed is gone from the
// answer; one no longer executable too.
func TestExtrasCacheSeesRemovedTarget(t *testing.T) {
	c := newCacheTree(t)
	c.extras(1)
	gone := filepath.Join(c.lib, "gone")
	c.must(os.Remove(gone))
	c.touched(c.lib)
	if got := c.extras(2); hasExtra(got, gone) {
		t.Errorf("removed %s still in %+v", gone, got)
	}
	tool := filepath.Join(c.lib, "tool1")
	c.must(os.Chmod(tool, 0o644))
	c.touched(tool)
	if got := c.extras(3); hasExtra(got, tool) {
		t.Errorf("%s no longer executable, still in %+v", tool, got)
	}
}

// TestExtrasCacheRacy: an answer that noted a time within racyWindow of
// its scan is not kept (a change in the same clock tick could keep every
// version), so the next Extras scans again.
func TestExtrasCacheRacy(t *testing.T) {
	c := newCacheTree(t)
	racyWindow = time.Hour
	c.extras(1)
	c.extras(2)
	racyWindow = 0
	c.extras(3)
	c.extras(3)
}

// TestExtrasCacheIgnoresTargetBeside: a link to a program beside it in the
// granted directory is no extra whatever that program is, so the cached
// scan does not depend on that program's version (a change of it alone
// keeps the cached answer), while it does on a target outside; and after
// such a change the answer is still what a fresh walk finds. (The
// dependencies are compared, not the scans counted: the tree's walk
// reads /tmp, whose entries other tests change at any time.)
func TestExtrasCacheIgnoresTargetBeside(t *testing.T) {
	c := newCacheTree(t)
	own := filepath.Join(c.bin, "own")
	c.must(os.WriteFile(own, []byte("#!/bin/sh\n"), 0o755))
	c.must(os.Symlink("own", filepath.Join(c.bin, "alias")))
	_, deps := scanExecDirNoting(c.bin)
	if _, ok := deps.paths[own]; ok {
		t.Errorf("the scan depends on %s, which is beside its link (no extra whatever it is)", own)
	}
	if _, ok := deps.paths[filepath.Join(c.lib, "tool1")]; !ok {
		t.Errorf("the scan does not depend on %s, a target outside", filepath.Join(c.lib, "tool1"))
	}
	grant := []Grant{{Path: c.bin, IsDir: true}}
	Extras(grant)
	c.must(os.Chmod(own, 0o644))
	if got, want := Extras(grant), scanExecDirByWalk(c.bin); !reflect.DeepEqual(got, want) {
		t.Errorf("after chmod of %s: Extras = %+v\nwant (a fresh walk) %+v", own, got, want)
	}
	if extras, deps := scanExecDirNoting("/usr/bin"); len(extras) > 0 {
		t.Logf("/usr/bin: %d extras, %d paths depended on (an lstat each per validation)", len(extras), len(deps.paths))
	}
}

// TestExtrasMemoMatchesFresh: Extras' memo of its last answer for granted
// directories (lastExtras) gives what extrasOf computes from fresh walks
// of the directories, for two directories that share targets (so that the
// second's are filtered by the first's): on a repeat (the same slice: the
// memo was used), in the other order, after a link of the second
// directory is re-pointed, and with a granted file in the list (whose
// answer is not kept).
func TestExtrasMemoMatchesFresh(t *testing.T) {
	c := newCacheTree(t)
	bin2 := filepath.Join(c.base, "bin2")
	c.must(os.Mkdir(bin2, 0o755))
	c.must(os.Symlink("../lib/tool1", filepath.Join(bin2, "same")))
	c.must(os.Symlink("../lib/interpB", filepath.Join(bin2, "other")))
	fresh := func(granted []Grant) []Extra {
		lists, n := make([][]Extra, len(granted)), 0
		for i, g := range granted {
			if g.IsDir {
				lists[i] = scanExecDirByWalk(g.Path)
				n += len(lists[i])
			}
		}
		return extrasOf(granted, lists, n)
	}
	check := func(what string, granted []Grant) []Extra {
		t.Helper()
		got := Extras(granted)
		if want := fresh(granted); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Extras = %+v\nwant (fresh walks) %+v", what, got, want)
		}
		return got
	}
	both := []Grant{{Path: c.bin, IsDir: true}, {Path: bin2, IsDir: true}}
	first := check("first", both)
	if len(first) != 4 {
		t.Fatalf("want 4 extras (bin's 3, bin2's interpB), got %+v", first)
	}
	// A repeat must use the memo: the same slice. Shown on a pair of calls
	// during which no directory above the tree changed (another test's
	// files in /tmp make the directories be scanned again, as they must).
	for tries := 0; ; tries++ {
		c.outsideChanged()
		first := check("repeat", both)
		again := check("repeat", both)
		if c.outsideChanged() != "" {
			if tries == 20 {
				t.Logf("a directory above the tree changed during each of %d repeats: the memo's use is not shown in this run (its answers were checked against fresh walks)", tries+1)
				break
			}
			continue
		}
		if &again[0] != &first[0] {
			t.Errorf("the repeat did not use the memo: the test shows nothing")
		}
		break
	}
	check("the other order", []Grant{both[1], both[0]})
	check("first order again", both)
	link := filepath.Join(bin2, "other")
	c.must(os.Remove(link))
	c.must(os.Symlink("../lib/tool2", link))
	c.touched(bin2)
	if got := check("re-pointed", both); hasExtra(got, filepath.Join(c.lib, "interpB")) {
		t.Errorf("after re-pointing %s: %+v", link, got)
	}
	withFile := append(slices.Clone(both), Grant{Path: filepath.Join(c.lib, "tool1")})
	check("with a granted file", withFile)
	check("with a granted file, again", withFile)
}
