//go:build linux

package trampoline

// The mount layer's execution: the ops internal/mountns.Build plans, in
// raw system calls, so that the trampoline (which may import only
// runtime-early packages) can run them. mountns.Apply is a thin wrapper
// over ApplyMounts: its tests, as root and as nobody in a user namespace,
// exercise exactly this code.

import (
	"syscall"
	"unsafe"
)

// System call numbers of the new mount API, the same on every Linux
// architecture (the unified table), and constants from linux/mount.h.
const (
	sysOpenTree     = 428
	sysMoveMount    = 429
	sysMountSetattr = 442

	openTreeClone        = 0x1
	openTreeCloexec      = syscall.O_CLOEXEC
	atRecursive          = 0x8000
	atSymlinkNofollow    = 0x100
	moveMountFEmptyPath  = 0x4
	mountAttrRdonly      = 0x1
	mountAttrNosuid      = 0x2
	mountAttrNodev       = 0x4
	mountAttrNoexec      = 0x8
	msRdonly             = 0x1
	msNosuid             = 0x2
	msNodev              = 0x4
	msNoexec             = 0x8
	msPrivate            = 1 << 18
	msRec                = 0x4000
	mntDetach            = 0x2
	mountAttrStructBytes = 32 // struct mount_attr (MOUNT_ATTR_SIZE_VER0)
)

type mountAttr struct {
	set, clear, propagation, usernsFD uint64
}

// ApplyMounts performs ops in order. The calling process must be alone in
// a new mount namespace (and hold CAP_SYS_ADMIN there). On the first
// failure it stops and reports the step and the index of the op that
// failed; the caller must not run the target then. failed is -1 when every
// op succeeded. Every clone descriptor is closed before it returns.
func ApplyMounts(ops []MountOp) (f Failure, failed int) {
	var slots []int
	defer func() {
		for _, fd := range slots {
			if fd >= 0 {
				syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(fd), 0, 0)
			}
		}
	}()
	for i := range ops {
		o := &ops[i]
		step, e := applyMount(o, &slots)
		if e != 0 || step != "" {
			if step == "" {
				step = mountStepName(o.Kind)
			}
			return Failure{Step: step, Errno: e, Detail: o.Path}, i
		}
	}
	return Failure{}, -1
}

func mountStepName(k uint32) string {
	switch k {
	case MountPrivate:
		return "mount(MS_PRIVATE)"
	case MountClone:
		return "open_tree"
	case MountSetAttr:
		return "mount_setattr"
	case MountTmpfs:
		return "mount(tmpfs)"
	case MountAttach:
		return "move_mount"
	case MountMaskFile:
		return "mask file"
	case MountProc:
		return "mount(proc)"
	case MountPivot:
		return "pivot_root"
	case MountSymlink:
		return "symlink"
	}
	return "mount step"
}

