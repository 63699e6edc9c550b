//go:build !windows

package safefs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"runtime"

	"golang.org/x/sys/unix"
)

// Dir is a directory pinned by its descriptor: every operation resolves
// beneath it (see the package doc). Close it when done; a Dir is not safe
// for concurrent Close and use.
//
// A Dir that is dropped without Close has its descriptor closed when the
// garbage collector finds it unreachable (as an *os.File does): a caller
// that never finishes its work leaks nothing for long.
type Dir struct {
	h    *handle
	path string // for messages only; never opened again
}

// handle holds the descriptor apart from the Dir, so that the Dir's
// cleanup can close it.
type handle struct{ fd int }

func newDir(fd int, p string) *Dir {
	d := &Dir{h: &handle{fd: fd}, path: p}
	runtime.AddCleanup(d, func(h *handle) {
		if h.fd >= 0 {
			unix.Close(h.fd)
		}
	}, d.h)
	return d
}

// dirFlags open a directory to pin: never a link, never a special file's
// open routine (O_DIRECTORY refuses a non-directory before opening it, and
// O_NONBLOCK keeps even that from waiting).
const dirFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC

// Pin opens the directory at p, which must not itself be a symbolic link
// (ErrSymlink) and must be a directory (ErrSpecial otherwise). Links in
// the components above it are followed: p is a path the caller resolved
// and trusts (a resolved grant, a git directory it found before the
// program started).
func Pin(p string) (*Dir, error) {
	fd, err := unix.Open(p, dirFlags, 0)
	if errors.Is(err, unix.ENOTDIR) {
		if fi, lerr := os.Lstat(p); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			err = ErrSymlink
		}
	}
	if err != nil {
		return nil, &fs.PathError{Op: "pin", Path: p, Err: classify(err)}
	}
	return newDir(fd, p), nil
}

// Path is the path the directory was pinned at (for messages: it is never
// opened again).
func (d *Dir) Path() string { return d.path }

// Close releases the descriptor. Closing twice is harmless.
func (d *Dir) Close() error {
	if d == nil || d.h.fd < 0 {
		return nil
	}
	err := unix.Close(d.h.fd)
	d.h.fd = -1
	return err
}

// OpenDir pins the directory rel beneath d.
func (d *Dir) OpenDir(rel string) (*Dir, error) {
	cs, err := split(rel)
	if err != nil {
		return nil, err
	}
	fd, err := d.walk(cs)
	if err != nil {
		return nil, d.pathErr("opendir", rel, err)
	}
	return newDir(fd, path.Join(d.path, rel)), nil
}

// Lstat describes the entry rel beneath d without following or opening it.
func (d *Dir) Lstat(rel string) (Info, error) {
	parent, name, err := d.parent(rel)
	if err != nil {
		return Info{}, d.pathErr("lstat", rel, err)
	}
	defer unix.Close(parent)
	var st unix.Stat_t
	if err := unix.Fstatat(parent, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return Info{}, d.pathErr("lstat", rel, err)
	}
	return infoOf(&st), nil
}

// ReadFile reads the regular file rel beneath d, at most max bytes: a
// larger file is ErrTooLarge (nothing returned), a link ErrSymlink, a
// FIFO, device, socket or directory ErrSpecial.
func (d *Dir) ReadFile(rel string, max int64) ([]byte, error) {
	parent, name, err := d.parent(rel)
	if err != nil {
		return nil, d.pathErr("read", rel, err)
	}
	defer unix.Close(parent)
	b, err := readRegularAt(parent, name, max)
	if err != nil {
		return nil, d.pathErr("read", rel, err)
	}
	return b, nil
}

// ReadDir lists the directory rel beneath d: at most maxEntries entries,
// ErrBudget past that (nothing returned). The order is the directory's.
func (d *Dir) ReadDir(rel string, maxEntries int) ([]Entry, error) {
	cs, err := split(rel)
	if err != nil {
		return nil, err
	}
	fd, err := d.walk(cs)
	if err != nil {
		return nil, d.pathErr("readdir", rel, err)
	}
	ents, err := listFd(fd, maxEntries)
	if err != nil {
		return nil, d.pathErr("readdir", rel, err)
	}
	return ents, nil
}

// Remove removes the entry rel beneath d: a file, a link (not its target),
// a FIFO, or an empty directory. A missing entry is fs.ErrNotExist.
func (d *Dir) Remove(rel string) error {
	parent, name, err := d.parent(rel)
	if err != nil {
		return d.pathErr("remove", rel, err)
	}
	defer unix.Close(parent)
	if err := unlinkEntry(parent, name); err != nil {
		return d.pathErr("remove", rel, err)
	}
	return nil
}

// RemoveAll removes the entry rel beneath d and, for a directory,
// everything in it, through descriptors only: no link is followed (a link
// is removed as a link), and a directory the program made unreadable or
// unsearchable by its owner is made so (fchmod on its descriptor) before
// it is listed. A missing entry is no error. Past maxRemoveDepth levels or
// maxRemoveEntries entries it stops with ErrBudget, leaving the rest.
func (d *Dir) RemoveAll(rel string) error {
	parent, name, err := d.parent(rel)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return d.pathErr("removeall", rel, err)
	}
	defer unix.Close(parent)
	budget := maxRemoveEntries
	if err := removeTree(parent, name, 0, &budget); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return d.pathErr("removeall", rel, err)
	}
	return nil
}

