package execgrant

// What an exec grant covers beyond its own path, so that "--exec /usr/bin"
// runs what a user finds in /usr/bin. Pure policy over the filesystem as
// it is now; the root package's buildLinuxPolicy turns the result into
// rules and PlanFor lists each with its reason.

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Extra is one path an exec grant adds: a file (the target of a symlink
// inside a granted directory, symlinks resolved, an executable regular
// file when it was looked at) or a directory of helper programs (resolved
// when it is itself a symlink). Extras knows no write path: the caller
// must not grant an Extra inside one, and must pass each of Interps
// through Grantable with the write paths before granting it.
type Extra struct {
	Path   string
	IsDir  bool
	Reason string
	// Interps are a file's interpreters (Chain, before the write paths
	// are known), read when the directory was scanned; the policy checks
	// them against the write paths.
	Interps []string
	// Loader is the one of Interps that is an ELF interpreter, or "".
	Loader string
	// Dev and Ino identify the file at Path that the scan judged (its
	// type and execute bits decided the grant, its content the
	// interpreters), by the walk's own last lstat of it, which a cached
	// answer's validation (dirExtras) found unchanged in the same Extras
	// call: so they are what Path named when the answer was last
	// confirmed, not an older identity. Both 0 when not known (helper
	// directories; systems where versions are not read).
	Dev, Ino uint64
}

// toolHelpers names, for a program, the directories of helper programs it
// executes by their full path, which an exec grant of the program (or of a
// directory holding it) therefore also grants:
//
//   - git runs its sub-commands (pack-objects for clone, maintenance after
//     commit, remote-https) from its exec-path, /usr/lib/git-core on
//     Debian (/usr/libexec/git-core elsewhere);
//   - gcc and g++ run cc1, cc1plus, collect2 and lto-wrapper from
//     /usr/lib/gcc/TRIPLET/VERSION (Debian) or /usr/libexec/gcc (Fedora);
//   - go runs compile, link, asm and vet from GOROOT/pkg/tool.
//
// Only these directories are added, never a whole /usr/lib: a helper
// directory holds the programs of one tool and nothing else.
var toolHelpers = map[string][]string{
	"git": {"/usr/lib/git-core", "/usr/libexec/git-core"},
	"gcc": {"/usr/lib/gcc", "/usr/libexec/gcc"},
	"g++": {"/usr/lib/gcc", "/usr/libexec/gcc"},
	"cc":  {"/usr/lib/gcc", "/usr/libexec/gcc"},
	"c++": {"/usr/lib/gcc", "/usr/libexec/gcc"},
	"go":  nil, // GOROOT/pkg/tool: see helperDirs
}

// helperDirs returns the helper directories of tool, found at path: the
// fixed ones of toolHelpers, and for the go command the directory of its
// compiler and linker, GOROOT/pkg/tool (GOROOT being the parent of the
// directory go is in, symlinks resolved).
func helperDirs(tool, path string) []string {
	if tool != "go" {
		return toolHelpers[tool]
	}
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil
	}
	return []string{filepath.Join(filepath.Dir(filepath.Dir(resolved)), "pkg", "tool")}
}

// helperDir returns d, a helper directory of toolHelpers, as granted: d
// itself when it is a directory, or where it resolves when it is a symlink
// (every path granted is resolved: WrapCommand refuses a rule path that is
// a symlink when it records it, as a symlink there may have been swapped
// in), and whether it is a directory at all. One lstat in the usual case,
// as the stat it replaces.
func helperDir(d string) (string, bool) {
	fi, err := os.Lstat(d)
	if err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if d, err = filepath.EvalSymlinks(d); err == nil {
			fi, err = os.Stat(d)
		}
	}
	return d, err == nil && fi.IsDir()
}

