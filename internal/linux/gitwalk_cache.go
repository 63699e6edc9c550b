package linux

import (
	"sync"
	"time"
)

// gitWalkCache keeps, within one process, the listings the git walk read,
// so that a process that spawns again re-checks an unchanged tree with one
// lstat per directory instead of reading it again.
//
// An entry is keyed on the directory's identity (device, inode) and holds
// the stamp (mtime and ctime, in nanoseconds) fstat gave on the open
// descriptor before the directory was listed. It is used only when lstat
// of the path the walk reaches gives the same identity and both times,
// and only when those times lie more than gitTimeGranularity before the
// moment the listing was begun: a change within the filesystem's
// timestamp granularity of the listing could leave the times as they
// were, so such a directory counts as changed, and is read again (and
// cached again, until it is old enough to trust).
//
// Why ctime as well as mtime: a program can set a directory's mtime back
// with utimes(2), but not its ctime (which the change of mtime itself
// moves on). Adding, removing or renaming an entry changes both. A
// directory replaced by another (a new inode, or the same inode number
// reused) has a ctime of its creation: later than the cached one.
//
// What it does not cover: a clock set back (CAP_SYS_TIME, which no
// sandboxed program holds), and a filesystem whose server's clock runs
// more than gitTimeGranularity behind the caller's (a network
// filesystem). The cache lives only in this process's memory: nothing the
// program can write reaches it.
type gitWalkCache struct {
	mu   sync.Mutex
	dirs map[gitDirID]gitCached
	max  int
}

type gitCached struct {
	stamp gitDirStamp
	list  gitListing
	at    int64 // when the listing was begun, ns
}

// gitTimeGranularity is how recent a change may be and still be trusted
// to have moved the directory's times: the coarsest of the filesystems
// the walk meets (FAT's two seconds; ext4, XFS, btrfs and tmpfs stamp
// with the kernel's coarse clock, a tick of at most 10 ms).
const gitTimeGranularity = 2 * time.Second

// gitCacheDirs bounds the cache (four walk budgets): past it the cache
// starts again, empty.
const gitCacheDirs = 4 * gitWalkDirs

func newGitWalkCache(max int) *gitWalkCache {
	return &gitWalkCache{dirs: map[gitDirID]gitCached{}, max: max}
}

// hostGitCache is the process's cache.
var hostGitCache = newGitWalkCache(gitCacheDirs)

// size is how many listings the cache holds.
func (c *gitWalkCache) size() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.dirs)
}

// get returns the cached listing of the directory st names, if its stamp
// is st's and old enough to trust (see gitWalkCache).
func (c *gitWalkCache) get(st gitDirStamp) (gitListing, bool) {
	c.mu.Lock()
	e, ok := c.dirs[st.id()]
	c.mu.Unlock()
	if !ok || e.stamp != st {
		return gitListing{}, false
	}
	last := max(st.mtime, st.ctime)
	if last > e.at-int64(gitTimeGranularity) {
		return gitListing{}, false
	}
	return e.list, true
}

// put caches l, the listing of the directory whose stamp is st, begun at
// at.
func (c *gitWalkCache) put(st gitDirStamp, l gitListing, at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.dirs) >= c.max {
		c.dirs = map[gitDirID]gitCached{}
	}
	c.dirs[st.id()] = gitCached{stamp: st, list: l, at: at.UnixNano()}
}
