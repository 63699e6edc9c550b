//go:build !windows

package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// systemLink reports whether the symbolic link at path (link is its
// Lstat) is owned by root and lies in a directory owned by root that
// neither its group nor others may write: one only root could have made
// or could replace.
func systemLink(path string, link fs.FileInfo) bool {
	st, ok := link.Sys().(*syscall.Stat_t)
	if !ok || st.Uid != 0 {
		return false
	}
	dir, err := os.Lstat(filepath.Dir(path))
	if err != nil {
		return false
	}
	dst, ok := dir.Sys().(*syscall.Stat_t)
	return ok && dst.Uid == 0 && dir.Mode().Perm()&0o022 == 0
}
