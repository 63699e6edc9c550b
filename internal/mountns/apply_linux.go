//go:build linux

package mountns

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// Apply performs p's steps in order. It must run in a process that is alone
// in a new mount namespace (clone or unshare with CLONE_NEWNS; with
// CLONE_NEWUSER too when the caller is not root), before Landlock and
// seccomp are applied. The first step makes every mount private, so that
// nothing reaches the host even if a later step fails; on any error Apply
// stops and returns it, naming the step, and the caller must not run the
// target (the namespace is then half set up).
func Apply(p Plan) error {
	slots := map[int]int{}
	defer func() {
		for _, fd := range slots {
			unix.Close(fd)
		}
	}()
	for _, o := range p.Ops {
		if err := apply(o, slots); err != nil {
			return fmt.Errorf("mountns: %s: %w", o, err)
		}
	}
	return nil
}

func apply(o Op, slots map[int]int) error {
	switch o.Kind {
	case OpPrivate:
		return unix.Mount("", o.Path, "", unix.MS_REC|unix.MS_PRIVATE, "")
	case OpClone:
		fd, err := unix.OpenTree(unix.AT_FDCWD, o.Path, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
		if err != nil {
			return err
		}
		slots[o.Slot] = fd
		return nil
	case OpSetAttr:
		flags := uint(0)
		if o.Recursive {
			flags = unix.AT_RECURSIVE
		}
		return unix.MountSetattr(unix.AT_FDCWD, o.Path, flags, &unix.MountAttr{Attr_set: o.Set, Attr_clr: o.Clear})
	case OpTmpfs:
		return unix.Mount("tmpfs", o.Path, "tmpfs", msFlags(o.Set), fmt.Sprintf("mode=%04o", o.Mode))
	case OpAttach:
		fd, ok := slots[o.Slot]
		if !ok {
			return errors.New("no such clone")
		}
		delete(slots, o.Slot)
		defer unix.Close(fd)
		if o.Create {
			if err := mountPoint(o.Path, o.File); err != nil {
				return err
			}
		}
		return unix.MoveMount(fd, "", unix.AT_FDCWD, o.Path, unix.MOVE_MOUNT_F_EMPTY_PATH)
	case OpMaskFile:
		return maskFile(o.Path)
	}
	return fmt.Errorf("unknown step %d", o.Kind)
}

// msFlags turns mount attributes into mount(2) flags.
func msFlags(attr uint64) uintptr {
	var f uintptr
	for _, m := range []struct {
		attr uint64
		ms   uintptr
	}{{AttrRdonly, unix.MS_RDONLY}, {AttrNosuid, unix.MS_NOSUID}, {AttrNodev, unix.MS_NODEV}, {AttrNoexec, unix.MS_NOEXEC}} {
		if attr&m.attr != 0 {
			f |= m.ms
		}
	}
	return f
}

// mountPoint makes path (a directory, or an empty file when file) and its
// missing parents. Build asks for it only beneath a tmpfs of the plan, so
// nothing is made on a host filesystem.
func mountPoint(path string, file bool) error {
	dir := path
	if file {
		dir = filepath.Dir(path)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if !file {
		return nil
	}
	fd, err := unix.Open(path, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o644)
	if err != nil {
		return err
	}
	return unix.Close(fd)
}

// maskFile mounts /dev/null over path, nodev and read-only: with nodev,
// opening the device fails with EACCES whatever the opener's capabilities
// (may_open refuses device files on a nodev mount), so the file can be
// neither read nor written, and the write does not vanish silently, as it
// would into a usable /dev/null. stat shows a character device. (An empty
// file of a detached tmpfs would need open_tree on a detached mount, which
// kernels before 6.15 refuse with EINVAL.)
func maskFile(path string) error {
	tree, err := unix.OpenTree(unix.AT_FDCWD, "/dev/null", unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC)
	if err != nil {
		return fmt.Errorf("open_tree /dev/null: %w", err)
	}
	defer unix.Close(tree)
	if err := unix.MoveMount(tree, "", unix.AT_FDCWD, path, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("move_mount: %w", err)
	}
	return unix.MountSetattr(unix.AT_FDCWD, path, 0, &unix.MountAttr{
		Attr_set: unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NOEXEC})
}
