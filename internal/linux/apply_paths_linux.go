//go:build linux

package linux

import (
	"io/fs"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/openparallax/sandbox/internal/safefs"
	"github.com/openparallax/sandbox/internal/spec"
)

// ApplySelf's default paths, looked at once.
//
// ApplySelf needs two things of each default path (SystemPaths): for the
// policy, whether it exists, whether it is a directory and whether it is a
// file already listed under another name; for its Landlock rule, a
// descriptor of it. Asked separately, that is a stat, then an open of the
// same path: two lookups of every path, the largest system call cost of
// an ApplySelf after the all-thread rounds. openedPaths answers the
// policy's questions with an open (O_PATH, as the rule needs) and an fstat
// of the descriptor, and keeps the descriptor for the rule: one lookup per
// path. The rule then applies to the very file the policy looked at, which
// the two lookups could not promise (between them a path could be
// replaced; the ruleset's fstat refused a file granted as one that had
// become a directory, a descriptor's file cannot change type).

// openedPaths is a systemLook (see statSystemPaths) that opens what it
// looks at, and keeps the descriptors until close.
type openedPaths struct {
	fds map[string]openedFD // path looked at → its O_PATH descriptor
}

// openedFD is a descriptor openedPaths keeps, and whether its file is a
// directory (a file's type never changes).
type openedFD struct {
	fd  int
	dir bool
}

// Stat opens path with O_PATH (following symlinks, as stat does) and
// returns the fstat of the descriptor, which it keeps. A path that does
// not exist (ENOENT, ENOTDIR) is an error, as for stat. Where the open
// fails for a reason stat would not share (EMFILE, say), it answers with
// os.Stat, so the policy is what it was, and the ruleset opens the path
// itself and fails as it did.
func (o *openedPaths) Stat(path string) (os.FileInfo, error) {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err == unix.ENOENT || err == unix.ENOTDIR {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	if err != nil {
		return os.Stat(path)
	}
	info := &openedInfo{name: path}
	if err := syscall.Fstat(fd, &info.st); err != nil {
		unix.Close(fd)
		return os.Stat(path)
	}
	if old, ok := o.fds[path]; ok {
		unix.Close(old.fd)
	}
	o.fds[path] = openedFD{fd: fd, dir: info.IsDir()}
	return info, nil
}

// SameFile is os.SameFile for what Stat returns, either kind: the same
// device and inode.
func (o *openedPaths) SameFile(a, b os.FileInfo) bool {
	x, ok1 := a.Sys().(*syscall.Stat_t)
	y, ok2 := b.Sys().(*syscall.Stat_t)
	return ok1 && ok2 && x.Dev == y.Dev && x.Ino == y.Ino
}

// take returns the descriptor kept for path, which the caller then owns.
func (o *openedPaths) take(path string) (openedFD, bool) {
	if o == nil {
		return openedFD{fd: -1}, false
	}
	h, ok := o.fds[path]
	if ok {
		delete(o.fds, path)
	}
	return h, ok
}

// close closes every descriptor not taken.
func (o *openedPaths) close() {
	for _, h := range o.fds {
		unix.Close(h.fd)
	}
	clear(o.fds)
}

// openedInfo is the fs.FileInfo of an fstat.
type openedInfo struct {
	name string
	st   syscall.Stat_t
}

func (i *openedInfo) Name() string       { return i.name }
func (i *openedInfo) Size() int64        { return i.st.Size }
func (i *openedInfo) ModTime() time.Time { return time.Unix(i.st.Mtim.Unix()) }
func (i *openedInfo) IsDir() bool        { return i.st.Mode&syscall.S_IFMT == syscall.S_IFDIR }
func (i *openedInfo) Sys() any           { return &i.st }

// Mode converts the stat mode as os.Stat does on Linux.
func (i *openedInfo) Mode() fs.FileMode { return safefs.ModeOf(i.st.Mode) }

// selfPolicy is buildLinuxPolicy(rc, abi, procSelf, nil).forSelf() with
// the default paths looked at through the descriptors their rules are
// then made with (see openedPaths). The policy is built with the default
// paths left for later (inChild: nothing else depends on it), then they
// are looked at first and the other rules added after them, in their
// order, as buildLinuxPolicy adds them: the same rules, merged the same
// way (TestSelfPolicyMatchesBuilt). The caller closes the openedPaths.
func selfPolicy(rc *spec.Resolved, abi int, procSelf string) (linuxPolicy, *openedPaths) {
	pol := buildLinuxPolicy(rc, abi, inChild, nil).forSelf()
	rest := pol.Paths
	pol.Paths, pol.System = nil, nil
	opened := &openedPaths{fds: make(map[string]openedFD, len(SystemPaths))}
	pol.statSystemPaths(procSelf, pol.add, opened)
	for _, r := range rest {
		// add merges into a default path's rule (and then drops the
		// judged identity, as buildLinuxPolicy's add does); a rule of its
		// own keeps the identity its build judged.
		pol.addRule(r)
	}
	return pol, opened
}
