package execgrant

// What a cached scan's result depends on, so that dirExtras reuses it only
// while a fresh scan would answer the same (issue 30: a cache is keyed so
// that any change invalidates it, and never grants wider than a fresh
// computation would).
//
// A scan's answer comes from three kinds of observation, and each path it
// observes is noted with its version (fileVersion: device, inode, mode,
// size, modification and change time), taken before the observation:
//
//   - a directory's entries: the granted directory's listing, and every
//     lstat the symlink walks make (which names an entry of the parent
//     directory, or finds none). An entry is created, removed, renamed or
//     replaced only by changing its directory, which sets the directory's
//     modification and change time; a symlink's text cannot be changed in
//     place, only the link replaced. So the parent directory of every path
//     lstat'ed is noted (noteDir), and the granted directory itself. A
//     directory's search permission (an lstat under it refused) is in its
//     mode, which changes its change time too.
//   - what a walk ends on (a link's target, an interpreter, a helper
//     directory): its type and execute bits decide whether it is granted,
//     and a file's content (its "#!" line, its PT_INTERP) names the
//     interpreters. Its version from the walk's own last lstat is noted;
//     not for a link whose walk ends inside the granted directory, which
//     is no extra whatever it ends on (its directories' versions keep
//     where it ends).
//   - the identity of everything by path: validation looks each noted path
//     up again (lstat), so a directory replaced or mounted over anywhere
//     along the way is found by a different device and inode.
//
// A change time cannot be set by user space (chmod, chown, a write, utimes
// all set it to now), so a path whose version is unchanged has not changed
// since it was noted, with one exception: timestamps are as coarse as the
// kernel's clock tick (or the file system's granularity), so a change in
// the same tick as the observation can leave the version unchanged. As
// git does with its index ("racily clean" entries), a scan that noted a
// time within racyWindow of its own start is not kept.

import (
	"strings"
	"time"
)

// racyWindow is how recent a noted modification or change time makes a
// scan's result unfit to keep: more than a clock tick (≤ 10 ms at HZ=100)
// and than the timestamp granularity of the file systems programs are
// installed on (1 s for some network and old file systems; ext4, XFS and
// btrfs record nanoseconds). A time in the future (a clock set back, or
// a server's clock ahead) also counts as recent: such a directory is
// rescanned on every call, which is slow but never stale. A variable for
// the tests, whose trees are made moments before they are scanned.
var racyWindow = time.Second

// dependency is one path a scan's result depends on, and its version when
// the scan looked.
type dependency struct {
	path    string
	version fileVersion
}

// scanDeps collects, during one scan, the version of every path its answer
// depends on (see the file's comment).
type scanDeps struct {
	since int64 // start of the scan less racyWindow, in Unix nanoseconds
	paths map[string]fileVersion
	racy  bool // a noted time is within racyWindow, or a path changed during the scan
}

func newScanDeps() *scanDeps {
	return &scanDeps{since: time.Now().Add(-racyWindow).UnixNano(), paths: map[string]fileVersion{}}
}

// note records path's version v. A path noted twice with two versions
// changed during the scan, whose answer may then mix both: not kept.
func (d *scanDeps) note(path string, v fileVersion) {
	if old, ok := d.paths[path]; ok {
		if old != v {
			d.racy = true
		}
		return
	}
	d.paths[path] = v
	if v.mtime >= d.since || v.ctime >= d.since {
		d.racy = true
	}
}

// noteDir records the version of directory dir, once per scan, before an
// entry of it is looked at.
func (d *scanDeps) noteDir(dir string) {
	if _, ok := d.paths[dir]; !ok {
		d.note(dir, pathVersion(dir))
	}
}

// list is what the scan depends on, for the cache entry.
func (d *scanDeps) list() []dependency {
	out := make([]dependency, 0, len(d.paths))
	for p, v := range d.paths {
		out = append(out, dependency{path: p, version: v})
	}
	return out
}

// unchanged reports whether every path in deps still has the version it
// had: one lstat each, stopping at the first change.
func unchanged(deps []dependency) bool {
	for _, x := range deps {
		if pathVersion(x.path) != x.version {
			return false
		}
	}
	return true
}

// parentDir is the directory holding the entry that absolute path p names.
func parentDir(p string) string {
	if i := strings.LastIndexByte(p, '/'); i > 0 {
		return p[:i]
	}
	return "/"
}
