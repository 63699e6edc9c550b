//go:build windows

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/windows"
)

// openStatus opens the status file for reading with FILE_SHARE_DELETE, so
// that a reader never stops a writer from renaming a new result over it.
func openStatus(path string) (*os.File, error) {
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		return nil, err
	}
	h, err := windows.CreateFile(p, windows.GENERIC_READ,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL|windows.FILE_FLAG_OPEN_REPARSE_POINT, 0)
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(h), path), nil
}

// replaceFile renames src over dst, both in one directory, through an
// os.Root of that directory. On Windows os.Root.Rename asks for POSIX
// semantics (FILE_RENAME_INFORMATION_EX with FILE_RENAME_POSIX_SEMANTICS,
// Windows 10 1607 and later, NTFS): the name is replaced even while another
// process (a reader, an indexer, an antivirus scanner) holds the old file
// open with FILE_SHARE_DELETE, where a classic MoveFileEx fails with
// ERROR_ACCESS_DENIED for as long as the file is open. The root also keeps
// the rename from following a symlink or junction out of the directory.
// Where POSIX semantics are missing (FAT, Wine 8.0) Go falls back to the
// classic rename; such a refusal, and the short one while another
// writer's rename onto the same name is in flight or a reader without
// FILE_SHARE_DELETE holds dst, is retried for a short while before giving
// up.
func replaceFile(src, dst string) error {
	dir := filepath.Dir(dst)
	if filepath.Dir(src) != dir {
		return fmt.Errorf("rename %s to %s: not in one directory", src, dst)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return err
	}
	defer root.Close()
	deadline := time.Now().Add(2 * time.Second)
	for {
		err := root.Rename(filepath.Base(src), filepath.Base(dst))
		if err == nil || time.Now().After(deadline) ||
			!(errors.Is(err, windows.ERROR_ACCESS_DENIED) || errors.Is(err, windows.ERROR_SHARING_VIOLATION)) {
			return err
		}
		time.Sleep(time.Millisecond)
	}
}
