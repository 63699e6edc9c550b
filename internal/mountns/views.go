package mountns

// Every view of a path: a protected, hidden or pinned path is enforced at
// its own path and at every other place the sandbox sees it:
//
//   - inside every Mount whose source contains it (at the target, plus the
//     rest of the path), and at the target of every Mount whose source
//     lies inside it (the whole view is then the path's);
//   - at every host alias of it (Spec.Aliases: another mount of the same
//     subtree of the same filesystem on the host, as mountinfo shows it),
//     and inside every Mount whose source contains that alias.
//
// A view is protected where the sandbox could write it (a writable Mount,
// a write path, a private tmp dir), hidden where it could read it (every
// Mount is granted). Every directory between the top of a view (the
// Mount's target, the alias) and the protected or hidden path is pinned,
// as inside a write path, so that the path cannot be moved away and its
// old name made anew. Hard links are not views: a link elsewhere to a
// protected file is the same inode under another name, which no mount of
// the name reaches (the root package reports what it can of them).

import (
	"path"
	"slices"
	"sort"
	"strings"
)

// Alias says that the host tree at Path is also visible on the host at
// At: a bind mount of the same subtree (or of a subtree containing it) of
// the same filesystem.
type Alias struct {
	Path, At string
}

// view is one place, besides its own path, where a host path is seen.
type view struct {
	at   string // the path inside the sandbox
	host string // the host path shown there
	top  string // the Mount target or alias the view lies in
	why  string
}

// remap returns where p is seen through a tree shown at dst whose source
// is src, if it is.
func remap(p, src, dst string) (at, host string, ok bool) {
	switch {
	case under(p, src):
		return path.Join(dst, strings.TrimPrefix(p, src)), p, true
	case under(src, p):
		return dst, src, true
	}
	return "", "", false
}

// views returns the places besides its own path where host path p (every
// symbolic link in it resolved) is seen in the sandbox.
func (b *builder) views(p string) []view {
	var out []view
	// A view beneath a private tmp dir exists only inside a host tree
	// attached there (inTmpfs is false beneath one): an alias under the
	// host's /tmp is not there at all.
	add := func(v view) {
		if !b.inTmpfs(v.at) {
			out = append(out, v)
		}
	}
	through := func(p, via string) {
		for _, m := range b.mounts {
			if at, host, ok := remap(p, m.Source, m.Target); ok {
				add(view{at, host, m.Target, "seen through the mount of " + m.Source + " at " + m.Target + via})
			}
		}
	}
	through(p, "")
	for _, a := range b.spec.Aliases {
		if at, host, ok := remap(p, a.Path, a.At); ok && at != p {
			add(view{at, host, a.At, "seen at " + a.At + ", where the host shows " + a.Path + " too"})
			through(at, " (an alias on the host of "+a.Path+")")
		}
	}
	return out
}

// pinAll pins Spec.Pin at its own path and in every writable view, and
// every directory between a writable view's top and a protected or
// hidden path seen there; outermost first.
func (b *builder) pinAll() {
	s := b.spec
	type pin struct{ p, why string }
	var pins []pin
	for _, p := range s.Pin {
		if s.Resolve(p) != p {
			continue // a link (reported with its protected paths)
		}
		if b.writable(p) && !b.inTmpfs(p) {
			pins = append(pins, pin{p, "pinned: stays writable, but as a mount point it cannot be renamed or removed"})
		}
		for _, v := range b.views(p) {
			if b.writable(v.at) {
				pins = append(pins, pin{v.at, "pinned, " + v.why})
			}
		}
	}
	for _, p := range append(slices.Clone(s.DenyWrite), s.DenyRead...) {
		r := s.Resolve(p)
		if r == "" {
			continue
		}
		for _, v := range b.views(r) {
			if !b.writable(v.at) {
				continue
			}
			for d := path.Dir(v.at); d != v.top && under(d, v.top); d = path.Dir(d) {
				pins = append(pins, pin{d, "pinned, a directory above a protected path " + v.why})
			}
		}
	}
	sort.SliceStable(pins, func(i, j int) bool { return depth(pins[i].p) < depth(pins[j].p) })
	for _, p := range pins {
		if slices.Contains(b.pinned, p.p) {
			continue
		}
		b.pinned = append(b.pinned, p.p)
		slot := b.clone(p.p, "pinned path")
		b.op(Op{Kind: OpAttach, Path: p.p, Slot: slot, Why: p.why})
	}
}

