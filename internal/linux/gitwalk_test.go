package linux

import (
	"errors"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openparallax/sandbox/internal/spec"
)

// fakeWalkFS is a tree in memory for the git walk: dirs maps a relative
// path to its entries (name → type), stamps to its stamp; links are
// entries of type gitEntLink (never entered). reads counts Read calls.
type fakeWalkFS struct {
	dirs   map[string]map[string]gitEntryType
	stamps map[string]gitDirStamp
	denied map[string]bool
	reads  int
	stats  int
}

var errFakeDenied, errFakeGone = errors.New("denied"), errors.New("gone")

func newFakeWalkFS(paths ...string) *fakeWalkFS {
	f := &fakeWalkFS{dirs: map[string]map[string]gitEntryType{".": {}}, stamps: map[string]gitDirStamp{}, denied: map[string]bool{}}
	for _, p := range paths {
		f.add(p)
	}
	return f
}

// add makes p: "a/b/" a directory, "a/f" a file, "a/l@" a link, "a/p|" a FIFO.
func (f *fakeWalkFS) add(p string) {
	t := gitEntFile
	switch {
	case strings.HasSuffix(p, "/"):
		t, p = gitEntDir, strings.TrimSuffix(p, "/")
	case strings.HasSuffix(p, "@"):
		t, p = gitEntLink, strings.TrimSuffix(p, "@")
	case strings.HasSuffix(p, "|"):
		t, p = gitEntOther, strings.TrimSuffix(p, "|")
	}
	parent := path.Dir(p)
	if _, ok := f.dirs[parent]; !ok {
		f.add(parent + "/")
	}
	f.dirs[parent][path.Base(p)] = t
	f.touch(parent)
	if t == gitEntDir {
		if _, ok := f.dirs[p]; !ok {
			f.dirs[p] = map[string]gitEntryType{}
		}
		f.touch(p)
	}
}

var fakeIno uint64

func (f *fakeWalkFS) touch(p string) {
	st, ok := f.stamps[p]
	if !ok {
		fakeIno++
		st = gitDirStamp{dev: 1, ino: fakeIno}
	}
	st.mtime, st.ctime = st.mtime+1, st.ctime+1
	f.stamps[p] = st
}

func (f *fakeWalkFS) Stat(rel string) (gitDirStamp, bool, error) {
	f.stats++
	if _, ok := f.dirs[rel]; !ok {
		return gitDirStamp{}, false, errFakeGone
	}
	return f.stamps[rel], true, nil
}

func (f *fakeWalkFS) Read(rel string, max int) (gitDirStamp, gitListing, error) {
	f.reads++
	var l gitListing
	ents, ok := f.dirs[rel]
	switch {
	case f.denied[rel]:
		return gitDirStamp{}, l, errFakeDenied
	case !ok:
		return gitDirStamp{}, l, errFakeGone
	}
	names := make([]string, 0, len(ents))
	for n := range ents {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if l.entries >= max {
			l.partial = true
			break
		}
		l.add(n, ents[n])
	}
	l.done()
	return f.stamps[rel], l, nil
}

func (f *fakeWalkFS) Denied(err error) bool { return errors.Is(err, errFakeDenied) }
func (f *fakeWalkFS) Gone(err error) bool   { return errors.Is(err, errFakeGone) }

// old is a clock far after every fake stamp (which are small numbers of
// nanoseconds): every listing is old enough to trust.
func old() time.Time { return time.Unix(1000, 0) }

