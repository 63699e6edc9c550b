package linux

// The walk that finds git repositories at any depth of the write paths
// (and of writable Mounts' sources), pure: the directory reads come
// through gitWalkFS (gitwalk_linux.go on the host; a fake in tests), so
// the walk, its budget, its visited set and its cache are tested on every
// OS.
//
// # What is looked for
//
// A repository git would find and run code from, the next time anyone
// runs git in it outside the sandbox:
//
//   - a directory holding an entry named .git that is a directory, a
//     regular file ("gitdir: DIR") or a symbolic link (git follows it);
//     the walk never follows it, and never enters a .git;
//   - an implicit bare repository: a directory holding HEAD (a file or a
//     symbolic link), objects/ and refs/ (directories), which git takes for
//     a git directory when run inside it (config, when there, names
//     programs git runs: core.sshCommand at the next git fetch there, for
//     one); the walk does not enter it either.
//
// A .git of any other type (a FIFO, a socket, a device) is no repository
// git would use; it is reported (gitWalkResult.Odd), never opened.
//
// # What the walk guarantees
//
// It never follows a symbolic link (gitWalkFS.Read opens beneath the root
// without following any, and a directory entry that is a link is never
// queued); it never opens anything but directories (O_DIRECTORY: a FIFO
// is refused before it is opened); it visits each directory once (a set
// of device and inode numbers: bind mounts and loops are walked once);
// and it stops at a budget of directories, entries and time (gitWalkDirs,
// gitWalkEntries, gitWalkTime), walking breadth first, so what it leaves is the
// deepest part, and that part is named (gitWalkResult.NotWalked), never
// silently skipped. A directory the caller may not read
// (EACCES) is named too (Denied); the program, which runs with the
// caller's credentials or fewer, cannot reach into it either.

import (
	"slices"
	"time"
)

// The walk's budget per spawn, over all its roots: 32,768 directories and
// 1,048,576 entries. A cold walk costs 5 to 11 µs per directory here
// (BenchmarkGitWalk: 5,000 directories and 50,000 files in 27 to 54 ms),
// so the budget bounds the first spawn of a process to well under a
// second; a warm one (the cache) costs about one lstat per directory. Workspaces larger than this (a big node_modules) are walked
// only in part: the plan says which part is not, Run reports it as a
// Finding, and Strict refuses.
const (
	gitWalkDirs    = 32768
	gitWalkEntries = 1 << 20
)

// gitWalkTime bounds one walk's time (all its roots): a slow filesystem
// inside a write path stops it there as the budget does, with what is
// left named.
const gitWalkTime = 5 * time.Second

// gitWalkBudget bounds one walk (tests make it small).
type gitWalkBudget struct {
	dirs, entries int
	time          time.Duration // 0: no bound
}

// defaultGitWalkBudget is the budget spawns use.
var defaultGitWalkBudget = gitWalkBudget{gitWalkDirs, gitWalkEntries, gitWalkTime}

// gitDirStamp is a directory's identity and its last change, as lstat (or
// fstat of an open descriptor) gives them: times in nanoseconds.
type gitDirStamp struct {
	dev, ino     uint64
	mtime, ctime int64
}

// gitDirID is a directory's identity (device, inode).
type gitDirID struct{ dev, ino uint64 }

func (s gitDirStamp) id() gitDirID { return gitDirID{s.dev, s.ino} }

// gitEntryType is what a directory entry is, from d_type (or lstat where
// the filesystem does not fill it in).
type gitEntryType uint8

const (
	gitEntOther gitEntryType = iota // FIFO, socket, device
	gitEntDir
	gitEntFile
	gitEntLink
)

// gitListing is what the walk keeps of one directory.
type gitListing struct {
	subdirs []string     // child directories to walk: not .git, not links
	dotgit  gitEntryType // the .git entry's type, when hasDotgit
	// hasDotgit: an entry named .git; bare: HEAD, objects/ and refs/.
	hasDotgit, bare bool
	entries         int  // entries read ("." and ".." not counted)
	partial         bool // the entries budget ended the read
	head, obj, refs bool // bare's parts, while the listing is built
}

