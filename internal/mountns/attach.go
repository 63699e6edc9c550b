package mountns

// The steps both plans (with and without an own root) share: which
// directories get a private tmpfs, and how a write path and a Mount are
// attached.

import "slices"

// privateTmpDirs says which directories get a private tmpfs: those that
// exist (in the own root, /tmp need not: its mount point is made there)
// and that no grant names or contains (a granted /tmp stays the host's).
func (b *builder) privateTmpDirs() []string {
	s := b.spec
	var tmpDirs []string
	if !s.PrivateTmp {
		return nil
	}
	for _, d := range privateTmpDirs {
		covered := false
		for _, g := range append(slices.Clone(s.Read), writePaths(s)...) {
			if under(d, g) {
				covered = true
			}
		}
		switch {
		case covered:
			b.gap("private_tmp", d, "a grant covers it: the host's "+d+" is used")
		case s.Lookup(d) != Dir && (s.Root == nil || d != "/tmp"):
			b.gap("private_tmp", d, "does not exist on this host")
		default:
			tmpDirs = append(tmpDirs, d)
		}
	}
	return tmpDirs
}

// attachWrite shows write path w (its clone in slot) at its own path,
// writable, nosuid, nodev, and noexec unless exec is granted.
func (b *builder) attachWrite(w WritePath, slot int) {
	b.attach(Op{Path: w.Path, Slot: slot, Create: b.inTmpfs(w.Path),
		File: b.spec.Lookup(w.Path) == File, Why: "write path"})
	set := uint64(AttrNosuid | AttrNodev)
	why := "write path: writable, nosuid, nodev"
	if !w.Exec {
		set |= AttrNoexec
		why += ", noexec (not on the exec allowlist: nothing written here can be executed or mapped executable)"
	}
	b.op(Op{Kind: OpSetAttr, Path: w.Path, Set: set, Clear: AttrRdonly, Why: why})
}

// attachMount shows m's source (its clone in slot) at its target, where
// the target exists or can be made in a tmpfs of this plan.
func (b *builder) attachMount(m Mount, slot int) {
	s := b.spec
	file := s.Lookup(m.Source) == File
	target := s.Lookup(m.Target)
	create := b.inTmpfs(m.Target) // the host's entries there are hidden: always made anew
	switch {
	case create:
	case target == Missing:
		b.gap("mounts", m.Target, "target does not exist: a mount point would have to be made on the host, which this library never changes")
		return
	case (target == File) != file:
		b.gap("mounts", m.Target, "target and source are not both directories or both files")
		return
	}
	b.attach(Op{Path: m.Target, Slot: slot, Create: create, File: file, Why: "mount of " + m.Source})
	b.mounts = append(b.mounts, m)
	set, clear := uint64(AttrNosuid|AttrNodev), uint64(0)
	if m.Write {
		clear |= AttrRdonly
	} else {
		set |= AttrRdonly
	}
	if !m.Exec {
		set |= AttrNoexec
	}
	b.op(Op{Kind: OpSetAttr, Path: m.Target, Set: set, Clear: clear, Recursive: !m.Write, Why: "mount of " + m.Source})
}
