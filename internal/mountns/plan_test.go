package mountns

import (
	"errors"
	"path"
	"slices"
	"strings"
	"testing"
)

// fakeFS is a host for Build: kinds by path, and links (path → target).
type fakeFS struct {
	kinds map[string]Kind
	links map[string]string
	files map[string]string
}

func (f fakeFS) lookup(p string) Kind { return f.kinds[f.resolve(p)] }

// readDir lists the names of the paths directly in p.
func (f fakeFS) readDir(p string) []string {
	var out []string
	for k := range f.kinds {
		if path.Dir(k) == p && k != p {
			out = append(out, path.Base(k))
		}
	}
	slices.Sort(out)
	return out
}
func (f fakeFS) resolve(p string) string {
	for link, target := range f.links {
		if p == link || strings.HasPrefix(p, link+"/") {
			p = target + strings.TrimPrefix(p, link)
		}
	}
	if f.kinds[p] == Missing {
		return ""
	}
	return p
}
func (f fakeFS) readFile(p string) ([]byte, error) {
	if s, ok := f.files[p]; ok {
		return []byte(s), nil
	}
	return nil, errors.New("no such file")
}

func newFS() fakeFS {
	return fakeFS{kinds: map[string]Kind{
		"/": Dir, "/tmp": Dir, "/dev/shm": Dir, "/ws": Dir, "/ws/.git": Dir, "/ws/.git/hooks": Dir,
		"/ws/.git/config": File, "/ws/.env": File, "/ws/secrets": Dir, "/data": Dir, "/mnt": Dir,
		"/tmp/run": Dir, "/home/u/.ssh": Dir,
	}, links: map[string]string{}, files: map[string]string{}}
}

func (f fakeFS) spec() Spec { return Spec{Lookup: f.lookup, Resolve: f.resolve} }

func opIndex(t *testing.T, p Plan, kind OpKind, path string) int {
	t.Helper()
	for i, o := range p.Ops {
		if o.Kind == kind && o.Path == path {
			return i
		}
	}
	t.Fatalf("no %v step on %s in:\n%s", kind, path, strings.Join(p.Lines(), "\n"))
	return -1
}

// A deny-read path inside Readable (what Landlock grants besides the
// read and write paths: exec grants, the default system paths) is hidden
// as inside a Read path; outside every grant it needs nothing.
func TestBuildHidesInsideReadable(t *testing.T) {
	fs := newFS()
	s := fs.spec()
	s.Write = []WritePath{{Path: "/ws"}}
	s.DenyRead = []string{"/home/u/.ssh"}
	p, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Hidden) != 0 {
		t.Errorf("outside every grant: Hidden = %v, want nothing", p.Hidden)
	}
	s.Readable = []string{"/home/u"}
	if p, err = Build(s); err != nil {
		t.Fatal(err)
	}
	if o := p.Ops[opIndex(t, p, OpTmpfs, "/home/u/.ssh")]; o.Mode != 0 || o.Set&AttrRdonly == 0 || !slices.Equal(p.Hidden, []string{"/home/u/.ssh"}) {
		t.Errorf("inside Readable: %v, Hidden = %v; want an empty mode-000 tmpfs", o, p.Hidden)
	}
}

// A deny path reached through a symbolic link above it is a gap only
// where the sandbox could replace that link (it lies in a write path); a
// system's /lib -> /usr/lib cannot be, and the resolved path is
// protected either way.
func TestBuildLinkAboveDenyPath(t *testing.T) {
	fs := newFS()
	for p, k := range map[string]Kind{"/usr": Dir, "/usr/lib": Dir, "/usr/lib/key": File, "/ws/real": Dir, "/ws/real/key": File} {
		fs.kinds[p] = k
	}
	fs.links["/lib"] = "/usr/lib"
	fs.links["/ws/link"] = "/ws/real"
	s := fs.spec()
	s.Write = []WritePath{{Path: "/ws"}}
	s.Readable = []string{"/lib", "/usr/lib"} // as readableRoots gives a default: written and resolved
	s.DenyRead = []string{"/lib/key", "/ws/link/key"}
	p, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	var gaps []string
	for _, g := range p.Gaps {
		gaps = append(gaps, g.Path)
	}
	if !slices.Equal(gaps, []string{"/ws/link/key"}) {
		t.Errorf("gaps %v, want only /ws/link/key (its link is in the write path /ws)", p.Gaps)
	}
	for _, h := range []string{"/usr/lib/key", "/ws/real/key"} {
		if !slices.Contains(p.Hidden, h) {
			t.Errorf("%s not hidden: %v", h, p.Hidden)
		}
	}
	// A link outside the write paths that a writable Mount shows (its
	// source holds it) can be replaced there: a gap again.
	fs.kinds["/data/real"], fs.kinds["/data/real/key"] = Dir, File
	fs.links["/data/link"] = "/data/real"
	s.Readable = append(s.Readable, "/data")
	s.DenyRead = []string{"/data/link/key"}
	s.Mounts = []Mount{{Source: "/data", Target: "/mnt", Write: true}}
	if p, err = Build(s); err != nil {
		t.Fatal(err)
	}
	if len(p.Gaps) != 1 || p.Gaps[0].Path != "/data/link/key" {
		t.Errorf("a link shown writable through a Mount: gaps %v, want /data/link/key", p.Gaps)
	}
}