// add records one entry of the directory being listed.
func (l *gitListing) add(name string, t gitEntryType) {
	l.entries++
	switch name {
	case ".git":
		l.hasDotgit, l.dotgit = true, t
		return // never entered
	case "HEAD":
		l.head = t == gitEntFile || t == gitEntLink
	case "objects":
		l.obj = t == gitEntDir
	case "refs":
		l.refs = t == gitEntDir
	}
	if t == gitEntDir {
		l.subdirs = append(l.subdirs, name)
	}
}

// done ends the listing: a bare repository's directories are not walked.
// The subdirectories are sorted: the walk's order, and so what a budget
// leaves, does not depend on the order the filesystem lists them in.
func (l *gitListing) done() {
	l.bare = l.head && l.obj && l.refs
	if l.bare {
		l.subdirs = nil
	}
	slices.Sort(l.subdirs)
}

// gitWalkFS reads directories beneath one root. rel is "." or a
// slash-separated path below the root, every component of which the walk
// found as a directory entry of type directory.
type gitWalkFS interface {
	// Stat is lstat of rel: its stamp, and whether it is a directory.
	Stat(rel string) (gitDirStamp, bool, error)
	// Read opens rel beneath the root without following any symbolic
	// link, as a directory, and lists it (at most max entries: more
	// make the listing partial). The stamp is taken before the list.
	Read(rel string, max int) (gitDirStamp, gitListing, error)
	// Denied reports whether err means the caller may not read it.
	Denied(err error) bool
	// Gone reports whether err means rel is no longer a directory there
	// (removed, or replaced by a link or a file since its parent was
	// listed): nothing to walk, nothing to report.
	Gone(err error) bool
}

// gitWalkResult is what a walk found; paths are absolute.
type gitWalkResult struct {
	// Repos are the directories holding a .git (directory, file or link),
	// Bare the implicit bare repositories, Odd the .git entries of another
	// type (a FIFO, ...), breadth first.
	Repos, Bare, Odd []string
	// NotWalked are the directories the budget (or an error other than
	// EACCES) left unwalked, or walked in part, NotWalkedMore how many
	// more there were than are named (at most gitNotWalkedNamed are).
	NotWalked     []string
	NotWalkedMore int
	// Denied are directories the caller may not read.
	Denied []string
	// Dirs and Entries are what the walk read or took from its cache.
	Dirs, Entries int
}

// gitNotWalkedNamed bounds NotWalked and Denied: a plan entry names this
// many, and counts the rest.
const gitNotWalkedNamed = 16

// complete reports whether the walk reached every directory it could.
func (r gitWalkResult) complete() bool { return len(r.NotWalked) == 0 && r.NotWalkedMore == 0 }

// gitWalker walks several roots with one budget and one visited set.
type gitWalker struct {
	budget gitWalkBudget
	cache  *gitWalkCache // nil: none
	now    func() time.Time
	seen   map[gitDirID]bool
	res    gitWalkResult
	// cached: the cache held listings when this root's walk began
	// (else a lstat before each read would be for nothing).
	cached bool
	// until is when the walk's time is up (zero: never), late once it is.
	until time.Time
	late  bool
}

func newGitWalker(b gitWalkBudget, cache *gitWalkCache, now func() time.Time) *gitWalker {
	w := &gitWalker{budget: b, cache: cache, now: now, seen: map[gitDirID]bool{}}
	if b.time > 0 {
		w.until = now().Add(b.time)
	}
	return w
}

// spent reports whether the budget is used up (the clock is read every
// 64 directories).
func (w *gitWalker) spent() bool {
	if w.res.Dirs >= w.budget.dirs || w.res.Entries >= w.budget.entries || w.late {
		return true
	}
	if !w.until.IsZero() && w.res.Dirs%64 == 63 && w.now().After(w.until) {
		w.late = true
	}
	return w.late
}