// parent opens the directory that holds rel's last component, beneath d,
// and returns it with that name. The caller closes the descriptor.
func (d *Dir) parent(rel string) (int, string, error) {
	dirs, name, err := splitLast(rel)
	if err != nil {
		return -1, "", err
	}
	fd, err := d.walk(dirs)
	return fd, name, err
}

// walk opens the directory at components cs beneath d (a new descriptor
// of d itself for none).
// Every operation reaches d's descriptor only here, and keeps d alive
// until the call that uses it returned (its cleanup would close it).
func (d *Dir) walk(cs []string) (int, error) {
	if d == nil || d.h.fd < 0 {
		return -1, fs.ErrClosed
	}
	defer runtime.KeepAlive(d)
	if len(cs) == 0 {
		fd, err := unix.Openat(d.h.fd, ".", dirFlags, 0)
		return fd, classify(err)
	}
	return openDirBeneath(d.h.fd, cs)
}

// Readlink returns the target of the symbolic link rel beneath d, without
// following it (readlinkat), at most 4096 bytes.
func (d *Dir) Readlink(rel string) (string, error) {
	parent, name, err := d.parent(rel)
	if err != nil {
		return "", d.pathErr("readlink", rel, err)
	}
	defer unix.Close(parent)
	buf := make([]byte, 4096)
	n, err := unix.Readlinkat(parent, name, buf)
	if err != nil {
		return "", d.pathErr("readlink", rel, err)
	}
	return string(buf[:n]), nil
}

// walkEach opens cs one component at a time, each with
// openat(O_NOFOLLOW|O_DIRECTORY) on the one before: what openDirBeneath
// does where openat2 is missing or refused.
func walkEach(dirfd int, cs []string) (int, error) {
	cur := dirfd
	for i, c := range cs {
		fd, err := unix.Openat(cur, c, dirFlags, 0)
		if errors.Is(err, unix.ENOTDIR) {
			// O_NOFOLLOW|O_DIRECTORY on a link answers ENOTDIR on
			// Linux: say which it was.
			err = notDir(cur, c)
		}
		if i > 0 {
			unix.Close(cur)
		}
		if err != nil {
			return -1, classify(err)
		}
		cur = fd
	}
	return cur, nil
}

// notDir is why name in dirfd could not be opened as a directory:
// ErrSymlink for a link, else ENOTDIR.
func notDir(dirfd int, name string) error {
	var st unix.Stat_t
	if unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && uint32(st.Mode)&unix.S_IFMT == unix.S_IFLNK {
		return ErrSymlink
	}
	return unix.ENOTDIR
}

func (d *Dir) pathErr(op, rel string, err error) error {
	return &fs.PathError{Op: op, Path: path.Join(d.path, rel), Err: err}
}

// readRegularAt reads name in dirfd if it is a regular file, at most max
// bytes (see ReadFile).
func readRegularAt(dirfd int, name string, max int64) ([]byte, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(dirfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, classify(err)
	}
	if err := wantRegular(&st); err != nil {
		return nil, err
	}
	fd, err := unix.Openat(dirfd, name, fileFlags, 0)
	if err != nil {
		return nil, classify(err)
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	var now unix.Stat_t
	if err := unix.Fstat(fd, &now); err != nil {
		return nil, err
	}
	if err := wantRegular(&now); err != nil {
		return nil, err // swapped in between: opened, never read
	}
	// Another regular file renamed over it in between (an atomic
	// writer) is read: it is as good as the one looked at.
	return readBounded(f, now.Size, max)
}

// fileFlags open a file to read: never a link, never waiting (a FIFO
// swapped in is opened without a writer, and then refused by fstat), never
// a controlling terminal.
const fileFlags = unix.O_RDONLY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_NOCTTY | unix.O_CLOEXEC

// wantRegular is ErrSymlink for a link, ErrSpecial for anything else that
// is not a regular file.
func wantRegular(st *unix.Stat_t) error {
	switch uint32(st.Mode) & unix.S_IFMT {
	case unix.S_IFREG:
		return nil
	case unix.S_IFLNK:
		return ErrSymlink
	}
	return fmt.Errorf("%s: %w", ModeOf(uint32(st.Mode)).Type(), ErrSpecial)
}

// classify turns the errno of a no-follow open into the package's errors:
// ELOOP (and EMLINK, FreeBSD's and macOS's answer to O_NOFOLLOW on a
// link, and EXDEV, openat2's to an escape) is a link not followed; ENOTDIR
// a component that is no directory.
func classify(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.ELOOP), errors.Is(err, unix.EMLINK):
		return fmt.Errorf("%w (%w)", ErrSymlink, err)
	case errors.Is(err, unix.EXDEV):
		return fmt.Errorf("%w (%w)", ErrPath, err)
	case errors.Is(err, unix.ENOTDIR):
		return fmt.Errorf("not a directory: %w (%w)", ErrSpecial, err)
	}
	return err
}

func infoOf(st *unix.Stat_t) Info {
	return Info{Mode: ModeOf(uint32(st.Mode)), Size: st.Size, Uid: st.Uid, Dev: uint64(st.Dev), Ino: uint64(st.Ino)}
}

// ModeOf maps st_mode to fs.FileMode, as os.Stat does.
func ModeOf(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	}
	if m&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}