// protectAll keeps each DenyWrite path read-only at its own path (see
// denied) and in every view the sandbox could write.
func (b *builder) protectAll() {
	const field = "deny_write_paths"
	for _, p := range b.spec.DenyWrite {
		r, ok := b.denied(field, p, b.writable, "it cannot be kept read-only by a mount without making it on the host, so the sandbox can create it")
		if ok {
			b.protect(r, "protected path")
		}
		if !b.viewsOf(field, p, r, b.writable) {
			continue
		}
		for _, v := range b.views(r) {
			if b.writable(v.at) && !slices.Contains(b.plan.Protected, v.at) {
				b.protect(v.at, "protected path "+r+", "+v.why)
			}
		}
	}
}

// protect attaches p's clone over itself, read-only.
func (b *builder) protect(p, why string) {
	slot := b.clone(p, why)
	b.op(Op{Kind: OpAttach, Path: p, Slot: slot, Why: why})
	b.op(Op{Kind: OpSetAttr, Path: p, Set: AttrRdonly | AttrNosuid | AttrNodev, Recursive: true,
		Why: why + ": read-only, and as a mount point it cannot be renamed or removed"})
	b.plan.Protected = append(b.plan.Protected, p)
}

// hideAll hides each DenyRead path at its own path (see denied) and in
// every view the sandbox could read.
func (b *builder) hideAll() {
	const field = "deny_read_paths"
	for _, p := range b.spec.DenyRead {
		if under(p, "/proc") {
			// /proc/self is a grant (the program's own entries), and what
			// a /proc path names depends on the process reading it: no
			// mount made before the program starts can hide it.
			b.gap(field, p, "under /proc, whose entries depend on the process that reads them: no mount can hide it")
			continue
		}
		r, ok := b.denied(field, p, b.granted, "if the sandbox creates it inside a write path it can read it")
		if ok {
			b.hide(r, r, "")
		}
		if !b.viewsOf(field, p, r, b.granted) {
			continue
		}
		for _, v := range b.views(r) {
			if b.granted(v.at) && !slices.Contains(b.plan.Hidden, v.at) {
				b.hide(v.at, v.host, " ("+r+", "+v.why+")")
			}
		}
	}
}

// hide mounts over p what hides it: host is the host path seen there,
// whose kind decides how.
func (b *builder) hide(p, host, why string) {
	if b.spec.Lookup(host) == Dir {
		b.op(Op{Kind: OpTmpfs, Path: p, Mode: 0, Set: AttrRdonly | AttrNosuid | AttrNodev | AttrNoexec,
			Why: "hidden directory: an empty, read-only tmpfs of mode 000 (listing and reading fail with EACCES)" + why})
	} else {
		b.op(Op{Kind: OpMaskFile, Path: p, Why: "hidden file: opening it fails with EACCES (stat shows a character device)" + why})
	}
	b.plan.Hidden = append(b.plan.Hidden, p)
}

