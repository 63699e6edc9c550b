//go:build linux

package linux

// The git walk's directory reads on the host (gitWalkFS): every directory
// is opened beneath the walk's root, pinned as a descriptor when the walk
// begins, with openat2(RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|
// RESOLVE_NO_MAGICLINKS) and O_DIRECTORY|O_NOFOLLOW|O_NONBLOCK, so that
// no symbolic link is followed at any component and nothing but a
// directory is opened (O_DIRECTORY fails before a FIFO or a device is
// opened). Where openat2 answers ENOSYS (an old kernel, or this library's
// own filter under ApplySelf) each component is opened with
// openat(O_NOFOLLOW|O_DIRECTORY) from its parent's descriptor instead:
// the same guarantee, a few more system calls. Entries are listed with
// getdents64 on that descriptor; d_type tells a directory without a stat
// (an lstat, fstatat(AT_SYMLINK_NOFOLLOW), only where the filesystem
// leaves it DT_UNKNOWN).
//
// Stat, the cache's re-validation, is fstatat(root, rel,
// AT_SYMLINK_NOFOLLOW): it resolves rel by name beneath the root. Every
// component of rel was a directory entry of type directory in a listing
// the walk validated before (breadth first, the parent before the
// child), so it follows a link only if one replaced a directory between
// those two looks (a program still running, under another sandbox); the
// stamp then describes another directory, which at worst is one of the
// same tree walked under a second name (the visited set walks it once),
// and nothing is opened through it.
//
// Why not safefs.Dir.ReadDir, which keeps the same rules: the walk needs
// the stamp of the very descriptor it lists (for its cache), and reads
// every entry of 50,000 in a typical workspace, of which it keeps only
// directories and four names; a listing that allocates a name per entry
// and a Dir per directory costs the cold walk what find does not.
// (Folding a stamped, callback listing into safefs would make one
// implementation of the rule again.) What a single getdents64 cannot be
// given is a deadline: a network filesystem that hangs inside a write
// path hangs the walk; the walk's own deadline (gitWalkTime) bounds
// everything else.

import (
	"errors"
	"strings"
	"sync/atomic"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// gitHostFS is gitWalkFS beneath the directory descriptor root.
type gitHostFS struct {
	root int
	// buf is the getdents buffer, made at the first Read: a walk whose
	// directories the cache holds unchanged reads none.
	buf []byte
}

// openGitHostFS pins root (absolute, resolved) for a walk. A root that is
// not a directory (a write path may be a file) is an error.
func openGitHostFS(root string) (*gitHostFS, error) {
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return &gitHostFS{root: fd}, nil
}

func (f *gitHostFS) close() { unix.Close(f.root) }

func stampOf(st *unix.Stat_t) gitDirStamp {
	return gitDirStamp{dev: st.Dev, ino: st.Ino, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}
}

func (f *gitHostFS) Stat(rel string) (gitDirStamp, bool, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(f.root, rel, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return gitDirStamp{}, false, err
	}
	return stampOf(&st), st.Mode&unix.S_IFMT == unix.S_IFDIR, nil
}

func (f *gitHostFS) Denied(err error) bool { return errors.Is(err, unix.EACCES) }

func (f *gitHostFS) Gone(err error) bool {
	return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP)
}

// openat2Missing is set once openat2 answered ENOSYS in this process.
var openat2Missing atomic.Bool

const gitOpenFlags = unix.O_RDONLY | unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_NONBLOCK | unix.O_CLOEXEC

// open opens rel beneath the root as a directory, following no link.
func (f *gitHostFS) open(rel string) (int, error) {
	if rel == "." {
		return unix.Openat(f.root, ".", gitOpenFlags, 0)
	}
	if !openat2Missing.Load() {
		fd, err := unix.Openat2(f.root, rel, &unix.OpenHow{Flags: gitOpenFlags,
			Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS})
		if !errors.Is(err, unix.ENOSYS) {
			return fd, err
		}
		openat2Missing.Store(true)
	}
	dir := f.root
	for i, name := range strings.Split(rel, "/") {
		fd, err := unix.Openat(dir, name, gitOpenFlags, 0)
		if i > 0 {
			unix.Close(dir)
		}
		if err != nil {
			return -1, err
		}
		dir = fd
	}
	return dir, nil
}

