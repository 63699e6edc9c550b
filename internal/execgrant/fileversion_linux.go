package execgrant

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// versionOf identifies the content of the file fi describes: device, inode,
// mode, size, modification and change time. Any write changes the change
// time, and user space cannot set it, so a file with the same version has
// the same content.
func versionOf(fi os.FileInfo) (fileVersion, bool) {
	if !fi.Mode().IsRegular() {
		return fileVersion{}, false
	}
	return statVersion(fi)
}

// statVersion is versionOf for a file of any type (a directory's version
// changes when an entry is added, removed or renamed).
func statVersion(fi os.FileInfo) (fileVersion, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileVersion{}, false
	}
	return fileVersion{dev: uint64(st.Dev), ino: uint64(st.Ino), mode: st.Mode, size: st.Size,
		mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}, true
}

// pathVersion is the version of what path names, its last step not
// followed (lstat), or the zero version when it cannot be looked at: one
// system call, nothing allocated (the cached scans' validation makes a
// few hundred per spawn).
func pathVersion(path string) fileVersion {
	var st unix.Stat_t
	if unix.Lstat(path, &st) != nil {
		return fileVersion{}
	}
	return fileVersion{dev: uint64(st.Dev), ino: uint64(st.Ino), mode: st.Mode, size: st.Size,
		mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}
}
