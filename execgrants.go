package sandbox

// What an exec grant covers beyond its own path, so that "--exec /usr/bin"
// runs what a user finds in /usr/bin. Pure policy over the filesystem as
// it is now; buildLinuxPolicy turns the result into rules and PlanFor
// lists each with its reason.

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// execExtra is one path an exec grant adds: a file (the target of a symlink
// inside a granted directory) or a directory of helper programs.
type execExtra struct {
	Path   string
	IsDir  bool
	Reason string
	// Interps are a file's interpreters (interpretersOf, before the write
	// paths are known), read when the directory was scanned; the policy
	// checks them against the write paths.
	Interps []string
	// Loader is the one of Interps that is an ELF interpreter, or "".
	Loader string
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

// execExtrasCacheTTL bounds how long the extras of a directory are reused:
// a symlink elsewhere (/etc/alternatives) can change its target without the
// granted directory changing.
const execExtrasCacheTTL = 10 * time.Second

type execExtrasEntry struct {
	version fileVersion
	at      time.Time
	extras  []execExtra
}

var execExtrasCache = struct {
	sync.Mutex
	m map[string]execExtrasEntry
}{m: map[string]execExtrasEntry{}}

// execExtrasFor returns what granting exec on the resolved paths in
// granted also grants, without paths already covered by granted:
//
//   - for a directory: the resolved target of every symlink directly inside
//     it that leads outside the granted paths to an executable regular
//     file (on Debian /usr/bin/npm, java, and a few hundred more lead into
//     /usr/lib or /usr/share); and the helper directories of the tools in
//     it (toolHelpers);
//   - for a file: the helper directories of its tool.
//
// Symlinks are read once per directory version (and at most every
// execExtrasCacheTTL): a directory such as /usr/bin holds thousands of
// entries, and WrapCommand is on a hot path.
func execExtrasFor(granted []ResolvedPath) []execExtra {
	var out []execExtra
	covered := func(p string) bool {
		for _, g := range granted {
			if p == g.Resolved || g.IsDir && strings.HasPrefix(p, strings.TrimSuffix(g.Resolved, "/")+"/") {
				return true
			}
		}
		return slices.ContainsFunc(out, func(e execExtra) bool {
			return p == e.Path || e.IsDir && strings.HasPrefix(p, e.Path+"/")
		})
	}
	addHelpers := func(tool, why string) {
		for _, d := range helperDirs(tool, why) {
			if d, ok := helperDir(d); ok && !covered(d) {
				out = append(out, execExtra{Path: d, IsDir: true, Reason: "helper programs of " + why})
			}
		}
	}
	for _, g := range granted {
		if !g.IsDir {
			if tool := helperTool(filepath.Base(g.Resolved)); tool != "" {
				addHelpers(tool, g.Resolved)
			}
			continue
		}
		for _, e := range dirExtras(g.Resolved) {
			if !covered(e.Path) {
				out = append(out, e)
			}
		}
	}
	return out
}

// dirExtras is execExtrasFor for one directory, cached.
func dirExtras(dir string) []execExtra {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil
	}
	v, cacheable := statVersion(fi)
	if cacheable {
		execExtrasCache.Lock()
		e, ok := execExtrasCache.m[dir]
		execExtrasCache.Unlock()
		if ok && e.version == v && time.Since(e.at) < execExtrasCacheTTL {
			return e.extras
		}
	}
	extras := scanExecDir(dir)
	if cacheable {
		execExtrasCache.Lock()
		if len(execExtrasCache.m) >= maxCachedInterpreters {
			clear(execExtrasCache.m)
		}
		execExtrasCache.m[dir] = execExtrasEntry{version: v, at: time.Now(), extras: extras}
		execExtrasCache.Unlock()
	}
	return extras
}

// scanExecDir reads dir once: symlinks leading out of it, and tools with
// helper directories.
func scanExecDir(dir string) []execExtra {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []execExtra
	seen := map[string]bool{}
	for _, ent := range entries {
		name := ent.Name()
		path := filepath.Join(dir, name)
		if tool := helperTool(name); tool != "" {
			for _, d := range helperDirs(tool, path) {
				if seen[d] {
					continue
				}
				seen[d] = true
				if d, ok := helperDir(d); ok {
					out = append(out, execExtra{Path: d, IsDir: true, Reason: "helper programs of " + path})
				}
			}
		}
		if ent.Type()&fs.ModeSymlink == 0 {
			continue
		}
		target, err := filepath.EvalSymlinks(path)
		if err != nil || seen[target] || strings.HasPrefix(target, dir+"/") {
			continue
		}
		fi, err := os.Stat(target)
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
			continue
		}
		seen[target] = true
		interps, loader := interpreterChain(target, 0, nil)
		out = append(out, execExtra{Path: target, Reason: "target of " + path, Interps: interps, Loader: loader})
	}
	return out
}