func (f *gitHostFS) Read(rel string, max int) (gitDirStamp, gitListing, error) {
	var l gitListing
	fd, err := f.open(rel)
	if err != nil {
		return gitDirStamp{}, l, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return gitDirStamp{}, l, err
	}
	if f.buf == nil {
		f.buf = make([]byte, 32<<10)
	}
	for {
		n, err := unix.Getdents(fd, f.buf)
		if err != nil {
			return gitDirStamp{}, l, err
		}
		if n <= 0 {
			break
		}
		if !f.parse(fd, f.buf[:n], &l, max) {
			l.partial = true
			break
		}
	}
	l.done()
	return stampOf(&st), l, nil
}

// parse adds the linux_dirent64 records in b to l; false once l holds
// max entries.
func (f *gitHostFS) parse(dir int, b []byte, l *gitListing, max int) bool {
	const nameOff = int(unsafe.Offsetof(unix.Dirent{}.Name))
	for len(b) >= nameOff {
		reclen := int(*(*uint16)(unsafe.Pointer(&b[16])))
		if reclen < nameOff || reclen > len(b) {
			return true // malformed: the kernel never does this
		}
		typ := b[18]
		name := b[nameOff:reclen]
		if i := indexNUL(name); i >= 0 {
			name = name[:i]
		}
		b = b[reclen:]
		if len(name) == 1 && name[0] == '.' || len(name) == 2 && name[0] == '.' && name[1] == '.' {
			continue
		}
		if l.entries >= max {
			return false
		}
		t := direntType(typ)
		if typ == unix.DT_UNKNOWN {
			t = f.lstatType(dir, string(name))
		}
		if t == gitEntDir || isGitName(name) {
			l.add(string(name), t)
		} else {
			l.entries++
		}
	}
	return true
}

func indexNUL(b []byte) int {
	for i, c := range b {
		if c == 0 {
			return i
		}
	}
	return -1
}

// isGitName: the names the listing must see whatever their type.
func isGitName(b []byte) bool {
	switch string(b) { // no allocation: the compiler compares in place
	case ".git", "HEAD", "objects", "refs":
		return true
	}
	return false
}

func direntType(t uint8) gitEntryType {
	switch t {
	case unix.DT_DIR:
		return gitEntDir
	case unix.DT_REG:
		return gitEntFile
	case unix.DT_LNK:
		return gitEntLink
	}
	return gitEntOther
}

// lstatType is name's type in dir without following it; an entry gone
// since it was listed counts as "other" (no directory to walk).
func (f *gitHostFS) lstatType(dir int, name string) gitEntryType {
	var st unix.Stat_t
	if err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return gitEntOther
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return gitEntDir
	case unix.S_IFREG:
		return gitEntFile
	case unix.S_IFLNK:
		return gitEntLink
	}
	return gitEntOther
}

// gitWalkHost walks roots (absolute, resolved) on this host with budget
// and the process's cache. A root that is a file or gone holds no
// repository; one the caller may not read is Denied; one that cannot be
// opened otherwise (a link now: ELOOP) is named as not walked.
func gitWalkHost(roots []string, budget gitWalkBudget) gitWalkResult {
	w := newGitWalker(budget, hostGitCache, time.Now)
	for _, r := range roots {
		f, err := openGitHostFS(r)
		switch {
		case err == nil:
		case errors.Is(err, unix.ENOTDIR), errors.Is(err, unix.ENOENT):
			continue // a file, or gone: no repository there
		case errors.Is(err, unix.EACCES):
			w.res.Denied = append(w.res.Denied, r)
			continue
		default: // a link now (ELOOP), or another error: not walked, and said
			w.notWalked(r)
			continue
		}
		w.walk(r, f)
		f.close()
	}
	return w.res
}
