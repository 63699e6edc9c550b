//go:build windows

package sandbox

import (
	"errors"
	"os"
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

// replaceFile renames src over dst. Windows refuses while another writer's
// rename onto the same name is in flight, or while a reader without
// FILE_SHARE_DELETE holds dst open; such refusals are transient, so it
// retries for a short while before giving up.
func replaceFile(src, dst string) error {
	deadline := time.Now().Add(2 * time.Second)
	for {
		err := os.Rename(src, dst)
		if err == nil || time.Now().After(deadline) ||
			!(errors.Is(err, windows.ERROR_ACCESS_DENIED) || errors.Is(err, windows.ERROR_SHARING_VIOLATION)) {
			return err
		}
		time.Sleep(time.Millisecond)
	}
}