// applyMount performs one op. It returns a step name only to override the
// op's own (a failure of a sub-step).
func applyMount(o *MountOp, slots *[]int) (string, syscall.Errno) {
	path := cstr(o.Path)
	switch o.Kind {
	case MountPrivate:
		return "", sysMount(nil, &path[0], nil, msRec|msPrivate, nil)
	case MountClone:
		flags := uintptr(openTreeClone | openTreeCloexec | atRecursive)
		if o.NoFollow {
			flags |= atSymlinkNofollow
		}
		fd, e := openTree(&path[0], flags)
		if e != 0 {
			return "", e
		}
		for uint32(len(*slots)) <= o.Slot {
			*slots = append(*slots, -1)
		}
		if (*slots)[o.Slot] >= 0 {
			syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(fd), 0, 0)
			return "open_tree (slot used twice)", syscall.EINVAL
		}
		(*slots)[o.Slot] = fd
		return "", 0
	case MountSetAttr:
		flags := uintptr(0)
		if o.Recursive {
			flags = atRecursive
		}
		if o.NoFollow {
			flags |= atSymlinkNofollow
		}
		return "", setAttr(&path[0], flags, o.Set, o.Clear)
	case MountTmpfs:
		if o.Create {
			if e := mountPoint(o.Path, false); e != 0 {
				return "mkdir (mount point in the plan's tmpfs)", e
			}
		}
		data := cstr("mode=" + octal(o.Mode))
		return "", sysMount(&tmpfsName[0], &path[0], &tmpfsName[0], msFlags(o.Set), &data[0])
	case MountAttach:
		if o.Slot >= uint32(len(*slots)) || (*slots)[o.Slot] < 0 {
			return "move_mount (no such clone)", syscall.EINVAL
		}
		fd := (*slots)[o.Slot]
		(*slots)[o.Slot] = -1
		defer syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(fd), 0, 0)
		if o.Create {
			if e := mountPoint(o.Path, o.File); e != 0 {
				return "mkdir (mount point in the plan's tmpfs)", e
			}
		}
		return "", moveMount(fd, &path[0])
	case MountMaskFile:
		// /dev/null, nodev and read-only: with nodev, opening the device
		// fails with EACCES whatever the opener's capabilities (may_open
		// refuses device files on a nodev mount). (An empty file of a
		// detached tmpfs would need open_tree on a detached mount, which
		// kernels before 6.15 refuse with EINVAL.)
		fd, e := openTree(&devNull[0], openTreeClone|openTreeCloexec)
		if e != 0 {
			return "open_tree /dev/null", e
		}
		defer syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(fd), 0, 0)
		if e := moveMount(fd, &path[0]); e != 0 {
			return "move_mount /dev/null", e
		}
		return "", setAttr(&path[0], 0, mountAttrRdonly|mountAttrNodev|mountAttrNosuid|mountAttrNoexec, 0)
	case MountProc, MountPivot, MountSymlink:
		return applyRootMount(o, path)
	}
	return "mount step (unknown kind)", syscall.EINVAL
}

// applyRootMount performs the steps of the sandbox's own root
// (internal/mountns's root.go): a fresh procfs, the pivot into the new
// root, a symbolic link made in it.
func applyRootMount(o *MountOp, path []byte) (string, syscall.Errno) {
	switch o.Kind {
	case MountProc:
		if o.Create {
			if e := mountPoint(o.Path, false); e != 0 {
				return "mkdir (mount point in the plan's tmpfs)", e
			}
		}
		return "", sysMount(&procName[0], &path[0], &procName[0], msFlags(o.Set), nil)
	case MountPivot:
		// The new root is a mount (the plan's tmpfs at Path): entered,
		// it becomes the root, the old root is stacked on it and then
		// detached, and nothing of the host's tree is reachable any more
		// but the clones attached in the new root.
		if _, _, e := syscall.RawSyscall(syscall.SYS_CHDIR, uintptr(unsafe.Pointer(&path[0])), 0, 0); e != 0 {
			return "chdir (the new root)", e
		}
		if _, _, e := syscall.RawSyscall(syscall.SYS_PIVOT_ROOT, uintptr(unsafe.Pointer(&dot[0])), uintptr(unsafe.Pointer(&dot[0])), 0); e != 0 {
			return "", e
		}
		if _, _, e := syscall.RawSyscall(syscall.SYS_UMOUNT2, uintptr(unsafe.Pointer(&dot[0])), mntDetach, 0); e != 0 {
			return "umount2 (the old root)", e
		}
		if _, _, e := syscall.RawSyscall(syscall.SYS_CHDIR, uintptr(unsafe.Pointer(&slash[0])), 0, 0); e != 0 {
			return "chdir /", e
		}
		return "", 0
	default: // MountSymlink
		if i := lastSlash(o.Path); i > 0 {
			if e := mountPoint(o.Path[:i], false); e != 0 {
				return "mkdir (the link's directory in the plan's tmpfs)", e
			}
		}
		target := cstr(o.Target)
		_, _, e := syscall.RawSyscall(syscall.SYS_SYMLINKAT, uintptr(unsafe.Pointer(&target[0])), atFDCWD, uintptr(unsafe.Pointer(&path[0])))
		return "", e
	}
}