// A deny-read path under /proc cannot be hidden by a mount (its entries
// depend on the reader): a gap, never a silent "hidden".
func TestBuildDenyReadUnderProc(t *testing.T) {
	fs := newFS()
	fs.kinds["/proc"], fs.kinds["/proc/self"], fs.kinds["/proc/self/environ"] = Dir, Dir, File
	s := fs.spec()
	s.Write = []WritePath{{Path: "/ws"}}
	s.Readable = []string{"/proc/self"}
	s.DenyRead = []string{"/proc/self/environ"}
	p, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Gaps) != 1 || p.Gaps[0].Path != "/proc/self/environ" || len(p.Hidden) != 0 {
		t.Errorf("gaps %v, hidden %v; want /proc/self/environ a gap", p.Gaps, p.Hidden)
	}
}

func TestBuildOrderAndAttributes(t *testing.T) {
	fs := newFS()
	s := fs.spec()
	s.Write = []WritePath{{Path: "/ws"}, {Path: "/tmp/run"}}
	s.DenyWrite = []string{"/ws/.git/hooks", "/ws/.git/config"}
	s.Pin = []string{"/ws/.git"}
	s.DenyRead = []string{"/ws/.env", "/ws/secrets", "/home/u/.ssh"}
	s.Mounts = []Mount{{Source: "/data", Target: "/mnt"}}
	s.PrivateTmp = true
	p, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("plan:\n%s", strings.Join(p.Lines(), "\n"))
	if p.Ops[0].Kind != OpPrivate || p.Ops[0].Path != "/" {
		t.Fatalf("first step must make / private: %v", p.Ops[0])
	}
	ro := opIndex(t, p, OpSetAttr, "/")
	if o := p.Ops[ro]; o.Set&AttrRdonly == 0 || !o.Recursive {
		t.Errorf("/ not made read-only recursively: %v", o)
	}
	// Every clone is taken before any tmpfs covers a directory, so that
	// a path kept inside the private /tmp is cloned from the host's.
	firstTmpfs := opIndex(t, p, OpTmpfs, "/tmp")
	for i, o := range p.Ops {
		if o.Kind == OpClone && i > firstTmpfs && o.Path != "/ws/.git" && o.Path != "/ws/.git/hooks" && o.Path != "/ws/.git/config" {
			t.Errorf("clone of %s after the private /tmp was mounted", o.Path)
		}
	}
	// The workspace inside the private /tmp is attached after the tmpfs,
	// on a mount point made in it, and made writable and noexec.
	att := opIndex(t, p, OpAttach, "/tmp/run")
	if att < firstTmpfs || !p.Ops[att].Create {
		t.Errorf("/tmp/run attach: %v (tmpfs at step %d)", p.Ops[att], firstTmpfs)
	}
	for _, w := range []string{"/ws", "/tmp/run"} {
		o := p.Ops[opIndex(t, p, OpSetAttr, w)]
		if o.Clear&AttrRdonly == 0 || o.Set&AttrNoexec == 0 || o.Set&AttrNosuid == 0 {
			t.Errorf("write path %s: %v, want writable, noexec, nosuid", w, o)
		}
	}
	// Protected paths come after the write path they lie in and are
	// read-only; the pin comes before them.
	pin := opIndex(t, p, OpAttach, "/ws/.git")
	for _, d := range s.DenyWrite {
		i := opIndex(t, p, OpSetAttr, d)
		if i < opIndex(t, p, OpSetAttr, "/ws") || i < pin || p.Ops[i].Set&AttrRdonly == 0 {
			t.Errorf("protected %s: step %d %v", d, i, p.Ops[i])
		}
	}
	if !slices.Equal(p.Protected, s.DenyWrite) {
		t.Errorf("Protected = %v", p.Protected)
	}
	// Hidden: a directory gets an empty mode-000 tmpfs, a file the mask;
	// a path outside every grant needs nothing (Landlock denies it).
	if o := p.Ops[opIndex(t, p, OpTmpfs, "/ws/secrets")]; o.Mode != 0 || o.Set&AttrRdonly == 0 {
		t.Errorf("hidden dir: %v", o)
	}
	opIndex(t, p, OpMaskFile, "/ws/.env")
	if !slices.Equal(p.Hidden, []string{"/ws/.env", "/ws/secrets"}) {
		t.Errorf("Hidden = %v (a path outside every grant needs no mount)", p.Hidden)
	}
	// The mount is read-only and noexec unless asked.
	if o := p.Ops[opIndex(t, p, OpSetAttr, "/mnt")]; o.Set&AttrRdonly == 0 || o.Set&AttrNoexec == 0 {
		t.Errorf("mount: %v", o)
	}
	if len(p.Gaps) != 0 {
		t.Errorf("unexpected gaps: %+v", p.Gaps)
	}
	// Every attach has a clone before it.
	for i, o := range p.Ops {
		if o.Kind != OpAttach {
			continue
		}
		if !slices.ContainsFunc(p.Ops[:i], func(c Op) bool { return c.Kind == OpClone && c.Slot == o.Slot }) {
			t.Errorf("attach %v has no clone before it", o)
		}
	}
}

