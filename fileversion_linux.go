package sandbox

import (
	"os"
	"syscall"
)

// versionOf identifies the content of the file fi describes: device, inode,
// size, modification and change time. Any write changes the change time,
// and user space cannot set it, so a file with the same version has the
// same content.
func versionOf(fi os.FileInfo) (fileVersion, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || !fi.Mode().IsRegular() {
		return fileVersion{}, false
	}
	return fileVersion{dev: uint64(st.Dev), ino: uint64(st.Ino), size: st.Size,
		mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}, true
}
