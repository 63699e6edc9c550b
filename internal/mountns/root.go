package mountns

// The sandbox's own root (Spec.Root), as bubblewrap builds one: a fresh
// tmpfs becomes the root, and only what the sandbox is granted is shown
// in it, each host tree at its own path; the host's root is detached.
// Everything else of the host is not there at all: neither its names nor
// its stat, nor its mounts (/proc/self/mountinfo lists the own root's).
// A Mount's target that does not exist on the host is made in the new
// root's tmpfs, never on the host.
//
// # Order
//
//  1. MS_PRIVATE on / recursively (nothing propagates to the host).
//  2. Clone every tree shown in the new root (Root.Show and Spec.Read,
//     /dev, the host's /proc unless a fresh one is mounted, write paths,
//     mount sources), while the host's tree is whole: the clones are
//     descriptors, which survive the pivot.
//  3. A tmpfs (mode 0755) at a staging directory of the host's (/tmp or
//     /mnt: the mount hides it in this namespace only); with
//     Root.FreshProc a new procfs at its proc, made while the host's
//     /proc is still visible (the kernel refuses a new procfs in a user
//     namespace unless one is fully visible there).
//  4. Pivot: the tmpfs becomes the root; the old root is detached.
//  5. Each tree attached at its own path, outermost first, every mount
//     point made in the new tmpfs (never inside a host tree): shown paths
//     read-only and nosuid (recursively; also nodev and noexec unless on
//     the exec allowlist inside a private /tmp), /dev and the host's
//     /proc read-only and nosuid, the private /tmp and /dev/shm (fresh
//     tmpfs), write paths and Mounts as in the plan without an own root,
//     and the working directory where nothing shows it: an empty,
//     read-only tmpfs of mode 0111 (Spec.Opaque).
//  6. Root.Links: the host's symbolic links on the granted paths (merged
//     /usr: /bin -> usr/bin, ...), made in the new tmpfs.
//  7. The new root's tmpfs read-only, nosuid, nodev (not recursively).
//  8. Pinned, protected and hidden paths, as in the plan without an own
//     root (steps 7 and 8 there).

import (
	"slices"
	"sort"
)

// Root is what the sandbox's own root shows besides the write paths, the
// Mounts and Spec.Read.
type Root struct {
	// Show are host paths shown read-only at their own path (resolved,
	// existing): the system paths, the exec paths and what they imply.
	// One beneath /dev or /proc (shown whole), or beneath another shown
	// path, a write path or a Mount's target, is left to that one.
	Show []string
	// Links are the symbolic links on the granted paths, made in the new
	// root where no host tree shown there has them already.
	Links []Link
	// FreshProc mounts a new procfs at /proc (the program has a PID
	// namespace of its own: /proc shows its processes only); otherwise
	// the host's /proc is shown.
	FreshProc bool
}

// Link is a symbolic link at Path pointing to Target, as on the host.
type Link struct {
	Path, Target string
}

// rootStages are where the new root's tmpfs is built before the pivot:
// the first that is a directory on the host (its contents are hidden in
// the namespace only).
var rootStages = []string{"/tmp", "/mnt"}

// placement is one thing put in the new root at path (step 5).
type placement struct {
	path string
	do   func()
	tmp  bool // a private tmp dir: paths inside it are made there
}

func (b *builder) buildRoot() {
	s, r := b.spec, b.spec.Root
	b.op(Op{Kind: OpPrivate, Path: "/", Why: "no mount made here reaches the host"})
	stage := ""
	for _, d := range rootStages {
		if s.Lookup(d) == Dir {
			stage = d
			break
		}
	}
	if stage == "" {
		b.gap("private_root", "/", "no directory to build the new root on (/tmp or /mnt) exists on this host")
		return
	}
	if slices.Contains(append(append(slices.Clone(s.Read), r.Show...), writePaths(s)...), "/") {
		b.gap("private_root", "/", "a grant of / shows the host's whole tree: there is no root of the sandbox's own to build")
		return
	}
	tmpDirs := b.privateTmpDirs()
	places := b.rootClones(tmpDirs)

	b.op(Op{Kind: OpTmpfs, Path: stage, Mode: 0o755, Set: AttrNosuid | AttrNodev,
		Why: "the sandbox's own root, built here (hidden in this namespace only)"})
	if r.FreshProc {
		b.op(Op{Kind: OpProc, Path: stage + "/proc", Create: true, Set: AttrRdonly | AttrNosuid | AttrNodev | AttrNoexec,
			Why: "a fresh /proc of the program's PID namespace, mounted while the host's is still fully visible"})
	}
	b.op(Op{Kind: OpPivot, Path: stage, Why: "nothing of the host's tree is reachable but what is attached below"})
	b.tmpfs = append(b.tmpfs, "/")
	if r.FreshProc {
		b.shown = append(b.shown, "/proc")
	}

	sort.SliceStable(places, func(i, j int) bool { return depth(places[i].path) < depth(places[j].path) })
	for _, p := range places {
		p.do()
	}
	for _, l := range r.Links {
		if b.inTmpfs(l.Path) && !slices.ContainsFunc(places, func(p placement) bool { return under(p.path, l.Path) }) {
			b.op(Op{Kind: OpSymlink, Path: l.Path, Target: l.Target, Why: "a symbolic link on a granted path, as on the host"})
		}
	}
	b.op(Op{Kind: OpSetAttr, Path: "/", Set: AttrRdonly | AttrNosuid | AttrNodev,
		Why: "the own root's tmpfs read-only: nothing can be made beside the grants"})

	b.pinAll()
	b.protectAll()
	b.hideAll()
}