func TestGitWalkFinds(t *testing.T) {
	f := newFakeWalkFS(
		".git/hooks/", "demo/.git/", "a/b/c/.git", // a repository at the top, one below, a gitdir file deep
		"bare/HEAD", "bare/objects/", "bare/refs/", "bare/config", // an implicit bare repository
		"half/HEAD", "half/objects/", // not one: no refs/
		"linked/.git@", "fifo/.git|", // a link (git follows it), a FIFO (never opened)
		"loop@", "demo/out@", // links, never entered
		"bare/objects/x/.git/", // inside a bare repository: not walked
	)
	w := newGitWalker(gitWalkBudget{dirs: 100, entries: 1000}, nil, old)
	w.walk("/ws", f)
	r := w.res
	if want := []string{"/ws", "/ws/demo", "/ws/linked", "/ws/a/b/c"}; !slices.Equal(r.Repos, want) {
		t.Errorf("Repos = %q, want %q", r.Repos, want)
	}
	if want := []string{"/ws/bare"}; !slices.Equal(r.Bare, want) {
		t.Errorf("Bare = %q, want %q", r.Bare, want)
	}
	if want := []string{"/ws/fifo/.git"}; !slices.Equal(r.Odd, want) {
		t.Errorf("Odd = %q, want %q", r.Odd, want)
	}
	if !r.complete() || len(r.Denied) != 0 {
		t.Errorf("incomplete: %+v", r)
	}
}

// The budget: breadth first, what is left is named (and counted past
// gitNotWalkedNamed), never silently dropped; a directory read in part
// (the entries bound) is named too.
func TestGitWalkBudget(t *testing.T) {
	var paths []string
	for i := range 40 {
		paths = append(paths, "d"+string(rune('a'+i%26))+string(rune('a'+i/26))+"/sub/")
	}
	f := newFakeWalkFS(paths...)
	w := newGitWalker(gitWalkBudget{dirs: 11, entries: 1000}, nil, old)
	w.walk("/ws", f)
	r := w.res
	if r.Dirs != 11 || r.complete() {
		t.Fatalf("walked %d directories, complete %v; want 11 and incomplete", r.Dirs, r.complete())
	}
	// The top and 10 of its 40 walked: 30 of them and the 10 below those
	// walked are left (what lies below those 40 is not known), 16 named.
	if len(r.NotWalked) != gitNotWalkedNamed || r.NotWalked[0] != "/ws/dfa" || r.NotWalkedMore != 40-gitNotWalkedNamed {
		t.Errorf("NotWalked %q (+%d)", r.NotWalked, r.NotWalkedMore)
	}
	w = newGitWalker(gitWalkBudget{dirs: 100, entries: 5}, nil, old)
	w.walk("/ws", newFakeWalkFS(paths...))
	if r := w.res; len(r.NotWalked) == 0 || r.NotWalked[0] != "/ws" {
		t.Errorf("a top read in part is not named: %+v", r)
	}
}

// The walk's time: a slow tree (here a clock that moves a second per
// look) stops at the deadline, and what is left is named.
func TestGitWalkDeadline(t *testing.T) {
	var paths []string
	for i := range 200 {
		paths = append(paths, "d"+string(rune('a'+i%26))+string(rune('a'+i/26))+"/")
	}
	clock := time.Unix(1000, 0)
	tick := func() time.Time { clock = clock.Add(time.Second); return clock }
	w := newGitWalker(gitWalkBudget{dirs: 1000, entries: 10000, time: 30 * time.Second}, nil, tick)
	w.walk("/ws", newFakeWalkFS(paths...))
	if w.res.complete() || w.res.Dirs >= 201 {
		t.Errorf("walked %d of 201 directories past a deadline, complete %v", w.res.Dirs, w.res.complete())
	}
}

// Each directory once (a bind mount or a second root over the same tree),
// and denied directories named, not walked.
func TestGitWalkVisitedAndDenied(t *testing.T) {
	f := newFakeWalkFS("a/.git/", "b/c/")
	f.dirs["b/c/again"] = nil
	f.dirs["b/c"]["again"] = gitEntDir
	f.stamps["b/c/again"] = f.stamps["."] // the top again, under another name
	f.denied["b"] = true
	w := newGitWalker(gitWalkBudget{dirs: 100, entries: 1000}, nil, old)
	w.walk("/ws", f)
	w.walk("/ws", f) // a second root over the same tree: nothing twice
	if want := []string{"/ws/a"}; !slices.Equal(w.res.Repos, want) || w.res.Dirs != 2 {
		t.Errorf("Repos %q, %d directories; want %q and 2", w.res.Repos, w.res.Dirs, want)
	}
	if want := []string{"/ws/b"}; !slices.Equal(w.res.Denied, want) || !w.res.complete() {
		t.Errorf("Denied %q, complete %v", w.res.Denied, w.res.complete())
	}
	delete(f.denied, "b")
	w = newGitWalker(gitWalkBudget{dirs: 100, entries: 1000}, nil, old)
	w.walk("/ws", f)
	if w.res.Dirs != 4 {
		t.Errorf("%d directories, want 4 (the loop back to the top walked once)", w.res.Dirs)
	}
}