var (
	tmpfsName = []byte("tmpfs\x00")
	devNull   = []byte("/dev/null\x00")
	emptyPath = []byte("\x00")
	procName  = []byte("proc\x00")
	dot       = []byte(".\x00")
	slash     = []byte("/\x00")
)

func cstr(s string) []byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return b
}

func octal(v uint32) string {
	var b [12]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v&7)
		v >>= 3
		if v == 0 {
			break
		}
	}
	i--
	b[i] = '0'
	return string(b[i:])
}

// msFlags turns mount attributes into mount(2) flags.
func msFlags(attr uint64) uintptr {
	var f uintptr
	if attr&mountAttrRdonly != 0 {
		f |= msRdonly
	}
	if attr&mountAttrNosuid != 0 {
		f |= msNosuid
	}
	if attr&mountAttrNodev != 0 {
		f |= msNodev
	}
	if attr&mountAttrNoexec != 0 {
		f |= msNoexec
	}
	return f
}

func sysMount(src, target, fstype *byte, flags uintptr, data *byte) syscall.Errno {
	_, _, e := syscall.RawSyscall6(syscall.SYS_MOUNT, uintptr(unsafe.Pointer(src)), uintptr(unsafe.Pointer(target)),
		uintptr(unsafe.Pointer(fstype)), flags, uintptr(unsafe.Pointer(data)), 0)
	return e
}

func openTree(path *byte, flags uintptr) (int, syscall.Errno) {
	r, _, e := syscall.RawSyscall(sysOpenTree, atFDCWD, uintptr(unsafe.Pointer(path)), flags)
	return int(r), e
}

func moveMount(fd int, to *byte) syscall.Errno {
	_, _, e := syscall.RawSyscall6(sysMoveMount, uintptr(fd), uintptr(unsafe.Pointer(&emptyPath[0])),
		atFDCWD, uintptr(unsafe.Pointer(to)), moveMountFEmptyPath, 0)
	return e
}

func setAttr(path *byte, flags uintptr, set, clear uint64) syscall.Errno {
	a := mountAttr{set: set, clear: clear}
	_, _, e := syscall.RawSyscall6(sysMountSetattr, atFDCWD, uintptr(unsafe.Pointer(path)), flags,
		uintptr(unsafe.Pointer(&a)), mountAttrStructBytes, 0)
	return e
}

// mountPoint makes path (a directory, or an empty file when file) and its
// missing parents. Build asks for it only beneath a tmpfs of the plan, so
// nothing is made on a host filesystem.
func mountPoint(path string, file bool) syscall.Errno {
	end := len(path)
	if file {
		end = lastSlash(path)
	}
	for i := 1; i <= end; i++ {
		if i < end && path[i] != '/' {
			continue
		}
		dir := cstr(path[:i])
		_, _, e := syscall.RawSyscall(syscall.SYS_MKDIRAT, atFDCWD, uintptr(unsafe.Pointer(&dir[0])), 0o755)
		if e != 0 && e != syscall.EEXIST {
			return e
		}
	}
	if !file {
		return 0
	}
	name := cstr(path)
	fd, _, e := syscall.RawSyscall6(syscall.SYS_OPENAT, atFDCWD, uintptr(unsafe.Pointer(&name[0])),
		syscall.O_CREAT|syscall.O_EXCL|syscall.O_WRONLY|syscall.O_CLOEXEC|syscall.O_NOFOLLOW, 0o644, 0, 0)
	if e != 0 {
		return e
	}
	syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(fd), 0, 0)
	return 0
}

func lastSlash(s string) int {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == '/' {
			return i
		}
	}
	return 0
}