// viewsOf handles what the views of deny path p (resolved: r, "" when it
// does not exist) need besides the path itself, and says whether r's own
// views are to be enforced: a p that does not exist but would be seen
// where needs holds is reported (the sandbox could create it there); a p
// that is itself a symbolic link in a directory without one is shown over
// itself, read-only and not followed, in every view where needs holds,
// as at its own path (see denied).
func (b *builder) viewsOf(field, p, r string, needs func(string) bool) bool {
	if r == "" {
		for _, v := range b.views(p) {
			if needs(v.at) {
				b.gap(field, v.at, "does not exist ("+p+", "+v.why+"): it cannot be protected by a mount without making it on the host, so the sandbox can create it")
			}
		}
		return false
	}
	if r == p || b.spec.Resolve(path.Dir(p)) != path.Dir(p) {
		return true
	}
	for _, v := range b.views(p) {
		if v.host != p || !needs(v.at) || slices.Contains(b.shown, v.at) {
			continue
		}
		slot := b.clone(v.at, "protected symbolic link "+p+", "+v.why)
		b.plan.Ops[len(b.plan.Ops)-1].NoFollow = true
		b.op(Op{Kind: OpAttach, Path: v.at, Slot: slot, Why: "protected symbolic link: it points to " + r + " and cannot be replaced"})
		b.op(Op{Kind: OpSetAttr, Path: v.at, Set: AttrRdonly | AttrNosuid | AttrNodev, NoFollow: true,
			Why: "protected symbolic link: read-only, and as a mount point it cannot be renamed or removed"})
		b.shown = append(b.shown, v.at)
	}
	return true
}

// denied resolves one deny path p and says whether it needs a mount: only
// where needs(p) holds (inside a write path for DenyWrite, inside any grant
// for DenyRead; elsewhere Landlock already denies). A path that does not
// exist is reported: there is nothing to mount on. A path that is itself
// a symbolic link (in a directory the sandbox may write) is protected
// where it points, and the link is shown over itself (AT_SYMLINK_NOFOLLOW,
// read-only): as a mount point it can be neither replaced, renamed nor
// removed, and still resolves as before. A path reached through a link
// higher up is reported: the sandbox could replace that link.
//
// A path beneath a private tmp dir and outside every host tree attached
// there is not in the sandbox's view at all (what the sandbox sees there
// is its own tmpfs): it needs nothing, and r is still returned for its
// views elsewhere.
func (b *builder) denied(field, p string, needs func(string) bool, missing string) (string, bool) {
	r := b.spec.Resolve(p)
	if b.inTmpfs(p) {
		return r, false
	}
	if r == "" {
		if needs(p) {
			b.gap(field, p, "does not exist: "+missing)
		}
		return "", false
	}
	if r != p && needs(p) {
		if dir := path.Dir(p); b.spec.Resolve(dir) == dir {
			slot := b.clone(p, "protected symbolic link")
			b.plan.Ops[len(b.plan.Ops)-1].NoFollow = true
			b.op(Op{Kind: OpAttach, Path: p, Slot: slot, Why: "protected symbolic link: it points to " + r + " and cannot be replaced"})
			b.op(Op{Kind: OpSetAttr, Path: p, Set: AttrRdonly | AttrNosuid | AttrNodev, NoFollow: true,
				Why: "protected symbolic link: read-only, and as a mount point it cannot be renamed or removed"})
			b.shown = append(b.shown, p)
		} else if b.replaceableLinkAbove(p) {
			b.gap(field, p, "reached through a symbolic link above it: "+r+" is protected, but that link can be replaced by the sandbox")
		}
	}
	return r, needs(r)
}

// replaceableLinkAbove reports whether a directory above p (which
// exists) is a symbolic link the sandbox could replace: one that lies,
// where it really is or in any view of it (a Mount of a tree holding it,
// a host alias), inside a write path, a writable Mount or a private tmp
// dir. A link elsewhere (a merged /usr's /lib) is as fixed as the
// read-only tree around it, and p's resolved path, which is protected,
// is what p names for as long as the sandbox runs.
func (b *builder) replaceableLinkAbove(p string) bool {
	for d := path.Dir(p); d != "/" && d != "."; d = path.Dir(d) {
		at := path.Join(b.spec.Resolve(path.Dir(d)), path.Base(d)) // the link's own place
		if b.spec.Resolve(d) == at {
			continue // not a link
		}
		if b.writable(at) || slices.ContainsFunc(b.views(at), func(v view) bool { return b.writable(v.at) }) {
			return true
		}
	}
	return false
}
