package safefs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"golang.org/x/sys/windows"
)

// Dir is not implemented on Windows: no caller there works in places the
// program writes through a pinned directory. Its operations answer
// errors.ErrUnsupported.
type Dir struct{}

// Pin answers errors.ErrUnsupported on Windows.
func Pin(p string) (*Dir, error) {
	return nil, &fs.PathError{Op: "pin", Path: p, Err: errors.ErrUnsupported}
}

func (d *Dir) Path() string                           { return "" }
func (d *Dir) Close() error                           { return nil }
func (d *Dir) OpenDir(string) (*Dir, error)           { return nil, errors.ErrUnsupported }
func (d *Dir) Lstat(string) (Info, error)             { return Info{}, errors.ErrUnsupported }
func (d *Dir) ReadFile(string, int64) ([]byte, error) { return nil, errors.ErrUnsupported }
func (d *Dir) ReadDir(string, int) ([]Entry, error)   { return nil, errors.ErrUnsupported }
func (d *Dir) Readlink(string) (string, error)        { return "", errors.ErrUnsupported }
func (d *Dir) Remove(string) error                    { return errors.ErrUnsupported }
func (d *Dir) RemoveAll(string) error                 { return errors.ErrUnsupported }

// ReadFileNoFollow reads the file at p, at most max bytes (ErrTooLarge
// past it). It opens p with FILE_FLAG_OPEN_REPARSE_POINT, so a symbolic
// link or junction at the last component is opened as itself and never
// followed, sharing read, write and delete (a writer may rename a new
// file over it meanwhile), and refuses a handle that is not a plain disk
// file: a reparse point is ErrSymlink, a directory, a named pipe or a
// character device ErrSpecial. Opening a pipe's name (\\.\pipe\…) does not
// wait for a server; reads of a disk file do not block.
func ReadFileNoFollow(p string, max int64) ([]byte, error) {
	return readPath(p, windows.FILE_FLAG_OPEN_REPARSE_POINT, max)
}

// ReadRegularFile reads the file at p, following links and junctions as
// an ordinary open does, at most max bytes (ErrTooLarge past it), and
// refuses a handle that is not a plain disk file (ErrSpecial): see the
// Linux and macOS version for when a caller may follow.
func ReadRegularFile(p string, max int64) ([]byte, error) {
	return readPath(p, 0, max)
}

// readPath opens p with the extra flags, checks the handle and reads at
// most max bytes.
func readPath(p string, flags uint32, max int64) ([]byte, error) {
	u, err := windows.UTF16PtrFromString(p)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: p, Err: err}
	}
	h, err := windows.CreateFile(u, windows.GENERIC_READ,
		windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL|flags, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: p, Err: err}
	}
	f := os.NewFile(uintptr(h), p)
	defer f.Close()
	if err := wantDiskFile(h); err != nil {
		return nil, &fs.PathError{Op: "read", Path: p, Err: err}
	}
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &info); err != nil {
		return nil, &fs.PathError{Op: "read", Path: p, Err: err}
	}
	size := int64(info.FileSizeHigh)<<32 | int64(info.FileSizeLow)
	b, err := readBounded(f, size, max)
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: p, Err: err}
	}
	return b, nil
}

// wantDiskFile refuses what is not a plain file on a disk.
func wantDiskFile(h windows.Handle) error {
	t, err := windows.GetFileType(h)
	if err != nil {
		return err
	}
	if t != windows.FILE_TYPE_DISK {
		return fmt.Errorf("file type %d: %w", t, ErrSpecial)
	}
	var info windows.ByHandleFileInformation
	if err := windows.GetFileInformationByHandle(h, &info); err != nil {
		return err
	}
	switch {
	case info.FileAttributes&windows.FILE_ATTRIBUTE_REPARSE_POINT != 0:
		return ErrSymlink
	case info.FileAttributes&windows.FILE_ATTRIBUTE_DIRECTORY != 0:
		return fmt.Errorf("a directory: %w", ErrSpecial)
	}
	return nil
}
