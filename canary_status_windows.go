//go:build windows

package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/windows"

	"github.com/openparallax/sandbox/internal/safefs"
)

// readStatus reads the status file with FILE_SHARE_DELETE (a reader never
// stops a writer from renaming a new result over it), refusing a reparse
// point (symbolic link, junction) at .openparallax or at the file, and a
// handle that is not a plain disk file, at most maxStatusSize bytes
// (safefs.ReadFileNoFollow). The check of .openparallax is a look before
// the open: a junction swapped in between is followed for that one open,
// which reads only a plain file, with a bound.
func readStatus(workspace string) ([]byte, error) {
	dir := filepath.Join(workspace, StatusDir)
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, err
	}
	switch {
	case fi.Mode()&(fs.ModeSymlink|fs.ModeIrregular) != 0:
		return nil, fmt.Errorf("%s: %w", dir, safefs.ErrSymlink)
	case !fi.IsDir():
		return nil, fmt.Errorf("%s: %w", dir, safefs.ErrSpecial)
	}
	return safefs.ReadFileNoFollow(filepath.Join(dir, StatusFile), maxStatusSize)
}

// replaceFile renames src over dst, both in one directory. It first asks
// for POSIX semantics through an os.Root of that directory (os.Root.Rename
// uses FILE_RENAME_INFORMATION_EX with FILE_RENAME_POSIX_SEMANTICS, Windows
// 10 1607 and later, NTFS): the name is replaced even while another process
// (a reader, an indexer, an antivirus scanner) holds the old file open with
// FILE_SHARE_DELETE, where a classic rename fails with ERROR_ACCESS_DENIED
// for as long as the file is open, and the root keeps the rename from
// following a symlink or junction out of the directory.
//
// os.Root.Rename itself falls back to the classic rename (still through the
// root) where the file system has no POSIX semantics (FAT). What is left is
// the rename being refused with ERROR_ACCESS_DENIED or
// ERROR_SHARING_VIOLATION, and then replaceFile falls back to the classic
// rename by path, retried for a short while (2 seconds). That happens with
// POSIX semantics too: while a process holds dst or src open without
// FILE_SHARE_DELETE (an antivirus scanner, a backup or indexing tool), or
// another writer's rename onto the same name is in flight; and without
// them (FAT, and Wine 8.0, which has no POSIX rename and whose rename
// through a root fails for good under concurrent writers) also while a
// reader holds dst open. The fallback names the directory by path, so a
// directory swapped for a junction in between is followed (what is renamed
// is this process's own temporary file, into its own workspace). Every other
// error is returned at once, and so is the last one when the 2 seconds are up.
func replaceFile(src, dst string) error {
	dir := filepath.Dir(dst)
	if filepath.Dir(src) != dir {
		return fmt.Errorf("rename %s to %s: not in one directory", src, dst)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	err = root.Rename(filepath.Base(src), filepath.Base(dst))
	root.Close()
	if err == nil || !transientRename(err) {
		return err
	}
	deadline := time.Now().Add(2 * time.Second)
	for {
		err := os.Rename(src, dst)
		if err == nil || time.Now().After(deadline) || !transientRename(err) {
			return err
		}
		time.Sleep(time.Millisecond)
	}
}

func transientRename(err error) bool {
	return errors.Is(err, windows.ERROR_ACCESS_DENIED) || errors.Is(err, windows.ERROR_SHARING_VIOLATION)
}