// Nothing is ever made on the host: a missing protected path, a missing
// mount target outside the plan's tmpfs, a path reached through a link, are
// reported, never planned.
func TestBuildReportsWhatItCannotDo(t *testing.T) {
	fs := newFS()
	fs.kinds["/ws/real"] = Dir
	fs.kinds["/ws/real/x"] = File
	fs.links["/ws/ldir"] = "/ws/real"
	s := fs.spec()
	s.Write = []WritePath{{Path: "/ws"}}
	s.DenyWrite = []string{"/ws/missing/hooks", "/ws/ldir/x", "/outside/x"}
	s.DenyRead = []string{"/ws/nope"}
	s.Mounts = []Mount{{Source: "/data", Target: "/nowhere"}, {Source: "/absent", Target: "/mnt"}, {Source: "/data", Target: "/ws/.env"}}
	p, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	gaps := map[string]string{}
	for _, g := range p.Gaps {
		gaps[g.Field+" "+g.Path] = g.Reason
	}
	for _, want := range []string{
		"deny_write_paths /ws/missing/hooks", "deny_write_paths /ws/ldir/x", "deny_read_paths /ws/nope",
		"mounts /nowhere", "mounts /absent", "mounts /ws/.env",
	} {
		if gaps[want] == "" {
			t.Errorf("no gap %q in %+v", want, p.Gaps)
		}
	}
	if _, ok := gaps["deny_write_paths /outside/x"]; ok {
		t.Errorf("a missing path outside every write path is no gap: nothing can create it")
	}
	for _, o := range p.Ops {
		if o.Create {
			t.Errorf("step %v makes a mount point, but no tmpfs of the plan is involved", o)
		}
		if o.Path == "/ws/missing/hooks" || o.Path == "/nowhere" {
			t.Errorf("planned %v on a missing path", o)
		}
	}
	// What the path reached through the link names is still protected.
	opIndex(t, p, OpSetAttr, "/ws/real/x")
}

func TestPrivateTmpSkippedWhenGranted(t *testing.T) {
	fs := newFS()
	s := fs.spec()
	s.Write = []WritePath{{Path: "/tmp", Exec: true}}
	s.PrivateTmp = true
	p, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(p.Tmp, "/tmp") || !slices.Contains(p.Tmp, "/dev/shm") {
		t.Errorf("Tmp = %v: a granted /tmp stays the host's, /dev/shm is private", p.Tmp)
	}
	if o := p.Ops[opIndex(t, p, OpSetAttr, "/tmp")]; o.Set&AttrNoexec != 0 {
		t.Errorf("exec-granted write path made noexec: %v", o)
	}
}

func TestBuildRejectsUncleanPaths(t *testing.T) {
	fs := newFS()
	for _, bad := range []string{"rel", "/a/../b", "/a/", ""} {
		s := fs.spec()
		s.DenyRead = []string{bad}
		if _, err := Build(s); err == nil {
			t.Errorf("Build accepted %q", bad)
		}
	}
}