// The cache: an unchanged tree is re-checked by Stat alone; a changed
// directory (its stamp moved) is read again; a listing begun within
// gitTimeGranularity of the directory's last change is not trusted.
func TestGitWalkCache(t *testing.T) {
	f := newFakeWalkFS("a/b/", "c/")
	c := newGitWalkCache(100)
	walk := func(now func() time.Time) gitWalkResult {
		w := newGitWalker(gitWalkBudget{dirs: 100, entries: 1000}, c, now)
		w.walk("/ws", f)
		return w.res
	}
	walk(old)
	if f.reads != 4 || f.stats != 0 {
		t.Fatalf("first walk: %d reads, %d stats; want 4, 0 (no lstat before a read with an empty cache)", f.reads, f.stats)
	}
	f.reads, f.stats = 0, 0
	walk(old)
	if f.reads != 0 || f.stats != 4 {
		t.Errorf("unchanged: %d reads, %d stats; want 0, 4", f.reads, f.stats)
	}
	f.reads = 0
	f.add("a/b/.git/")
	if r := walk(old); f.reads != 1 || !slices.Equal(r.Repos, []string{"/ws/a/b"}) {
		t.Errorf("after a change: %d reads, repos %q; want 1 (a/b alone) and [/ws/a/b]", f.reads, r.Repos)
	}
	// A listing begun right at the directory's change is not trusted.
	recent := func() time.Time { return time.Unix(0, f.stamps["c"].ctime+int64(gitTimeGranularity)/2) }
	c = newGitWalkCache(100)
	walk(recent)
	f.reads = 0
	walk(old)
	if f.reads != 4 {
		t.Errorf("listings begun within the granularity of the change: %d read again, want all 4", f.reads)
	}
	// The cache's bound: past it, it starts again.
	small := newGitWalkCache(2)
	w := newGitWalker(gitWalkBudget{dirs: 100, entries: 1000}, small, old)
	w.walk("/ws", f)
	if n := small.size(); n > 2 {
		t.Errorf("cache holds %d listings, bound 2", n)
	}
}

func TestSortRepos(t *testing.T) {
	got := sortRepos([]string{"/ws/a/b", "/ws/z", "/ws/a", "/ws/c/d", "/ws/z"}, []string{"/ws/c/d"})
	if want := []string{"/ws/c/d", "/ws/a", "/ws/z", "/ws/a/b"}; !slices.Equal(got, want) {
		t.Errorf("sortRepos = %q, want %q", got, want)
	}
}

// Repositories past the per-spawn budget make the git_protection entry
// not enforced, naming them; Strict refuses such a plan.
func TestGitProtectEntrySkipped(t *testing.T) {
	l := &mountLayer{git: []string{"/ws/.git"}, gitRoots: []string{"/ws"}, gitSkipped: []string{"/ws/far/away"}}
	base := spec.Enforcement{Feature: spec.FeatureGitProtect, Scope: spec.ScopeCommand, Enforced: true, Detail: "WrapCommand/Run: " + gitProtectDetail(l)}
	e := gitProtectEntry(l, base)
	if e.Enforced || !strings.Contains(e.Detail, "/ws/far/away") || !strings.Contains(e.Detail, "/ws/.git") || e.Hint == "" {
		t.Errorf("%+v; want not enforced, naming the skipped repository and the protected one, with a remedy", e)
	}
	p := spec.Plan{Available: true, Features: []spec.Enforcement{e}}
	if err := p.StrictError(spec.ScopeCommand); !errors.Is(err, spec.ErrNotEnforced) {
		t.Errorf("Strict: %v, want ErrNotEnforced", err)
	}
	if e := gitProtectEntry(&mountLayer{git: []string{"/ws/.git"}}, base); !e.Enforced {
		t.Errorf("nothing skipped, everything walked: %+v, want enforced", e)
	}
}