// helperTool returns the key of toolHelpers that a program name stands for:
// versioned and cross-prefixed names (gcc-12, x86_64-linux-gnu-gcc-12)
// count as their tool.
func helperTool(name string) string {
	if _, ok := toolHelpers[name]; ok {
		return name
	}
	base := name
	if i := strings.LastIndexByte(base, '-'); i > 0 && strings.Trim(base[i+1:], "0123456789.") == "" {
		base = base[:i] // gcc-12
	}
	if i := strings.LastIndexByte(base, '-'); i > 0 {
		if _, ok := toolHelpers[base[i+1:]]; ok && strings.Count(base, "-") >= 2 {
			base = base[i+1:] // x86_64-linux-gnu-gcc
		}
	}
	if _, ok := toolHelpers[base]; ok {
		return base
	}
	return ""
}

// execExtrasEntry is a directory's cached scan: its extras, and every path
// they depend on with its version then (scandeps.go). A symlink elsewhere
// (/etc/alternatives) can change its target without the granted directory
// changing, and a target's content decides its interpreters: the entry is
// used only while none of those paths has changed, so that it answers as
// a fresh scan would (a few hundred lstats for /usr/bin, against some two
// thousand system calls for the scan).
type execExtrasEntry struct {
	version fileVersion // the directory's, as os.Stat of the granted path sees it
	deps    []dependency
	extras  []Extra
}

// execExtrasCache holds the scans in the caller's memory only: nothing a
// confined program can write is read as a cached answer. Bounded: emptied
// when full.
var execExtrasCache = struct {
	sync.Mutex
	m map[string]execExtrasEntry
}{m: map[string]execExtrasEntry{}}

// Grant is one path on the exec allowlist, as Extras takes it: Path
// resolved (symlinks followed), IsDir whether it is a directory.
type Grant struct {
	Path  string
	IsDir bool
}

// Extras returns what granting exec on the resolved paths in granted also
// grants, without paths already covered by granted:
//
//   - for a directory: the resolved target of every symlink directly inside
//     it that leads outside the granted paths to an executable regular
//     file (on Debian /usr/bin/npm, java, and a few hundred more lead into
//     /usr/lib or /usr/share); and the helper directories of the tools in
//     it (toolHelpers);
//   - for a file: the helper directories of its tool.
//
// A directory is scanned once while nothing its answer depends on changes
// (the directory, every directory its symlinks lead through, every target:
// execExtrasEntry), and the cached answer is used only after checking
// that: a directory such as /usr/bin holds thousands of entries, and
// WrapCommand is on a hot path.
//
// Only fixed helper directories (toolHelpers, and GOROOT/pkg/tool beside
// a go command) and symlink targets that resolve to executable regular
// files are returned. A symlink's text can name any such file, and a
// target's interpreters come from its content (through Chain, so each has
// passed Grantable, but with no write path known): see Extra for what the
// caller must still check.
//
// The result may be shared with other calls: the caller must not change it.
func Extras(granted []Grant) []Extra {
	// Each directory's extras first (cached, and validated now), so that
	// out is made once.
	lists, n := make([][]Extra, len(granted)), 0
	for i, g := range granted {
		if g.IsDir {
			lists[i] = dirExtras(g.Path)
			n += len(lists[i])
		}
	}
	if out, ok := lastExtras.get(granted, lists); ok {
		return out
	}
	out := extrasOf(granted, lists, n)
	lastExtras.put(granted, lists, out)
	return out
}

