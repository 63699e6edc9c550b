package mountns

import (
	"slices"
	"strings"
	"testing"
)

// rootSpec is a sandbox with an own root on newFS's host plus system
// paths: /usr shown, a write path /ws with a protected .git and a hidden
// .env, a Mount at /workspace (absent on the host), a working directory
// no grant covers, and the merged-/usr link /bin.
func rootSpec(fresh bool) (Spec, fakeFS) {
	fs := newFS()
	for _, d := range []string{"/usr", "/usr/lib", "/usr/bin", "/dev", "/proc", "/etc", "/home/u/proj"} {
		fs.kinds[d] = Dir
	}
	fs.kinds["/etc/hosts"] = File
	s := fs.spec()
	s.PrivateTmp = true
	s.Write = []WritePath{{Path: "/ws"}}
	s.Read = []string{"/data"}
	s.Exec = []string{"/usr/bin"}
	s.DenyWrite = []string{"/ws/.git"}
	s.DenyRead = []string{"/ws/.env"}
	s.Mounts = []Mount{{Source: "/data", Target: "/workspace", Write: true}}
	s.Opaque = []string{"/home/u/proj"}
	s.Root = &Root{Show: []string{"/usr", "/usr/lib", "/etc/hosts", "/dev/null", "/proc/self"},
		Links: []Link{{Path: "/bin", Target: "usr/bin"}, {Path: "/usr/lib/inside", Target: "x"}}, FreshProc: fresh}
	return s, fs
}

func TestRootOrder(t *testing.T) {
	for _, fresh := range []bool{true, false} {
		s, _ := rootSpec(fresh)
		p, err := Build(s)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Gaps) > 0 {
			t.Fatalf("fresh %v: gaps %v", fresh, p.Gaps)
		}
		pivot := opIndex(t, p, OpPivot, "/tmp")
		stage := opIndex(t, p, OpTmpfs, "/tmp")
		if stage > pivot {
			t.Errorf("the new root's tmpfs comes after the pivot")
		}
		attached := map[int]int{} // slot → index of its attach
		for i, o := range p.Ops {
			if o.Kind == OpAttach {
				attached[o.Slot] = i
			}
		}
		for i, o := range p.Ops {
			switch {
			case o.Kind == OpClone && attached[o.Slot] < pivot:
				t.Errorf("clone #%d attached before the pivot", o.Slot)
			case o.Kind == OpClone && i > pivot && !strings.HasPrefix(o.Why, "p") && !strings.Contains(o.Why, "protected"):
				// After the pivot only pins and protections clone (the
				// new root's own paths).
				t.Errorf("op %d after the pivot clones a host tree: %s", i, o)
			case o.Kind == OpProc && (!fresh || i > pivot || o.Path != "/tmp/proc"):
				t.Errorf("op %d: a procfs %s (fresh %v) must be mounted in the new tmpfs before the pivot", i, o, fresh)
			case (o.Create || o.Kind == OpSymlink) && i < pivot && o.Kind != OpProc:
				t.Errorf("op %d makes %s before the pivot, outside the new root", i, o.Path)
			case o.Create && slices.ContainsFunc([]string{"/ws", "/data", "/usr"}, func(h string) bool { return o.Path != h && under(o.Path, h) }):
				t.Errorf("op %d makes %s inside a host tree", i, o.Path)
			}
		}
		if fresh == slices.ContainsFunc(p.Ops, func(o Op) bool { return o.Kind == OpAttach && o.Path == "/proc" }) {
			t.Errorf("fresh %v: the host's /proc attached: %v", fresh, !fresh)
		}
		ws := opIndex(t, p, OpAttach, "/workspace")
		if !p.Ops[ws].Create {
			t.Errorf("/workspace, absent on the host, is not made in the new root")
		}
		opIndex(t, p, OpSymlink, "/bin")
		if slices.ContainsFunc(p.Ops, func(o Op) bool { return o.Path == "/usr/lib/inside" }) {
			t.Errorf("a link inside a shown host tree is made")
		}
		opaque := opIndex(t, p, OpTmpfs, "/home/u/proj")
		if p.Ops[opaque].Mode != 0o111 || !p.Ops[opaque].Create {
			t.Errorf("the working directory is not an empty 0111 tmpfs made in the new root: %s", p.Ops[opaque])
		}
		// /usr/lib inside /usr, /dev/null inside /dev, /proc/self inside
		// /proc: left to the outer tree.
		for _, inner := range []string{"/usr/lib", "/dev/null", "/proc/self"} {
			if slices.ContainsFunc(p.Ops, func(o Op) bool { return o.Kind == OpAttach && o.Path == inner }) {
				t.Errorf("%s attached on its own", inner)
			}
		}
		ro := -1
		for i, o := range p.Ops {
			if o.Kind == OpSetAttr && o.Path == "/" && o.Set&AttrRdonly != 0 && !o.Recursive {
				ro = i
			}
		}
		if ro < 0 || ro < opIndex(t, p, OpSymlink, "/bin") || ro > opIndex(t, p, OpMaskFile, "/ws/.env") {
			t.Errorf("the new root is not made read-only after what is made in it and before the protections (at %d)", ro)
		}
		opIndex(t, p, OpTmpfs, "/dev/shm")
		if tmp := p.Ops[slices.IndexFunc(p.Ops, func(o Op) bool { return o.Kind == OpTmpfs && o.Path == "/tmp" && o.Mode == 01777 })]; !tmp.Create {
			t.Errorf("the private /tmp's mount point is not made in the new root")
		}
	}
}

// A Mount target inside a write path (a host tree) that does not exist is
// still a gap: nothing is made inside a host tree.
func TestRootMountInsideHostTree(t *testing.T) {
	s, _ := rootSpec(false)
	s.Mounts = []Mount{{Source: "/data", Target: "/ws/absent"}}
	p, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(p.Gaps, func(g Gap) bool { return g.Field == "mounts" && g.Path == "/ws/absent" }) {
		t.Errorf("no gap for a target inside a write path: %v", p.Gaps)
	}
}

// Without a staging directory there is no own root: a gap.
func TestRootNoStage(t *testing.T) {
	s, fs := rootSpec(false)
	delete(fs.kinds, "/tmp")
	delete(fs.kinds, "/mnt")
	p, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(p.Gaps, func(g Gap) bool { return g.Field == "private_root" }) ||
		slices.ContainsFunc(p.Ops, func(o Op) bool { return o.Kind == OpPivot }) {
		t.Errorf("no private_root gap, or a pivot anyway: %v", p.Gaps)
	}
}

// A grant of / leaves nothing to hide: a gap, and no pivot.
func TestRootGrantOfSlash(t *testing.T) {
	s, _ := rootSpec(false)
	s.Read = append(s.Read, "/")
	p, err := Build(s)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(p.Gaps, func(g Gap) bool { return g.Field == "private_root" && g.Path == "/" }) ||
		slices.ContainsFunc(p.Ops, func(o Op) bool { return o.Kind == OpPivot }) {
		t.Errorf("no private_root gap for a grant of /, or a pivot anyway: %v", p.Gaps)
	}
}
