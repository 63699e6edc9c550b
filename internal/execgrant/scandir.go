package execgrant

// scanExecDir: the directory scan behind Extras, in as few system calls as
// give the same answer as the straightforward walk (filepath.EvalSymlinks
// and os.Stat of every symlink's target, Chain of every target), which the
// tests keep as the reference. /usr/bin holds a thousand entries and some
// four hundred symlinks, most leading through the same few directories
// (/etc/alternatives, /usr/lib/jvm/...) to files naming the same loader,
// and every `sandbox run` with --exec /usr/bin is a first scan.

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// dirScan is one scan's memory of what it has asked the file system:
// lstat and readlink answers by path, and interpreter chains by the
// interpreter named and the depth. An answer is reused only within the
// scan (a few milliseconds), where it stands for the walk's own, which is
// not atomic either: the scan answers as a walk that read each path once.
// Nothing outlives the scan except its result, and what the result depends
// on (deps, when not nil: see scandeps.go), under which dirExtras caches it.
type dirScan struct {
	dir    string
	lstats map[string]lstatAnswer
	links  map[string]linkAnswer
	chains map[chainKey]chainAnswer
	deps   *scanDeps
}

type lstatAnswer struct {
	mode    fs.FileMode
	version fileVersion // of a path lstat'ed (not of one the listing typed)
	err     error
}

type linkAnswer struct {
	target string
	err    error
}

type chainKey struct {
	interp string
	depth  int
}

type chainAnswer struct {
	chain  []string
	loader string
}

// scanExecDir reads dir once: symlinks leading out of it, and tools with
// helper directories. The entry types come from the directory listing
// (getdents' d_type, no lstat per entry); only symlinks are looked into.
func scanExecDir(dir string) []Extra {
	return (&dirScan{dir: dir}).scan()
}

// scanExecDirNoting is scanExecDir, and what its answer depends on.
func scanExecDirNoting(dir string) ([]Extra, *scanDeps) {
	s := &dirScan{dir: dir, deps: newScanDeps()}
	return s.scan(), s.deps
}

// execDirScanned is called on every scan (a test hook: the tests count
// the scans a cached answer saves).
var execDirScanned = func(string) {}

func (s *dirScan) scan() []Extra {
	execDirScanned(s.dir)
	if s.deps != nil {
		s.deps.noteDir(s.dir) // its listing
	}
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil
	}
	dir := s.dir
	s.lstats, s.links, s.chains = map[string]lstatAnswer{}, map[string]linkAnswer{}, map[chainKey]chainAnswer{}
	var out []Extra
	seen := map[string]bool{}
	for _, ent := range entries {
		name := ent.Name()
		tool, link := helperTool(name), ent.Type()&fs.ModeSymlink != 0
		if tool == "" && !link {
			continue // a file or directory of dir's own: nothing to look into
		}
		path := filepath.Join(dir, name)
		if tool != "" {
			for _, d := range s.helperDirs(tool, path) {
				if seen[d] {
					continue
				}
				seen[d] = true
				if d, ok := s.helperDir(d); ok {
					out = append(out, Extra{Path: d, IsDir: true, Reason: "helper programs of " + path})
				}
			}
		}
		if !link {
			continue
		}
		// The listing said symlink: the walk's lstat of path would say
		// the same (only the type of a step that is not the last counts).
		s.lstats[path] = lstatAnswer{mode: fs.ModeSymlink}
		if x, ok := s.linkExtra(path, seen); ok {
			out = append(out, x)
		}
	}
	return out
}

// linkExtra is the Extra of the symlink at path, if its target is an
// executable regular file outside the directory not yet seen.
func (s *dirScan) linkExtra(path string, seen map[string]bool) (Extra, bool) {
	target, mode, err := s.walk(path)
	if err != nil || seen[target] || strings.HasPrefix(target, s.dir+"/") {
		// No extra, whatever the target is: where the walk ends decides
		// that, and the versions of the directories it read (noted by
		// lstat) keep where it ends; the target's own version is not
		// noted. (A link to a program beside it is the common case in
		// /usr/bin: some hundred lstats fewer per validation.) A seen
		// target was noted when first seen, if it counted.
		return Extra{}, false
	}
	s.noteEnd(target)
	// The walk's last step was not a symlink (or it would have gone on),
	// so its lstat is the stat of the target.
	if !mode.IsRegular() || mode.Perm()&0o111 == 0 {
		return Extra{}, false
	}
	seen[target] = true
	interps, loader := s.chain(target, 0)
	v := s.lstats[target].version // the walk's last lstat, noted in deps
	return Extra{Path: target, Reason: "target of " + path, Interps: interps, Loader: loader, Dev: v.dev, Ino: v.ino}, true
}

func (s *dirScan) lstat(p string) (fs.FileMode, error) {
	a, ok := s.lstats[p]
	if !ok {
		if s.deps != nil {
			s.deps.noteDir(parentDir(p)) // before its entry is looked at
		}
		fi, err := os.Lstat(p)
		if err == nil {
			a.mode = fi.Mode()
			a.version, _ = statVersion(fi)
		}
		a.err = err
		s.lstats[p] = a
	}
	return a.mode, a.err
}