// extrasOf is Extras of granted, given each granted directory's extras
// (lists[i], n of them in all): those not covered by granted or by an
// earlier one, and the helper directories of the granted files' tools.
func extrasOf(granted []Grant, lists [][]Extra, n int) []Extra {
	out := make([]Extra, 0, n)
	// What out covers, kept beside it: its paths, and its directories as
	// prefixes (a handful of helper directories), so that a directory's
	// hundred targets are not each compared with every one before them.
	have := make(map[string]bool, n)
	var haveDirs []string
	add := func(e Extra) {
		out = append(out, e)
		have[e.Path] = true
		if e.IsDir {
			haveDirs = append(haveDirs, e.Path+"/")
		}
	}
	under := make([]string, len(granted)) // a granted directory's prefix, once
	for i, g := range granted {
		if g.IsDir {
			under[i] = strings.TrimSuffix(g.Path, "/") + "/"
		}
	}
	covered := func(p string) bool {
		for i, g := range granted {
			if p == g.Path || g.IsDir && strings.HasPrefix(p, under[i]) {
				return true
			}
		}
		return have[p] || slices.ContainsFunc(haveDirs, func(d string) bool { return strings.HasPrefix(p, d) })
	}
	addHelpers := func(tool, why string) {
		for _, d := range helperDirs(tool, why) {
			if d, ok := helperDir(d); ok && !covered(d) {
				add(Extra{Path: d, IsDir: true, Reason: "helper programs of " + why})
			}
		}
	}
	for i, g := range granted {
		if !g.IsDir {
			if tool := helperTool(filepath.Base(g.Path)); tool != "" {
				addHelpers(tool, g.Path)
			}
			continue
		}
		for _, e := range lists[i] {
			if !covered(e.Path) {
				add(e)
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// lastExtras is Extras' last answer for a list of granted directories
// only (a granted file's helper directories are looked up on the host
// each time), with the directory answers it was made from: dirExtras'
// slices, by identity. extrasOf is a function of granted and those
// answers alone, so the same granted list with the very answers that
// dirExtras has just validated (a rescan makes a new slice; an answer
// that cannot be cached is a new slice each time) gives the same result:
// a realistic WrapCommand's /usr/bin, about 130 extras, is then not
// copied and filtered again. Held in the caller's memory only; the slices
// it keeps cannot be reused for another answer while it holds them.
var lastExtras extrasMemo

type extrasMemo struct {
	sync.Mutex
	granted []Grant
	lists   [][]Extra
	out     []Extra
}

// get returns the memo's answer if it was made from granted and lists.
func (m *extrasMemo) get(granted []Grant, lists [][]Extra) ([]Extra, bool) {
	m.Lock()
	defer m.Unlock()
	if m.lists == nil || !slices.Equal(m.granted, granted) || !slices.EqualFunc(m.lists, lists, sameSlice) {
		return nil, false
	}
	return m.out, true
}

// put keeps out as the answer for granted and lists, where every granted
// path is a directory.
func (m *extrasMemo) put(granted []Grant, lists [][]Extra, out []Extra) {
	if slices.ContainsFunc(granted, func(g Grant) bool { return !g.IsDir }) {
		return
	}
	m.Lock()
	defer m.Unlock()
	m.granted, m.lists, m.out = slices.Clone(granted), lists, out
}

// sameSlice reports whether a and b are the same slice: the same array
// and length (two empty slices are the same).
func sameSlice(a, b []Extra) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// dirExtras is Extras for one directory, cached (where versions are known:
// Linux) while nothing the answer depends on has changed.
func dirExtras(dir string) []Extra {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil
	}
	v, cacheable := statVersion(fi)
	if !cacheable {
		return scanExecDir(dir)
	}
	execExtrasCache.Lock()
	e, ok := execExtrasCache.m[dir]
	execExtrasCache.Unlock()
	if ok && e.version == v && unchanged(e.deps) {
		return e.extras
	}
	extras, deps := scanExecDirNoting(dir)
	if deps.racy {
		// A noted time too recent to tell a later change by: answered,
		// not kept (see racyWindow).
		return extras
	}
	execExtrasCache.Lock()
	if len(execExtrasCache.m) >= maxCachedInterpreters {
		clear(execExtrasCache.m)
	}
	execExtrasCache.m[dir] = execExtrasEntry{version: v, deps: deps.list(), extras: extras}
	execExtrasCache.Unlock()
	return extras
}
