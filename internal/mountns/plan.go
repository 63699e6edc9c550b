// Package mountns is the mount-namespace layer of WrapCommand and Run on
// Linux: what Landlock cannot express, because Landlock only ever adds
// rights. It makes everything outside the write paths a read-only mount (so
// metadata calls such as chmod, chown, utimes and setxattr fail with EROFS
// there, which Landlock does not cover), keeps paths read-only inside write
// paths (DenyWritePaths, and by default a repository's .git/hooks and
// .git/config), hides paths inside grants (DenyReadPaths), mounts write paths
// that are not on the exec allowlist noexec (so an ELF file the sandbox
// wrote cannot be run, not even as `ld.so ./payload`), shows host paths at
// other paths (Mounts), and gives the sandbox its own /tmp and /dev/shm.
// With Spec.Root it gives the sandbox a root of its own instead of the
// host's (root.go, which has that plan's order): only what is granted is
// there, and a Mount's target may be a path the host does not have.
//
// # Two halves
//
// [Build] is pure: it turns a [Spec] into a [Plan], an ordered list of
// [Op]s (each one mount-API system call or two) and the list of what it
// cannot enforce with the reason ([Gap]). It looks at the filesystem only
// through Spec.Lookup, so it is tested as data on every OS. [Apply] (Linux)
// performs the ops in a process that is already alone in a new mount
// namespace (created by clone with CLONE_NEWNS, and CLONE_NEWUSER when the
// caller is not root), before Landlock and seccomp are applied: the seccomp
// filter refuses every mount system call, so once it is loaded nothing can
// be unmounted, remounted, or mounted over from inside.
//
// # The host is left as it was
//
// The first op makes every mount in the new namespace private, so that no
// mount made here propagates to the host. No op ever creates a file or
// directory on a host filesystem: a mount point that does not exist (or
// a symbolic link of the own root) is created only inside a tmpfs this
// plan mounted. A protected path that does
// not exist therefore cannot be protected by a mount (there is nothing to
// mount on), and the plan reports it as a [Gap] rather than creating it on
// the host.
//
// # Order (without an own root; with one, see root.go)
//
//  1. MS_PRIVATE on / recursively (nothing propagates to the host).
//  2. Clone, with open_tree(OPEN_TREE_CLONE|AT_RECURSIVE), every tree a later
//     step shows somewhere (write paths, mount sources, paths kept inside a
//     private /tmp), while the original tree is still fully visible.
//  3. Every mount read-only and nosuid, recursively (mount_setattr).
//  4. Private /tmp and /dev/shm: fresh tmpfs, unless a grant covers them.
//     Paths kept visible there (Spec.Read) are attached, outermost first,
//     and made read-only, nosuid, nodev, and noexec unless on the exec
//     allowlist (recursively: their clones carry the host's flags).
//  5. Write paths: their clones attached at their own path, read-only
//     cleared, nosuid and nodev set, and noexec unless exec is granted.
//  6. Mounts: each source's clone attached at its target.
//     Steps 7 and 8 act at every view of a path too: inside each Mount
//     whose source contains it, at each host alias (views.go).
//  7. Pinned paths (a repository's .git): attached over themselves, still
//     writable, so that as mount points they cannot be renamed or removed.
//     Protected paths: their clones attached at their own path and made
//     read-only recursively; being mount points, they can be neither
//     renamed nor removed (EBUSY), nor can a parent be renamed over them.
//     A protected path that is itself a symbolic link: the link is also
//     cloned and attached over itself without being followed
//     (AT_SYMLINK_NOFOLLOW), read-only, so it cannot be replaced.
//  8. Hidden paths: an empty tmpfs of mode 000 (directories) or /dev/null
//     on a nodev mount (files), both read-only, mounted over them: listing
//     or opening them fails with EACCES.
//
// A write path is made writable again (step 5) by clearing the read-only
// flag this plan set in step 3. A mount that was read-only on the host
// before the namespace was made stays read-only: in a user namespace the
// kernel locks such flags, and as root the plan does not ask.
package mountns

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
)

// Kind is what a path is on the host.
type Kind int

const (
	Missing Kind = iota // does not exist (or cannot be looked at)
	Dir                 // a directory
	File                // anything else: a regular file, a device, ...
)

