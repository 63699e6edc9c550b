package mountns

// Paths kept visible inside a private /tmp or /dev/shm (Spec.Read,
// Spec.Opaque): step 4 of the plan.

import (
	"slices"
	"sort"
)

// kept is one path kept visible in a private tmp dir: its clone, and
// whether it is a directory shown as a name only (Spec.Opaque).
type kept struct {
	path   string
	slot   int
	file   bool
	opaque bool
}

// cloneKept clones, while the tree is whole, every Read and Opaque path
// beneath one of tmpDirs, outermost first (a kept directory attached
// after a path kept inside it would cover that path's own attributes).
func (b *builder) cloneKept(tmpDirs []string) []kept {
	s := b.spec
	var keep []kept
	opaque, visible := opaqueDirs(s)
	reads := append(append(slices.Clone(s.Read), visible...), opaque...)
	sort.SliceStable(reads, func(i, j int) bool { return depth(reads[i]) < depth(reads[j]) })
	for _, r := range reads {
		for _, d := range tmpDirs {
			if r != d && under(r, d) && !slices.ContainsFunc(keep, func(k kept) bool { return k.path == r }) {
				keep = append(keep, kept{r, b.cloneResolved(r, "read path inside private "+d), s.Lookup(r) == File,
					slices.Contains(opaque, r)})
			}
		}
	}
	return keep
}

// attachKept shows each kept path in the private tmp dir. Its clone was
// taken before everything was made read-only, so it carries the host's
// flags: it gets the ones it would have outside the private dir
// (read-only, nosuid, nodev, noexec unless Exec covers it; a write path
// covering it is attached after, writable). An opaque directory is an
// empty, read-only tmpfs of mode 0111 over its mount point.
func (b *builder) attachKept(keep []kept) {
	for _, k := range keep {
		if k.opaque {
			b.attach(Op{Path: k.path, Slot: k.slot, Create: b.inTmpfs(k.path), Why: "directory kept as a name only: its mount point"})
			b.op(Op{Kind: OpTmpfs, Path: k.path, Mode: 0o111, Set: AttrRdonly | AttrNosuid | AttrNodev | AttrNoexec,
				Why: "directory kept as a name only: an empty, read-only tmpfs of mode 0111 (it can be entered, not listed)"})
			continue
		}
		b.attach(Op{Path: k.path, Slot: k.slot, Create: b.inTmpfs(k.path), File: k.file, Why: "read path kept visible"})
		set, why := uint64(AttrRdonly|AttrNosuid|AttrNodev), "read path kept visible: read-only, nosuid, nodev"
		if !slices.ContainsFunc(b.spec.Exec, func(e string) bool { return under(k.path, e) }) {
			set |= AttrNoexec
			why += ", noexec (not on the exec allowlist)"
		}
		b.op(Op{Kind: OpSetAttr, Path: k.path, Set: set, Recursive: true, Why: why})
	}
}

// opaqueDirs splits the Opaque paths into those that can be made empty
// (see Spec.Opaque) and those kept visible as Read paths instead.
func opaqueDirs(s Spec) (opaque, visible []string) {
	inside := append(slices.Clone(s.Read), writePaths(s)...)
	for _, m := range s.Mounts {
		inside = append(inside, m.Target)
	}
	for _, o := range s.Opaque {
		if slices.ContainsFunc(inside, func(p string) bool { return under(p, o) || under(o, p) }) ||
			slices.ContainsFunc(s.Opaque, func(p string) bool { return p != o && under(p, o) }) {
			visible = append(visible, o)
		} else {
			opaque = append(opaque, o)
		}
	}
	return opaque, visible
}

// cloneResolved is clone of a path the caller resolved (a write path, a
// mount source, a kept read path: none is a symbolic link), taken without
// following a link in its last component: one swapped in since the
// caller looked (between WrapCommand and the child's mount step) is
// cloned as the link itself, which cannot be attached over a directory or
// a file, so the child refuses to start instead of showing what the link
// names. (The Landlock rule for the path checks the object's identity
// too, but a path inside the private /tmp is also covered by the rule
// that grants the whole tmpfs.) A directory above it swapped for a link
// is still followed.
func (b *builder) cloneResolved(p, why string) int {
	slot := b.clone(p, why)
	b.plan.Ops[len(b.plan.Ops)-1].NoFollow = true
	return slot
}
