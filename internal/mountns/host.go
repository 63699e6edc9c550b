package mountns

import (
	"os"
	"path/filepath"

	"github.com/openparallax/sandbox/internal/safefs"
)

// HostLookup is Spec.Lookup on this machine: stat, following links.
func HostLookup(path string) Kind {
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return Missing
	case fi.IsDir():
		return Dir
	default:
		return File
	}
}

// HostResolve is Spec.Resolve on this machine.
func HostResolve(path string) string {
	r, err := filepath.EvalSymlinks(path)
	if err != nil {
		return ""
	}
	return r
}

// The host callbacks GitProtected is given (readFile, readDir) look where
// the program could have written before this spawn (a write path's .git,
// a git directory's modules), so they follow the safefs rule, decided per
// call:
//
//   - HostReadFile reads a .git file or a commondir file. git follows a
//     symbolic link at either (it opens the path), and the protection must
//     cover the git directory git will use, so the link is followed; what
//     is read only adds read-only mounts in the program's namespace,
//     changing and revealing nothing on the host. But only a regular file
//     is opened (O_NONBLOCK, fstat: a FIFO planted as .git makes no spawn
//     wait), and at most MaxGitFile bytes are read (a .git linked to
//     /dev/zero, or a huge one, is refused).
//   - HostReadDir lists the subdirectories of a git directory's modules
//     tree: only real directories, never a link to one (git never makes
//     one there, and a tree of links to "." is an endless walk), at most
//     MaxReadDir names, read without following dir's own last component.
//   - HostLookup is a stat, which follows links (git does) and opens
//     nothing: it cannot wait on a FIFO or read a device.
//
// What these refuse is not protected (a .git that is a FIFO names no git
// directory); a submodule's git directory left out is reported after the
// run, when git would enter it (the sandbox package's GitCreated).

// Bounds of the host callbacks: the size of a .git or commondir file (one
// line naming a directory), and the names listed in one directory.
const (
	MaxGitFile = 64 << 10
	MaxReadDir = 4096
)

// HostReadFile reads a .git or commondir file on this machine (see
// above): a regular file, following links, at most MaxGitFile bytes.
func HostReadFile(path string) ([]byte, error) {
	return safefs.ReadRegularFile(path, MaxGitFile)
}

// HostReadDir lists the names of the subdirectories in dir on this
// machine, not links to one (see above), at most MaxReadDir (none if it
// cannot be read, or has more).
func HostReadDir(dir string) []string {
	d, err := safefs.Pin(dir)
	if err != nil {
		return nil
	}
	defer d.Close()
	ents, err := d.ReadDir("", MaxReadDir)
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range ents {
		if e.Type.IsDir() {
			names = append(names, e.Name)
		}
	}
	return names
}
