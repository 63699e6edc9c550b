//go:build linux

package execgrant

import (
	"os"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// procIsProcfs reports, once per process, whether /proc is the kernel's
// procfs, whose fd links are the kernel's own names (anything else mounted
// there could answer any path).
var procIsProcfs = sync.OnceValue(func() bool {
	var st unix.Statfs_t
	return unix.Statfs("/proc", &st) == nil && st.Type == unix.PROC_SUPER_MAGIC
})

// resolveFile returns path with its symlinks resolved and what it names,
// asking the kernel instead of walking the path a component at a time
// (which filepath.EvalSymlinks does with an lstat per component and a
// readlink per link: a dozen system calls for the dynamic loader on a
// merged-/usr system, on every WrapCommand). The file is opened with
// O_PATH (nothing is read, so a FIFO or device opened here has no effect
// and cannot block), looked at with fstat, and named by the kernel's path
// of that very descriptor (/proc/self/fd/N): the object looked at and the
// path returned cannot belong to two different files, with no second
// lookup to race. A file deleted meanwhile, or a /proc that is not there,
// is not procfs, or answers something else, falls back to the walk
// (resolveFileByWalk): the path is then only as good as the walk's.
func resolveFile(path string) (string, os.FileInfo, error) {
	if !procIsProcfs() {
		resolveFileWalked()
		return resolveFileByWalk(path)
	}
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return "", nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	f := os.NewFile(uintptr(fd), path)
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return "", nil, err
	}
	resolved, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
	if err != nil || !strings.HasPrefix(resolved, "/") || strings.HasSuffix(resolved, " (deleted)") {
		resolveFileWalked()
		return resolveFileByWalk(path)
	}
	return resolved, fi, nil
}

// resolveFileWalked is called when resolveFile falls back to the walk (a
// test hook: the tests check that the kernel's answer is used).
var resolveFileWalked = func() {}
