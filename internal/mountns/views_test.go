package mountns

import (
	"slices"
	"strings"
	"testing"
)

// setAttrs returns the OpSetAttr steps on p, in order.
func setAttrs(p Plan, path string) []Op {
	var out []Op
	for _, o := range p.Ops {
		if o.Kind == OpSetAttr && o.Path == path {
			out = append(out, o)
		}
	}
	return out
}

// TestBuildKeptPathsGetOutsideFlags: a read path, working directory or
// executable kept visible inside a private /tmp is a clone taken before
// everything was made read-only, so it carries the host's flags; the plan
// sets the ones it would have outside: read-only, nosuid, nodev, and
// noexec unless on the exec allowlist. Outermost first, so that the
// attributes of a path kept inside another are not covered by it.
func TestBuildKeptPathsGetOutsideFlags(t *testing.T) {
	fs := newFS()
	fs.kinds["/tmp/app"] = Dir
	fs.kinds["/tmp/app/bin"] = File
	fs.kinds["/tmp/data"] = Dir
	fs.kinds["/dev/shm/seg"] = File
	s := fs.spec()
	s.PrivateTmp = true
	s.Read = []string{"/tmp/app/bin", "/tmp/app", "/tmp/data", "/dev/shm/seg", "/tmp/app"}
	s.Exec = []string{"/tmp/app/bin"}
	p, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Join(p.Lines(), "\n")
	for path, want := range map[string]uint64{
		"/tmp/app":     AttrRdonly | AttrNosuid | AttrNodev | AttrNoexec,
		"/tmp/app/bin": AttrRdonly | AttrNosuid | AttrNodev,
		"/tmp/data":    AttrRdonly | AttrNosuid | AttrNodev | AttrNoexec,
		"/dev/shm/seg": AttrRdonly | AttrNosuid | AttrNodev | AttrNoexec,
	} {
		ops := setAttrs(p, path)
		if len(ops) != 1 || ops[0].Set != want || ops[0].Clear != 0 || !ops[0].Recursive {
			t.Errorf("%s: set steps %+v, want one recursive +%#x:\n%s", path, ops, want, lines)
		}
		if a, c := opIndex(t, p, OpAttach, path), opIndex(t, p, OpSetAttr, path); c != a+1 {
			t.Errorf("%s: attributes set at step %d, attached at %d:\n%s", path, c, a, lines)
		}
	}
	if opIndex(t, p, OpAttach, "/tmp/app") > opIndex(t, p, OpAttach, "/tmp/app/bin") {
		t.Errorf("/tmp/app attached after /tmp/app/bin, covering it:\n%s", lines)
	}
	var clones int
	for _, o := range p.Ops {
		if o.Kind == OpClone && o.Path == "/tmp/app" {
			clones++
		}
	}
	if clones != 1 {
		t.Errorf("/tmp/app, named twice, cloned %d times:\n%s", clones, lines)
	}
	// A write path kept inside the private /tmp is attached after, and
	// writable.
	s.Write = []WritePath{{Path: "/tmp/data"}}
	p, _ = Build(s)
	ops := setAttrs(p, "/tmp/data")
	if n := len(ops); n != 2 || ops[1].Clear&AttrRdonly == 0 || !slices.ContainsFunc(p.Ops, func(o Op) bool { return o.Kind == OpAttach && o.Path == "/tmp/data" && o.Why == "write path" }) {
		t.Errorf("/tmp/data as a write path: %+v", ops)
	}
}

// viewFS is newFS with a repository at /src (outside every write path)
// and a secret file and directory in /data.
func viewFS() fakeFS {
	fs := newFS()
	for p, k := range map[string]Kind{"/src": Dir, "/src/.git": Dir, "/src/.git/hooks": Dir, "/src/.git/config": File,
		"/data/key": File, "/data/sec": Dir, "/data/a": Dir, "/data/a/b": Dir, "/data/a/b/key": File, "/srv": Dir, "/srv/ws": Dir, "/tmp/run/key": File} {
		fs.kinds[p] = k
	}
	return fs
}