// Spec is what the sandbox asks of the mount layer. Paths are absolute and
// clean; paths that exist are resolved (no symlink in them), as the root
// package's Config resolution makes them.
type Spec struct {
	// Write are the write paths; Exec says which of them are on the exec
	// allowlist (or covered by it) and so stay executable.
	Write []WritePath
	// Read are the read paths: grants a private /tmp must keep visible.
	// One kept visible there is attached with the flags it has outside:
	// read-only (unless a write path covers it, which is attached after
	// it), nosuid, nodev, and noexec unless Exec covers it.
	Read []string
	// Opaque are directories that must exist in a private /tmp or
	// /dev/shm without showing anything of the host's: the working
	// directory where no grant covers it. Each is an empty, read-only
	// tmpfs of mode 0111 there (it can be entered, not listed or written;
	// the private dir's own grant would otherwise let the sandbox read
	// the host's directory). One with a Read or write path, a Mount's
	// target or another Opaque path beneath it, or inside a Read or write
	// path, is kept visible as a Read path instead (Build: opaque).
	Opaque []string
	// Exec are the paths on the exec allowlist (files or directories, and
	// the executables that must stay executable): a Read path kept
	// visible in a private /tmp or /dev/shm that lies inside one is not
	// mounted noexec.
	Exec []string
	// DenyWrite stay read-only even inside write paths.
	DenyWrite []string
	// DenyRead are hidden: neither readable nor listable.
	DenyRead []string
	// Readable are the other paths Landlock lets the sandbox read beneath
	// (exec grants, the default system paths, an exec directory's link
	// targets), resolved: a DenyRead path inside one is hidden as inside
	// a Read path. Unlike Read, nothing here is kept visible in a private
	// /tmp.
	Readable []string
	// Pin are paths inside write paths that stay writable but become mount
	// points of their own, so that they can be neither renamed nor
	// removed (EBUSY): a repository's .git, which must not be swapped for
	// a fresh one with writable hooks.
	Pin []string
	// Mounts show a host path at another path.
	Mounts []Mount
	// Aliases are the host's other mounts of trees that hold a
	// DenyWrite, DenyRead or Pin path (see views.go): each is protected
	// there too, where the sandbox could reach it.
	Aliases []Alias
	// PrivateTmp gives the sandbox its own /tmp and /dev/shm.
	PrivateTmp bool
	// Root, when not nil, gives the sandbox a root of its own (root.go):
	// only what it lists, the grants above, /dev and /proc are there.
	Root *Root
	// Lookup says what a path is on the host, following symbolic links
	// (stat). Required.
	Lookup func(path string) Kind
	// Resolve returns the path with every symbolic link resolved, or ""
	// when it does not exist. Used for DenyWrite and DenyRead, which are
	// not resolved by the caller because they need not exist. Required.
	Resolve func(path string) string
}

// WritePath is one write path.
type WritePath struct {
	Path string
	Exec bool
}

// Mount shows Source at Target, read-only unless Write.
type Mount struct {
	Source, Target string
	Write          bool
	Exec           bool
}

// under reports whether p is dir or beneath it.
func under(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+"/")
}

// privateTmpDirs are the directories PrivateTmp replaces.
var privateTmpDirs = []string{"/tmp", "/dev/shm"}

// Build turns spec into a plan. It is pure apart from spec.Lookup.
func Build(spec Spec) (Plan, error) {
	if spec.Lookup == nil || spec.Resolve == nil {
		return Plan{}, fmt.Errorf("mountns: Spec.Lookup and Spec.Resolve are required")
	}
	for _, p := range allPaths(spec) {
		if !path.IsAbs(p) || path.Clean(p) != p {
			return Plan{}, fmt.Errorf("mountns: path %q is not absolute and clean", p)
		}
	}
	b := &builder{spec: spec}
	if spec.Root != nil {
		b.buildRoot()
	} else {
		b.build()
	}
	return b.plan, nil
}

func allPaths(s Spec) []string {
	var out []string
	for _, w := range s.Write {
		out = append(out, w.Path)
	}
	out = append(out, s.Read...)
	out = append(out, s.Exec...)
	out = append(out, s.Opaque...)
	out = append(out, s.DenyWrite...)
	out = append(out, s.DenyRead...)
	out = append(out, s.Pin...)
	for _, m := range s.Mounts {
		out = append(out, m.Source, m.Target)
	}
	for _, a := range s.Aliases {
		out = append(out, a.Path, a.At)
	}
	if s.Root != nil {
		out = append(out, s.Root.Show...)
		for _, l := range s.Root.Links {
			out = append(out, l.Path)
		}
	}
	return out
}

type builder struct {
	spec  Spec
	plan  Plan
	slots int
	// tmpfs are the directories this plan mounted a tmpfs on: mount
	// points beneath them may be created. shown are the paths where a
	// host tree was attached since: beneath them, nothing is created.
	tmpfs, shown []string
	// mounts are the Mounts attached (a mount with a gap is not).
	mounts []Mount
	// pinned are the paths pinned so far.
	pinned []string
}