func TestGitProtected(t *testing.T) {
	fs := newFS()
	protect, pin := GitProtected("/ws", fs.lookup, fs.readFile, fs.readDir)
	if !slices.Equal(protect, []string{"/ws/.git/hooks", "/ws/.git/config"}) || !slices.Equal(pin, []string{"/ws/.git"}) {
		t.Errorf("repository: protect %v pin %v", protect, pin)
	}
	// A worktree: .git is a file naming the real git dir, whose commondir
	// names the main repository's.
	fs.kinds["/wt"] = Dir
	fs.kinds["/wt/.git"] = File
	fs.kinds["/repo/.git/worktrees/wt"] = Dir
	fs.files["/wt/.git"] = "gitdir: /repo/.git/worktrees/wt\n"
	fs.files["/repo/.git/worktrees/wt/commondir"] = "../..\n"
	fs.kinds["/repo/.git/worktrees/wt/commondir"] = File
	protect, pin = GitProtected("/wt", fs.lookup, fs.readFile, fs.readDir)
	// The .git file itself first: rewritten, it would name another git
	// dir; and the existing commondir: rewritten, it would name another
	// common directory.
	want := []string{"/wt/.git", "/repo/.git/worktrees/wt/hooks", "/repo/.git/worktrees/wt/config", "/repo/.git/worktrees/wt/commondir", "/repo/.git/hooks", "/repo/.git/config"}
	if !slices.Equal(protect, want) || !slices.Equal(pin, []string{"/wt/.git"}) {
		t.Errorf("worktree: protect %v pin %v, want %v", protect, pin, want)
	}
	// A relative gitdir (submodules write those).
	fs.kinds["/sub"] = Dir
	fs.kinds["/sub/.git"] = File
	fs.files["/sub/.git"] = "gitdir: ../repo/.git/modules/sub"
	if protect, _ := GitProtected("/sub", fs.lookup, fs.readFile, fs.readDir); len(protect) < 2 || protect[1] != "/repo/.git/modules/sub/hooks" {
		t.Errorf("relative gitdir: %v", protect)
	}
	if protect, pin := GitProtected("/data", fs.lookup, fs.readFile, fs.readDir); protect != nil || pin != nil {
		t.Errorf("no repository: %v %v", protect, pin)
	}
	// Submodules' git directories: a name with a slash (modules/a/b), and
	// a submodule of a submodule; a directory without HEAD is not one.
	for _, d := range []string{"/ws/.git/modules", "/ws/.git/modules/lib", "/ws/.git/modules/a", "/ws/.git/modules/a/b",
		"/ws/.git/modules/lib/modules", "/ws/.git/modules/lib/modules/inner", "/ws/.git/modules/empty"} {
		fs.kinds[d] = Dir
	}
	for _, f := range []string{"/ws/.git/modules/lib/HEAD", "/ws/.git/modules/a/b/HEAD", "/ws/.git/modules/lib/modules/inner/HEAD"} {
		fs.kinds[f] = File
	}
	protect, _ = GitProtected("/ws", fs.lookup, fs.readFile, fs.readDir)
	want = []string{"/ws/.git/hooks", "/ws/.git/config"}
	for _, d := range []string{"/ws/.git/modules/lib", "/ws/.git/modules/lib/modules/inner", "/ws/.git/modules/a/b"} {
		want = append(want, d+"/hooks", d+"/config")
	}
	slices.Sort(want)
	slices.Sort(protect)
	if !slices.Equal(protect, want) {
		t.Errorf("submodules: protect %v, want %v", protect, want)
	}
}

// A deny path that is itself a symbolic link: its target is protected, and
// the link is shown over itself, not followed, read-only, so that it
// cannot be replaced; no gap.
func TestBuildProtectsALinkItself(t *testing.T) {
	fs := newFS()
	fs.kinds["/ws/real"] = Dir
	fs.links["/ws/link"] = "/ws/real"
	s := fs.spec()
	s.Write = []WritePath{{Path: "/ws"}}
	s.DenyWrite = []string{"/ws/link"}
	p, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Gaps) != 0 {
		t.Errorf("gaps %+v", p.Gaps)
	}
	c := opIndex(t, p, OpClone, "/ws/link")
	a := opIndex(t, p, OpAttach, "/ws/link")
	r := opIndex(t, p, OpSetAttr, "/ws/link")
	if !p.Ops[c].NoFollow || !p.Ops[r].NoFollow || p.Ops[r].Set&AttrRdonly == 0 || !(c < a && a < r) {
		t.Errorf("the link's steps: %v / %v / %v", p.Ops[c], p.Ops[a], p.Ops[r])
	}
	if i := opIndex(t, p, OpSetAttr, "/ws/real"); p.Ops[i].Set&AttrRdonly == 0 || i < r {
		t.Errorf("the target: %v (after the link's steps)", p.Ops[i])
	}
}