// TestBuildViews: a protected, hidden or pinned path is enforced wherever
// the sandbox sees it, as data: each case lists the steps the plan must
// have (kind and path) and those it must not.
func TestBuildViews(t *testing.T) {
	type step struct {
		kind OpKind
		path string
	}
	for _, c := range []struct {
		name      string
		spec      func(*Spec)
		want, not []step
		gaps      []string
	}{{
		name: "a hidden file and directory through a read-only Mount of their parent",
		spec: func(s *Spec) {
			s.Mounts = []Mount{{Source: "/data", Target: "/mnt"}}
			s.DenyRead = []string{"/data/key", "/data/sec"}
		},
		want: []step{{OpMaskFile, "/mnt/key"}, {OpTmpfs, "/mnt/sec"}},
		// Not mounted on at their own path: nothing grants it.
		not: []step{{OpMaskFile, "/data/key"}, {OpTmpfs, "/data/sec"}},
	}, {
		name: "a repository shown through a writable Mount",
		spec: func(s *Spec) {
			s.Mounts = []Mount{{Source: "/src", Target: "/mnt", Write: true}}
			s.DenyWrite = []string{"/src/.git/hooks", "/src/.git/config"}
			s.Pin = []string{"/src/.git"}
		},
		want: []step{{OpAttach, "/mnt/.git"}, {OpAttach, "/mnt/.git/hooks"}, {OpSetAttr, "/mnt/.git/hooks"}, {OpAttach, "/mnt/.git/config"}},
		not:  []step{{OpAttach, "/src/.git/hooks"}, {OpAttach, "/src/.git"}},
	}, {
		name: "a read-only Mount of the repository needs nothing",
		spec: func(s *Spec) {
			s.Mounts = []Mount{{Source: "/src", Target: "/mnt"}}
			s.DenyWrite = []string{"/src/.git/hooks"}
			s.Pin = []string{"/src/.git"}
		},
		not: []step{{OpAttach, "/mnt/.git/hooks"}, {OpAttach, "/mnt/.git"}},
	}, {
		name: "an alias Mount of a protected repository in a write path",
		spec: func(s *Spec) {
			s.Write = []WritePath{{Path: "/ws"}}
			s.Mounts = []Mount{{Source: "/ws", Target: "/mnt", Write: true}, {Source: "/ws/.git/hooks", Target: "/tmp/h", Write: true}}
			s.DenyWrite = []string{"/ws/.git/hooks"}
			s.Pin = []string{"/ws/.git"}
		},
		want: []step{{OpAttach, "/ws/.git/hooks"}, {OpAttach, "/mnt/.git/hooks"}, {OpAttach, "/tmp/h"}, {OpAttach, "/mnt/.git"}},
	}, {
		name: "directories between a writable Mount's target and a hidden path are pinned",
		spec: func(s *Spec) {
			s.Mounts = []Mount{{Source: "/data", Target: "/mnt", Write: true}}
			s.DenyRead = []string{"/data/a/b/key"}
		},
		want: []step{{OpAttach, "/mnt/a"}, {OpAttach, "/mnt/a/b"}, {OpMaskFile, "/mnt/a/b/key"}},
	}, {
		name: "a host alias of the write path",
		spec: func(s *Spec) {
			s.Write = []WritePath{{Path: "/srv/ws"}}
			s.Aliases = []Alias{{Path: "/ws", At: "/srv/ws"}}
			s.DenyWrite = []string{"/ws/.git/hooks"}
			s.DenyRead = []string{"/ws/.env"}
		},
		want: []step{{OpAttach, "/srv/ws/.git/hooks"}, {OpMaskFile, "/srv/ws/.env"}, {OpAttach, "/srv/ws/.git"}},
		not:  []step{{OpAttach, "/ws/.git/hooks"}},
	}, {
		name: "a hidden path in the host's /tmp, seen only through a Mount",
		spec: func(s *Spec) {
			s.Mounts = []Mount{{Source: "/tmp/run", Target: "/mnt"}}
			s.DenyRead = []string{"/tmp/run/key"}
		},
		// Not at its own path: the private /tmp does not hold it.
		want: []step{{OpMaskFile, "/mnt/key"}},
		not:  []step{{OpMaskFile, "/tmp/run/key"}},
	}, {
		name: "a missing deny path seen through a writable Mount is reported",
		spec: func(s *Spec) {
			s.Mounts = []Mount{{Source: "/data", Target: "/mnt", Write: true}}
			s.DenyWrite = []string{"/data/nope"}
			s.DenyRead = []string{"/data/gone"}
		},
		gaps: []string{"/mnt/nope", "/mnt/gone"},
	}} {
		t.Run(c.name, func(t *testing.T) {
			fs := viewFS()
			s := fs.spec()
			s.PrivateTmp = true
			c.spec(&s)
			p, err := Build(s)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Join(p.Lines(), "\n")
			has := func(st step) int {
				return slices.IndexFunc(p.Ops, func(o Op) bool { return o.Kind == st.kind && o.Path == st.path })
			}
			for _, st := range c.want {
				if has(st) < 0 {
					t.Errorf("no %v step on %s in:\n%s", st.kind, st.path, lines)
				}
			}
			// Pins first: a pin's clone would copy a protection below it.
			lastPin := slices.IndexFunc(p.Ops, func(o Op) bool { return o.Kind == OpAttach && strings.HasPrefix(o.Why, "pinned") })
			for i, o := range p.Ops {
				if o.Kind == OpAttach && strings.HasPrefix(o.Why, "pinned") {
					lastPin = i
				}
			}
			for i, o := range p.Ops {
				if i < lastPin && (o.Kind == OpMaskFile || o.Kind == OpTmpfs && o.Mode == 0 || o.Kind == OpAttach && strings.HasPrefix(o.Why, "protected")) {
					t.Errorf("step %d (%s) before the last pin:\n%s", i, o, lines)
				}
			}
			for _, st := range c.not {
				if has(st) >= 0 {
					t.Errorf("unexpected %v step on %s in:\n%s", st.kind, st.path, lines)
				}
			}
			var gaps []string
			for _, g := range p.Gaps {
				if g.Field != "private_tmp" {
					gaps = append(gaps, g.Path)
				}
			}
			if !slices.Equal(gaps, c.gaps) {
				t.Errorf("gaps %q, want %q", gaps, c.gaps)
			}
			// Every protected view is read-only right after it is attached.
			for _, pr := range p.Protected {
				a := -1
				for i, o := range p.Ops {
					if o.Kind == OpAttach && o.Path == pr {
						a = i // the last: a Mount's own target is attached first
					}
				}
				if a < 0 || a+1 >= len(p.Ops) || p.Ops[a+1].Kind != OpSetAttr || p.Ops[a+1].Set&AttrRdonly == 0 {
					t.Errorf("protected %s is not attached and made read-only:\n%s", pr, lines)
				}
			}
		})
	}
}