// notWalked names dir as not walked (or counts it, past the names kept).
func (w *gitWalker) notWalked(dir string) {
	if len(w.res.NotWalked) < gitNotWalkedNamed {
		w.res.NotWalked = append(w.res.NotWalked, dir)
	} else {
		w.res.NotWalkedMore++
	}
}

// walk walks the directory root (absolute, cleaned) breadth first.
func (w *gitWalker) walk(root string, fs gitWalkFS) {
	var n int
	if w.cache != nil {
		n = w.cache.size()
	}
	// Sized from the cache: a warm walk grows neither.
	w.cached = n > 0
	if len(w.seen) == 0 && n > 0 {
		w.seen = make(map[gitDirID]bool, min(n, w.budget.dirs))
	}
	queue := make([]string, 1, min(n+1, w.budget.dirs))
	queue[0] = "."
	for i := 0; i < len(queue); i++ {
		rel := queue[i]
		abs := joinRel(root, rel)
		if w.spent() {
			for _, r := range queue[i:] {
				w.notWalked(joinRel(root, r))
			}
			return
		}
		st, l, err := w.list(rel, fs)
		switch {
		case err != nil && fs.Gone(err):
			continue
		case err != nil && fs.Denied(err):
			if len(w.res.Denied) < gitNotWalkedNamed {
				w.res.Denied = append(w.res.Denied, abs)
			}
			continue
		case err != nil:
			w.notWalked(abs)
			continue
		case w.seen[st.id()]:
			continue
		}
		w.seen[st.id()] = true
		w.res.Dirs++
		w.res.Entries += l.entries
		if l.partial {
			w.notWalked(abs)
		}
		if l.hasDotgit {
			if l.dotgit == gitEntOther {
				w.res.Odd = append(w.res.Odd, abs+"/.git")
			} else {
				w.res.Repos = append(w.res.Repos, abs)
			}
		}
		if l.bare {
			w.res.Bare = append(w.res.Bare, abs)
		}
		for _, s := range l.subdirs {
			queue = append(queue, joinRel(rel, s))
		}
	}
}

// joinRel is dir/name for the walk's paths, which are clean and whose
// names are directory entries (no slash, never "." or ".."): a
// concatenation, not path.Join's cleaning, on the walk's hot path.
func joinRel(dir, name string) string {
	switch {
	case name == ".":
		return dir
	case dir == ".":
		return name
	case dir == "/":
		return "/" + name
	}
	return dir + "/" + name
}

// list is rel's listing: the cache's, where the cache holds one for the
// directory now at rel with the same stamp, old enough to trust; else
// read (and cached). With an empty cache (a process's first walk) no
// lstat is made first.
func (w *gitWalker) list(rel string, fs gitWalkFS) (gitDirStamp, gitListing, error) {
	if w.cache != nil && w.cached {
		st, dir, err := fs.Stat(rel)
		if err == nil && dir {
			if l, ok := w.cache.get(st); ok {
				return st, l, nil
			}
		}
	}
	left := w.budget.entries - w.res.Entries
	at := w.now()
	st, l, err := fs.Read(rel, left)
	if err == nil && w.cache != nil && !l.partial {
		w.cache.put(st, l, at)
	}
	return st, l, err
}

// sortRepos orders repositories for the per-spawn budget: those in first
// (the write paths' tops and the working directory's), then the shallower
// before the deeper, then by name.
func sortRepos(repos []string, first []string) []string {
	out := slices.Clone(repos)
	rank := func(p string) int {
		if slices.Contains(first, p) {
			return 0
		}
		return 1
	}
	depth := func(p string) int {
		n := 0
		for _, c := range p {
			if c == '/' {
				n++
			}
		}
		return n
	}
	slices.SortStableFunc(out, func(a, b string) int {
		if r := rank(a) - rank(b); r != 0 {
			return r
		}
		if d := depth(a) - depth(b); d != 0 {
			return d
		}
		switch {
		case a < b:
			return -1
		case a > b:
			return 1
		}
		return 0
	})
	return slices.Compact(out)
}