func (b *builder) op(o Op) { b.plan.Ops = append(b.plan.Ops, o) }

func (b *builder) gap(field, p, reason string) {
	b.plan.Gaps = append(b.plan.Gaps, Gap{Field: field, Path: p, Reason: reason})
}

func (b *builder) clone(p, why string) int {
	slot := b.slots
	b.slots++
	b.op(Op{Kind: OpClone, Path: p, Slot: slot, Why: why})
	return slot
}

// inTmpfs reports whether p lies beneath a tmpfs of this plan (so a mount
// point may be made there without touching the host).
// A path beneath a host tree attached there since (a write path, a kept
// read path, a mount) is on the host: nothing is made there.
func (b *builder) inTmpfs(p string) bool {
	if slices.ContainsFunc(b.shown, func(s string) bool { return under(p, s) }) {
		return false
	}
	return slices.ContainsFunc(b.tmpfs, func(t string) bool { return p != t && under(p, t) })
}

// attach adds an OpAttach of a host tree's clone, and remembers where.
func (b *builder) attach(o Op) {
	o.Kind = OpAttach
	b.op(o)
	b.shown = append(b.shown, o.Path)
}

// writable reports whether p lies inside a write path or a writable mount
// target: only there does a protected path need a mount of its own
// (everything else is read-only already, and Landlock denies writes
// outside write paths anyway).
func (b *builder) writable(p string) bool {
	for _, w := range b.spec.Write {
		if under(p, w.Path) {
			return true
		}
	}
	for _, m := range b.spec.Mounts {
		if m.Write && under(p, m.Target) {
			return true
		}
	}
	return slices.ContainsFunc(b.plan.Tmp, func(t string) bool { return under(p, t) })
}

// granted reports whether p lies inside any grant (read, write, mount,
// or another path Landlock lets the sandbox read: Readable).
func (b *builder) granted(p string) bool {
	if b.writable(p) {
		return true
	}
	for _, list := range [][]string{b.spec.Read, b.spec.Readable} {
		for _, r := range list {
			if under(p, r) {
				return true
			}
		}
	}
	for _, m := range b.spec.Mounts {
		if under(p, m.Target) {
			return true
		}
	}
	return false
}

func (b *builder) build() {
	s := b.spec
	b.op(Op{Kind: OpPrivate, Path: "/", Why: "no mount made here reaches the host"})

	tmpDirs := b.privateTmpDirs()

	// Clones of everything shown somewhere, taken while the tree is whole.
	writes := slices.Clone(s.Write)
	sort.SliceStable(writes, func(i, j int) bool { return depth(writes[i].Path) < depth(writes[j].Path) })
	writeSlot := make([]int, len(writes))
	for i, w := range writes {
		writeSlot[i] = b.cloneResolved(w.Path, "write path")
	}
	var mounts []Mount
	var mountSlot []int
	for _, m := range s.Mounts {
		kind := s.Lookup(m.Source)
		if kind == Missing {
			b.gap("mounts", m.Source, "source does not exist")
			continue
		}
		mounts = append(mounts, m)
		mountSlot = append(mountSlot, b.cloneResolved(m.Source, "source of the mount at "+m.Target))
	}
	// Read paths beneath a private tmp dir must stay visible there too.
	keep := b.cloneKept(tmpDirs)

	b.op(Op{Kind: OpSetAttr, Path: "/", Set: AttrRdonly | AttrNosuid, Recursive: true,
		Why: "everything outside the write paths is read-only (chmod, chown, utimes, xattrs: EROFS)"})

	for _, d := range tmpDirs {
		b.op(Op{Kind: OpTmpfs, Path: d, Mode: 01777, Set: AttrNosuid | AttrNodev | AttrNoexec, Why: "private " + d})
		b.tmpfs = append(b.tmpfs, d)
		b.plan.Tmp = append(b.plan.Tmp, d)
	}
	b.attachKept(keep)

	for i, w := range writes {
		b.attachWrite(w, writeSlot[i])
	}
	for i, m := range mounts {
		b.attachMount(m, mountSlot[i])
	}

	b.pinAll()
	b.protectAll()
	b.hideAll()
}

func writePaths(s Spec) []string {
	out := make([]string, len(s.Write))
	for i, w := range s.Write {
		out[i] = w.Path
	}
	return out
}

func depth(p string) int {
	if p == "/" {
		return 0
	}
	return strings.Count(p, "/")
}