// TestHostAliases: bind mounts of the same filesystem seen in mountinfo,
// as data: a subtree mounted twice, a mount of a directory inside a
// path, another filesystem (not an alias), an escaped mount point, and
// a bind mount hidden under a later mount (not an alias: not reachable).
func TestHostAliases(t *testing.T) {
	const mi = `27 1 254:0 / / rw,relatime - ext4 /dev/vda rw
40 27 254:0 /home/u/ws /srv/ws rw - ext4 /dev/vda rw
41 27 254:0 /home/u/ws/.git/hooks /opt/hooks rw - ext4 /dev/vda rw
42 27 254:1 /home/u/ws /other rw - ext4 /dev/vdb rw
43 27 254:0 /home/u /mnt/my\040home rw - ext4 /dev/vda rw
44 27 0:23 / /dev/shm rw - tmpfs tmpfs rw
45 27 254:0 /home/u /hidden rw - ext4 /dev/vda rw
46 27 0:50 / /hidden rw - tmpfs tmpfs rw
`
	got := HostAliases(mi, []string{"/home/u/ws/.git/hooks", "/home/u/ws/.env", "/dev/shm/x"})
	want := []Alias{
		{Path: "/home/u/ws/.git/hooks", At: "/srv/ws/.git/hooks"},
		{Path: "/home/u/ws/.git/hooks", At: "/opt/hooks"},
		{Path: "/home/u/ws/.git/hooks", At: "/mnt/my home/ws/.git/hooks"},
		{Path: "/home/u/ws/.env", At: "/srv/ws/.env"},
		{Path: "/home/u/ws/.env", At: "/mnt/my home/ws/.env"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("HostAliases:\n got %q\nwant %q", got, want)
	}
	// Seen from the alias: the path is inside /srv/ws, whose own mount
	// is entry 40.
	got = HostAliases(mi, []string{"/srv/ws/.env"})
	want = []Alias{{Path: "/srv/ws/.env", At: "/home/u/ws/.env"}, {Path: "/srv/ws/.env", At: "/mnt/my home/ws/.env"}}
	if !slices.Equal(got, want) {
		t.Errorf("HostAliases from the alias:\n got %q\nwant %q", got, want)
	}
}

// TestBuildOpaqueDirs: a working directory no grant covers, under the
// private /tmp, is an empty read-only tmpfs of mode 0111 over a mount
// point made in the plan's tmpfs (nothing of the host's shows, and the
// private /tmp's grant reaches nothing); with a kept path beneath it, it
// is kept visible instead (the kept path needs its parent).
func TestBuildOpaqueDirs(t *testing.T) {
	fs := newFS()
	fs.kinds["/tmp/cwd"] = Dir
	fs.kinds["/tmp/app"] = Dir
	fs.kinds["/tmp/app/bin"] = File
	s := fs.spec()
	s.PrivateTmp = true
	s.Opaque = []string{"/tmp/cwd", "/tmp/app"}
	s.Read = []string{"/tmp/app/bin"}
	p, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Join(p.Lines(), "\n")
	a, m := opIndex(t, p, OpAttach, "/tmp/cwd"), opIndex(t, p, OpTmpfs, "/tmp/cwd")
	if o := p.Ops[m]; m != a+1 || !p.Ops[a].Create || o.Mode != 0o111 || o.Set&AttrRdonly == 0 {
		t.Errorf("/tmp/cwd: attach %+v, tmpfs %+v:\n%s", p.Ops[a], o, lines)
	}
	if slices.ContainsFunc(p.Ops, func(o Op) bool { return o.Kind == OpTmpfs && o.Path == "/tmp/app" }) {
		t.Errorf("/tmp/app, with a kept path beneath it, was made empty:\n%s", lines)
	}
	if ops := setAttrs(p, "/tmp/app"); len(ops) != 1 || ops[0].Set&AttrRdonly == 0 {
		t.Errorf("/tmp/app is not kept visible, read-only:\n%s", lines)
	}
}