// rootClones clones, while the host's tree is whole, every tree the own
// root shows, and returns what step 5 does, by path.
func (b *builder) rootClones(tmpDirs []string) []placement {
	s, r := b.spec, b.spec.Root
	var places []placement
	for _, d := range tmpDirs {
		places = append(places, placement{d, func() {
			b.op(Op{Kind: OpTmpfs, Path: d, Mode: 01777, Set: AttrNosuid | AttrNodev | AttrNoexec, Create: b.inTmpfs(d), Why: "private " + d})
			b.tmpfs = append(b.tmpfs, d)
			b.plan.Tmp = append(b.plan.Tmp, d)
		}, true})
	}
	system := []string{"/dev"}
	if !r.FreshProc {
		system = append(system, "/proc")
	}
	for _, d := range system {
		if s.Lookup(d) != Dir {
			continue
		}
		slot := b.cloneResolved(d, "shown in the own root")
		places = append(places, placement{d, func() {
			b.attach(Op{Path: d, Slot: slot, Create: true, Why: d + " in the own root"})
			b.op(Op{Kind: OpSetAttr, Path: d, Set: AttrRdonly | AttrNosuid, Recursive: true, Why: d + ": read-only, nosuid"})
		}, false})
	}
	covered := append(writePaths(s), "/dev", "/proc")
	for _, m := range s.Mounts {
		covered = append(covered, m.Target)
	}
	// A shown path inside c is left to c, unless a private tmp dir
	// inside c holds it (it is kept visible there).
	leftTo := func(p, c string) bool {
		return under(p, c) && !slices.ContainsFunc(tmpDirs, func(d string) bool { return under(d, c) && under(p, d) })
	}
	shows := append(slices.Clone(s.Read), r.Show...)
	sort.SliceStable(shows, func(i, j int) bool { return depth(shows[i]) < depth(shows[j]) })
	var shown []string
	for _, p := range shows {
		inTmp := slices.ContainsFunc(tmpDirs, func(d string) bool { return under(p, d) && p != d })
		if s.Lookup(p) == Missing || slices.ContainsFunc(shown, func(q string) bool { return under(p, q) }) ||
			slices.ContainsFunc(covered, func(c string) bool { return leftTo(p, c) }) {
			continue
		}
		shown = append(shown, p)
		slot := b.cloneResolved(p, "shown in the own root")
		places = append(places, placement{p, func() { b.showPath(p, slot, inTmp) }, false})
	}
	for _, w := range s.Write {
		slot := b.cloneResolved(w.Path, "write path")
		places = append(places, placement{w.Path, func() { b.attachWrite(w, slot) }, false})
	}
	for _, m := range s.Mounts {
		if s.Lookup(m.Source) == Missing {
			b.gap("mounts", m.Source, "source does not exist")
			continue
		}
		slot := b.cloneResolved(m.Source, "source of the mount at "+m.Target)
		places = append(places, placement{m.Target, func() { b.attachMount(m, slot) }, false})
	}
	for _, o := range s.Opaque {
		if slices.ContainsFunc(places, func(p placement) bool { return !p.tmp && under(o, p.path) || under(p.path, o) }) {
			continue // shown, or made as the mount point of what lies inside
		}
		places = append(places, placement{o, func() {
			b.op(Op{Kind: OpTmpfs, Path: o, Mode: 0o111, Create: true, Set: AttrRdonly | AttrNosuid | AttrNodev | AttrNoexec,
				Why: "the working directory, which no grant shows: an empty, read-only tmpfs of mode 0111 (it can be entered, not listed)"})
		}, false})
	}
	return places
}

// showPath attaches the shown host path p (its clone in slot) at its own
// path, read-only and nosuid; inside a private /tmp or /dev/shm also
// nodev, and noexec unless on the exec allowlist, as a kept read path.
func (b *builder) showPath(p string, slot int, inTmp bool) {
	b.attach(Op{Path: p, Slot: slot, Create: b.inTmpfs(p), File: b.spec.Lookup(p) == File, Why: "granted: shown in the own root"})
	set, why := uint64(AttrRdonly|AttrNosuid), "granted: read-only, nosuid"
	if inTmp {
		set |= AttrNodev
		why += ", nodev"
		if !slices.ContainsFunc(b.spec.Exec, func(e string) bool { return under(p, e) }) {
			set |= AttrNoexec
			why += ", noexec (not on the exec allowlist)"
		}
	}
	b.op(Op{Kind: OpSetAttr, Path: p, Set: set, Recursive: true, Why: why})
}