func (s *dirScan) readlink(p string) (string, error) {
	a, ok := s.links[p]
	if !ok {
		a.target, a.err = os.Readlink(p)
		s.links[p] = a
	}
	return a.target, a.err
}

// resolve is walk, noting what the walk ends on (noteEnd).
func (s *dirScan) resolve(path string) (string, fs.FileMode, error) {
	dest, mode, err := s.walk(path)
	if err == nil {
		s.noteEnd(dest)
	}
	return dest, mode, err
}

// noteEnd notes what a walk ended on, dest, with the version its lstat
// saw: its type, mode and content count.
func (s *dirScan) noteEnd(dest string) {
	if s.deps != nil {
		s.deps.note(dest, s.lstats[dest].version)
	}
}

// walk is filepath.EvalSymlinks of an absolute path (its walk, step for
// step, for a Unix path), with the lstat and readlink of each step asked
// once per scan, and returns the mode of the resolved path too. It notes
// the directories it reads (lstat), not what it ends on (resolve does).
func (s *dirScan) walk(path string) (string, fs.FileMode, error) {
	dest := "/"
	links := 0
	for start, end := 1, 1; start < len(path); start = end {
		for start < len(path) && path[start] == '/' {
			start++
		}
		end = start
		for end < len(path) && path[end] != '/' {
			end++
		}
		switch elem := path[start:end]; {
		case elem == "":
			continue
		case elem == ".":
			continue
		case elem == "..":
			// dest is resolved: its parent is lexical.
			if r := strings.LastIndexByte(dest, '/'); r <= 0 {
				dest = "/"
			} else {
				dest = dest[:r]
			}
			continue
		}
		if !strings.HasSuffix(dest, "/") {
			dest += "/"
		}
		dest += path[start:end]
		mode, err := s.lstat(dest)
		if err != nil {
			return "", 0, err
		}
		if mode&fs.ModeSymlink == 0 {
			if !mode.IsDir() && end < len(path) {
				return "", 0, syscall.ENOTDIR
			}
			continue
		}
		if links++; links > 255 {
			return "", 0, errors.New("EvalSymlinks: too many links")
		}
		link, err := s.readlink(dest)
		if err != nil {
			return "", 0, err
		}
		path = link + path[end:]
		if strings.HasPrefix(link, "/") {
			dest, end = "/", 1
		} else {
			if r := strings.LastIndexByte(dest, '/'); r <= 0 {
				dest = "/"
			} else {
				dest = dest[:r]
			}
			end = 0
		}
	}
	dest = filepath.Clean(dest)
	mode, err := s.lstat(dest)
	return dest, mode, err
}

// helperDirs is helperDirs with the go command's path resolved by the
// scan's walk (which notes what the answer depends on).
func (s *dirScan) helperDirs(tool, path string) []string {
	if tool != "go" {
		return toolHelpers[tool]
	}
	resolved, _, err := s.resolve(path)
	if err != nil {
		return nil
	}
	return []string{filepath.Join(filepath.Dir(filepath.Dir(resolved)), "pkg", "tool")}
}

// helperDir is helperDir by the scan's walk: d itself when it is a
// directory, or where it resolves when it is a symlink.
func (s *dirScan) helperDir(d string) (string, bool) {
	if s.deps != nil {
		s.resolve(filepath.Dir(d)) // notes the walk to d's directory
	}
	mode, err := s.lstat(d)
	if err == nil && mode&fs.ModeSymlink != 0 {
		d, mode, err = s.resolve(d)
	}
	return d, err == nil && mode.IsDir()
}

// chain is interpreterChain(path, depth, nil): the file's own interpreter
// read from it (InterpreterOf, cached by the file's version), and the
// rest of the chain, which depends only on the interpreter named and the
// depth, asked once per scan (the few hundred targets in /usr/bin name a
// handful of interpreters).
func (s *dirScan) chain(path string, depth int) ([]string, string) {
	if depth > 2 {
		return nil, ""
	}
	interp, script := InterpreterOf(path)
	if interp == "" {
		return nil, ""
	}
	k := chainKey{interp: interp, depth: depth}
	if !script {
		k.depth = -1 // an ELF's interpreter ends the chain at any depth
	}
	if a, ok := s.chains[k]; ok {
		return a.chain, a.loader
	}
	if s.deps != nil && filepath.IsAbs(interp) {
		// Notes the walk Grantable makes (by the kernel's resolution,
		// which notes nothing), and what it ends on.
		s.resolve(filepath.Clean(interp))
	}
	var a chainAnswer
	if resolved, err := Grantable(interp, nil); err == nil {
		if script {
			rest, loader := s.chain(resolved, depth+1)
			a = chainAnswer{chain: append([]string{resolved}, rest...), loader: loader}
		} else {
			a = chainAnswer{chain: []string{resolved}, loader: resolved}
		}
	}
	s.chains[k] = a
	return a.chain, a.loader
}
