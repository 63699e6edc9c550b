package mountns

import (
	"fmt"
	"strings"

	"github.com/openparallax/sandbox/internal/trampoline"
)

// The plan's steps: what Build makes and the trampoline executes.

// OpKind is what one step does.
type OpKind int

// The kinds are internal/trampoline's mount step kinds: the trampoline
// executes these ops as trampoline.MountOp (see Apply).
const (
	// OpPrivate: mount(NULL, Path, NULL, MS_REC|MS_PRIVATE).
	OpPrivate OpKind = trampoline.MountPrivate
	// OpClone: slot Slot = open_tree(Path, OPEN_TREE_CLONE|AT_RECURSIVE).
	OpClone OpKind = trampoline.MountClone
	// OpSetAttr: mount_setattr(Path, Set, Clear, AT_RECURSIVE if Recursive).
	OpSetAttr OpKind = trampoline.MountSetAttr
	// OpTmpfs: a new tmpfs at Path with mode Mode, attributes Set.
	OpTmpfs OpKind = trampoline.MountTmpfs
	// OpAttach: move_mount(slot Slot → Path); with Create, the mount point
	// is first made (a directory, or an empty file when File) inside a
	// tmpfs of this plan.
	OpAttach OpKind = trampoline.MountAttach
	// OpMaskFile: /dev/null mounted over Path, nodev and read-only, so
	// that opening it fails with EACCES.
	OpMaskFile OpKind = trampoline.MountMaskFile
	// OpProc: a new procfs at Path (made first in this plan's tmpfs
	// with Create), attributes Set.
	OpProc OpKind = trampoline.MountProc
	// OpPivot: the tmpfs at Path becomes the root (pivot_root), and the
	// old root is detached.
	OpPivot OpKind = trampoline.MountPivot
	// OpSymlink: a symbolic link at Path pointing to Target, made in the
	// own root's tmpfs (its missing parents first).
	OpSymlink OpKind = trampoline.MountSymlink
)

// Mount attributes (MOUNT_ATTR_* of linux/mount.h), kept here so that the
// pure half compiles on every OS.
const (
	AttrRdonly = 0x1
	AttrNosuid = 0x2
	AttrNodev  = 0x4
	AttrNoexec = 0x8
)

// Op is one step of a plan.
type Op struct {
	Kind      OpKind
	Path      string
	Slot      int
	Set       uint64
	Clear     uint64
	Recursive bool
	Mode      uint32
	Create    bool
	File      bool
	// NoFollow: OpClone and OpSetAttr act on a symbolic link itself
	// (AT_SYMLINK_NOFOLLOW), not on what it points to.
	NoFollow bool
	// Target is what an OpSymlink points to.
	Target string
	// Why says which Spec entry the step serves, for the plan printout
	// and for errors.
	Why string
}

func (o Op) String() string {
	attrs := func(v uint64) string {
		var s []string
		for _, a := range []struct {
			bit  uint64
			name string
		}{{AttrRdonly, "ro"}, {AttrNosuid, "nosuid"}, {AttrNodev, "nodev"}, {AttrNoexec, "noexec"}} {
			if v&a.bit != 0 {
				s = append(s, a.name)
			}
		}
		return strings.Join(s, ",")
	}
	var s string
	switch o.Kind {
	case OpPrivate:
		s = "make private (recursive) " + o.Path
	case OpClone:
		s = fmt.Sprintf("clone tree %s as #%d", o.Path, o.Slot)
	case OpSetAttr:
		s = "set"
		if o.Set != 0 {
			s += " +" + attrs(o.Set)
		}
		if o.Clear != 0 {
			s += " -" + attrs(o.Clear)
		}
		s += " on " + o.Path
		if o.Recursive {
			s += " (recursive)"
		}
	case OpTmpfs:
		s = fmt.Sprintf("tmpfs mode %04o %s at %s", o.Mode, attrs(o.Set), o.Path)
	case OpAttach:
		s = fmt.Sprintf("attach #%d at %s", o.Slot, o.Path)
		if o.Create {
			s += " (mount point made in this plan's tmpfs)"
		}
	case OpMaskFile:
		s = "hide file " + o.Path + " under a nodev /dev/null"
	case OpProc:
		s = fmt.Sprintf("procfs %s at %s", attrs(o.Set), o.Path)
	case OpPivot:
		s = "pivot into the new root at " + o.Path + ", detach the old root"
	case OpSymlink:
		s = "symbolic link " + o.Path + " -> " + o.Target
	}
	if o.Create && (o.Kind == OpTmpfs || o.Kind == OpProc) {
		s += " (mount point made in this plan's tmpfs)"
	}
	if o.NoFollow {
		s += " (the symbolic link itself)"
	}
	if o.Why != "" {
		s += ": " + o.Why
	}
	return s
}

// Gap is something asked for that the plan cannot do, with the reason.
type Gap struct {
	Field  string // the Config field: deny_write_paths, deny_read_paths, mounts, private_tmp, private_root
	Path   string
	Reason string
}

// Plan is the result of [Build].
type Plan struct {
	Ops  []Op
	Gaps []Gap
	// Protected are the paths kept read-only inside write paths, and
	// Hidden the paths hidden, as they are enforced (for descriptions).
	Protected, Hidden []string
	// Tmp lists the directories given a private tmpfs.
	Tmp []string
}

// MountOps returns the plan's steps as the trampoline executes them.
func (p Plan) MountOps() []trampoline.MountOp {
	out := make([]trampoline.MountOp, len(p.Ops))
	for i, o := range p.Ops {
		out[i] = trampoline.MountOp{Kind: uint32(o.Kind), Path: o.Path, Slot: uint32(o.Slot), Mode: o.Mode,
			Set: o.Set, Clear: o.Clear, Recursive: o.Recursive, Create: o.Create, File: o.File, NoFollow: o.NoFollow,
			Target: o.Target}
	}
	return out
}

// Lines renders the plan's steps, one per line.
func (p Plan) Lines() []string {
	out := make([]string, len(p.Ops))
	for i, o := range p.Ops {
		out[i] = o.String()
	}
	return out
}
