//go:build linux

package linux

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/openparallax/sandbox/internal/mountns"
	"github.com/openparallax/sandbox/internal/safefs"
	"github.com/openparallax/sandbox/internal/spec"
)

// Bounds of what the git checks read where the program could write (see
// FindingBoundExceeded).
const (
	// maxGitIndex bounds a repository's index (and its shared index). An
	// index holds roughly 70 to 150 bytes per tracked path: the Linux
	// kernel's (about 90,000 paths) is near 10 MB, the largest public
	// monorepositories' (half a million paths and more) reach tens of MB.
	// 256 MiB leaves room for those and still keeps a program from making
	// the caller read without end (a link to /dev/zero is refused
	// anyway, as a special file). An index past it is a finding, and the
	// submodule check it was for is not made.
	maxGitIndex = 256 << 20
	// maxGitFile bounds a .git file, a commondir file: one line naming a
	// directory.
	maxGitFile = 64 << 10
	// maxGitConfig bounds a config read for extensions.objectFormat.
	maxGitConfig = 4 << 20
)

// gitPins are the directories the git checks after a command work in,
// opened before the program started (gitEnd.pin): what the program does
// to the paths meanwhile (a .git re-pointed at another directory, a spot
// renamed and replaced by a link) does not move what the checks read or
// remove. The checks go through these descriptors only, with safefs.
type gitPins struct {
	spots      []pinnedDir // one per gitEnd.spots (dir nil: not pinned)
	commonDirs []pinnedDir // path: the commondir; dir: its git directory
	repos      []repoPin
	// protected are the identities of the git directories whose hooks
	// and config the mount layer kept read-only.
	protected map[fileID]bool
	// findings were made while pinning (a .git that is a FIFO, ...).
	findings []spec.Finding
}

type pinnedDir struct {
	path string
	dir  *safefs.Dir
}

// repoPin is one protected repository: its top (ws), its git directory
// and the object hash length its protected config sets.
type repoPin struct {
	dotgit     string
	ws, gitdir *safefs.Dir
	hashLen    int
	// link is what .git pointed at when it was a symbolic link at the
	// start, else "".
	link string
}

// fileID is a file's identity: device and inode.
type fileID struct{ dev, ino uint64 }

// pin opens what check will need, before the program starts. The paths
// it opens are the caller's own (resolved write paths, the working
// directory's way up) or git directories found and protected before the
// program ran; where one of them is a symbolic link at the start (a .git
// linking to its git directory), it is resolved now, as git would, and
// the checks then hold the directory it named at the start.
func (e *gitEnd) pin() {
	p := &gitPins{protected: map[fileID]bool{}}
	e.pins = p
	for _, s := range e.spots {
		d, err := safefs.Pin(s)
		if err != nil {
			d = nil // not a directory now: no .git can be made there
		}
		p.spots = append(p.spots, pinnedDir{s, d})
	}
	for _, c := range e.commonDirs {
		d, err := safefs.Pin(canonical(filepath.Dir(c)))
		if err != nil {
			continue
		}
		p.commonDirs = append(p.commonDirs, pinnedDir{c, d})
	}
	for _, d := range e.protected {
		if id, ok := statID(d); ok {
			p.protected[id] = true
		}
	}
	for _, dotgit := range e.repos {
		if rp, ok := p.pinRepo(dotgit); ok {
			p.repos = append(p.repos, rp)
		}
	}
}

// pinRepo pins a protected repository's top and git directory, and reads
// its object hash length from its config (protected, read-only, while the
// program runs: reading it now is reading what it will be).
func (p *gitPins) pinRepo(dotgit string) (rp repoPin, ok bool) {
	rp.dotgit = dotgit
	ws, err := safefs.Pin(filepath.Dir(dotgit))
	if err != nil {
		return rp, false
	}
	rp.ws = ws
	fi, err := ws.Lstat(".git")
	if err != nil {
		ws.Close()
		return rp, false
	}
	gitdir := dotgit
	switch {
	case fi.Mode.IsDir():
	case fi.Mode&fs.ModeSymlink != 0:
		rp.link, _ = ws.Readlink(".git")
		gitdir = canonical(dotgit)
	case fi.Mode.IsRegular():
		b, err := ws.ReadFile(".git", maxGitFile)
		if err != nil {
			p.find(dotgit, err, "the git directory it names is not checked after the run")
			ws.Close()
			return rp, false
		}
		if gitdir = mountns.GitDirOf(dotgit, bytesOf(b)); gitdir == "" {
			ws.Close()
			return rp, false
		}
	default:
		ws.Close()
		return rp, false
	}
	if rp.gitdir, err = safefs.Pin(canonical(gitdir)); err != nil {
		ws.Close()
		return rp, false
	}
	rp.hashLen = p.hashLen(gitdir, rp.gitdir)
	return rp, true
}

// hashLen is the object hash length of the repository of gitdir: 32 when
// its config (the common directory's, for a worktree) sets
// extensions.objectFormat to sha256, else 20.
func (p *gitPins) hashLen(path string, gitdir *safefs.Dir) int {
	conf := gitdir
	b, err := gitdir.ReadFile("commondir", maxGitFile)
	if err == nil {
		if common := mountns.CommonDirOf(path, bytesOf(b)); common != "" {
			if conf, err = safefs.Pin(canonical(common)); err != nil {
				return 20
			}
			defer conf.Close()
		}
	}
	b, err = conf.ReadFile("config", maxGitConfig)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			p.find(filepath.Join(conf.Path(), "config"), err, "taken as SHA-1 for reading the index")
		}
		return 20
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if strings.EqualFold(strings.ReplaceAll(strings.TrimSpace(line), " ", ""), "objectformat=sha256") {
			return 32
		}
	}
	return 20
}

// find records err as a finding when it is one of safefs's (a link not
// followed, a special file not opened, a bound hit), and reports whether
// it was; what follows says what was not checked because of it.
func (p *gitPins) find(path string, err error, consequence string) bool {
	f, ok := findingOf(path, err, consequence)
	if ok {
		p.findings = append(p.findings, f)
	}
	return ok
}

// findingOf turns a safefs error into a Finding.
func findingOf(path string, err error, consequence string) (spec.Finding, bool) {
	kind := ""
	switch {
	case errors.Is(err, safefs.ErrSymlink):
		kind = spec.FindingSymlink
	case errors.Is(err, safefs.ErrSpecial) && !errors.Is(err, syscall.ENOTDIR):
		kind = spec.FindingSpecialFile
	case errors.Is(err, safefs.ErrTooLarge), errors.Is(err, safefs.ErrBudget):
		kind = spec.FindingBoundExceeded
	default:
		return spec.Finding{}, false
	}
	inner := err
	if pe, ok := err.(*fs.PathError); ok {
		inner = pe.Err
	}
	return spec.Finding{Kind: kind, Path: path, Detail: fmt.Sprintf("%v; %s", inner, consequence)}, true
}

// close releases every descriptor. Safe to call more than once.
func (p *gitPins) close() {
	if p == nil {
		return
	}
	for _, s := range append(p.spots, p.commonDirs...) {
		s.dir.Close()
	}
	for _, r := range p.repos {
		r.ws.Close()
		r.gitdir.Close()
	}
}

// statID is path's identity, following links (as git does when it uses
// the path): only compared, never read.
func statID(path string) (fileID, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileID{}, false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fileID{}, false
	}
	return fileID{uint64(st.Dev), st.Ino}, true
}

// bytesOf is a readFile that returns b, for mountns's parsers.
func bytesOf(b []byte) func(string) ([]byte, error) {
	return func(string) ([]byte, error) { return b, nil }
}
