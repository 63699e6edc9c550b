package darwin

// The libraries of granted programs: file-map-executable is denied but
// where the profile allows it again, so a program granted as a file (an
// exec path, the wrapped program, an interpreter) whose own dylibs and
// frameworks lie outside the system libraries (a Homebrew program's
// Cellar, @rpath next to the program) gets them as library rules: read and
// map executable, each file as itself, never executed. Read from the
// Mach-O load commands (debug/macho) when the rules are made.

import (
	"debug/macho"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/openparallax/sandbox/internal/spec"
)

// maxLibraries bounds how many libraries are followed for one Config, so
// that a program with a huge dependency tree cannot stall the rules.
const maxLibraries = 256

// machoLoads returns the libraries the file at path imports and its
// LC_RPATH entries, over every architecture of a universal file; nothing
// for a file that is not a regular Mach-O file. It opens with O_NONBLOCK
// (an exec-listed FIFO does not hang) and checks the open file.
func machoLoads(path string) (imports, rpaths []string) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, nil
	}
	var files []*macho.File
	if m, err := macho.NewFile(f); err == nil {
		files = append(files, m)
	} else if ff, err := macho.NewFatFile(f); err == nil {
		for _, a := range ff.Arches {
			files = append(files, a.File)
		}
	}
	for _, m := range files {
		libs, _ := m.ImportedLibraries()
		imports = append(imports, libs...)
		for _, l := range m.Loads {
			if r, ok := l.(*macho.Rpath); ok {
				rpaths = append(rpaths, r.Path)
			}
		}
	}
	return imports, rpaths
}

// dyldPath resolves an install name as dyld would for the image loader of
// the program exe, with the run paths rpaths (the loader's, then the
// program's): the first candidate that exists, or "".
func dyldPath(name, loader, exe string, rpaths []string) string {
	expand := func(p string) string {
		if rest, ok := strings.CutPrefix(p, "@executable_path/"); ok {
			return filepath.Join(filepath.Dir(exe), rest)
		}
		if rest, ok := strings.CutPrefix(p, "@loader_path/"); ok {
			return filepath.Join(filepath.Dir(loader), rest)
		}
		return p
	}
	var cands []string
	if rest, ok := strings.CutPrefix(name, "@rpath/"); ok {
		for _, r := range rpaths {
			cands = append(cands, filepath.Join(expand(r), rest))
		}
	} else {
		cands = append(cands, expand(name))
	}
	for _, c := range cands {
		if !filepath.IsAbs(c) {
			continue
		}
		if fi, err := os.Stat(c); err == nil && fi.Mode().IsRegular() {
			return c
		}
	}
	return ""
}

// isSystemLibrary reports whether p is in the baseline's mapped trees
// (on macOS 11 and later those libraries are in the dyld cache, not on
// disk, anyway).
func isSystemLibrary(p string) bool {
	for _, b := range baseline {
		if strings.Contains(b.Access, "map-executable") && spec.Under(p, b.Path) {
			return true
		}
	}
	return false
}

// libraryRules lists the libraries the Mach-O programs in exes load,
// followed through the libraries' own imports (at most maxLibraries): each
// that exists outside the system libraries, is not covered already
// (covered: an exec grant, or a write path under AllowExecWritePaths), and
// lies outside every write path. One in a write path is refused (the
// program could replace it, and so run its own code in a granted
// program), one line in refused each.
func libraryRules(exes, writeRoots []string, covered func(string) bool) (rules []pathRule, refused []string) {
	type image struct{ path, exe string }
	queue := make([]image, 0, len(exes))
	for _, e := range exes {
		queue = append(queue, image{e, e})
	}
	seen := map[string]bool{}
	exeRpaths := map[string][]string{}
	for n := 0; len(queue) > 0 && n < maxLibraries; n++ {
		img := queue[0]
		queue = queue[1:]
		imports, rpaths := machoLoads(img.path)
		if img.path == img.exe {
			exeRpaths[img.exe] = rpaths
		} else {
			rpaths = append(rpaths, exeRpaths[img.exe]...)
		}
		for _, name := range imports {
			p := dyldPath(name, img.path, img.exe, rpaths)
			if p == "" || isSystemLibrary(p) {
				continue // not there (dyld fails, or it is weak), or the baseline's
			}
			r, err := filepath.EvalSymlinks(p)
			if err != nil {
				continue
			}
			r = canonicalPath(r)
			if seen[r] || covered(r) {
				continue
			}
			seen[r] = true
			if w := writeRootOf(r, writeRoots); w != "" {
				refused = append(refused, r+" (loaded by "+img.path+") is inside the write path "+w)
				continue
			}
			rules = append(rules, pathRule{spec.Path{Given: name, Resolved: r}, accessLibrary, "library of " + img.path})
			queue = append(queue, image{r, img.exe})
		}
	}
	return rules, refused
}

// writeRootOf is the write root p lies in, or "".
func writeRootOf(p string, writeRoots []string) string {
	for _, w := range writeRoots {
		if spec.Under(p, w) {
			return w
		}
	}
	return ""
}
