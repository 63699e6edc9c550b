//go:build linux

package linux

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/openparallax/sandbox/internal/mountns"
	"github.com/openparallax/sandbox/internal/safefs"
	"github.com/openparallax/sandbox/internal/spec"
)

// gitEnd is what the git checks after a command need from its start (see
// RunResult.Removed and GitCreated, and FinishCommand): what the mount
// layer cannot keep the program from creating, because there is nothing
// yet to mount over.
type gitEnd struct {
	// commonDirs are the commondir, hooks and config paths of the
	// protected git directories that had none at the start
	// (missingGitEntries; see FeatureGitCommonDir).
	commonDirs []string
	// spots are where git would find a repository for a write path's top
	// or the working directory, had they a .git, and had none at the
	// start (see gitSpots).
	spots []string
	// repos are the .git entries of the protected repositories, and
	// protected the git directories whose hooks and config the mount layer
	// kept read-only (theirs, and their submodules'): a gitlink in a
	// repository's index whose checkout has a .git naming any other git
	// directory is one git enters with hooks and config the program could
	// write (see enteredRepos).
	repos, protected []string
	// depth is what the walk for repositories at any depth found before
	// the command (see depthFindings), or nil.
	depth *gitDepthEnd
	// pins are the directories of the above, opened before the program
	// started (pin), through which check reads and removes.
	pins *gitPins
}

// check runs once the program's tree is gone (nothing of it can make
// either again), and only through the descriptors pin opened before the
// program started (gitPins): nothing is followed, opened as a special
// file or read past a bound; what is met instead is a Finding. It reports
// each .git that appeared at a spot, leaving it: a repository the program
// made may be the work it was asked to do; whoever runs git there next
// should first look at its hooks and config. And it removes each
// commondir that appeared: git would take hooks and config from the
// directory it names the next time the user runs git in the repository,
// outside the sandbox. git itself never makes one in a repository's own
// git directory (only in a worktree's administrative directory, which is
// not one of these). So too a hooks directory or a config file that
// appeared where the git directory had none (nothing could be mounted
// read-only there): git would run those hooks, or what that config names,
// at the next command. Each is removed by unlinkat beneath the git directory
// as it was when the program started, whatever the entry is (file,
// directory, symbolic link: the link, not its target), and never in a
// directory a .git link points at after the run.
//
// Last it reports each repository git enters from a protected one whose
// hooks and config were not protected (enteredRepos): a submodule or an
// embedded repository the program added to the index, or one whose .git
// it pointed elsewhere. It leaves them too. It closes the descriptors.
func (e gitEnd) check() (r GitReport, err error) {
	p := e.pins
	if p == nil {
		// Not pinned before the spawn (a gitEnd made elsewhere): pin
		// now, which holds what is there after the run.
		e.pin()
		p = e.pins
	}
	defer p.close()
	r.Findings = append(r.Findings, p.findings...)
	for _, s := range p.spots {
		if s.dir == nil {
			continue
		}
		if _, err := s.dir.Lstat(".git"); err == nil {
			r.Created = append(r.Created, filepath.Join(s.path, ".git"))
		}
	}
	var errs []error
	for _, c := range p.commonDirs {
		name := filepath.Base(c.path)
		if _, err := c.dir.Lstat(name); err != nil {
			continue
		}
		path := filepath.Join(c.dir.Path(), name)
		if err := c.dir.RemoveAll(name); err != nil {
			// Left in place: the caller must know before anyone runs git
			// there. The other checks still run.
			errs = append(errs, fmt.Errorf("removing %s, which the program created (%s): %w", path, CreatedGitEntryRisk(name), err))
			continue
		}
		r.Removed = append(r.Removed, path)
	}
	for _, rp := range p.repos {
		r.Findings = append(r.Findings, rp.relinked()...)
	}
	entered, found, err := p.enteredRepos()
	r.Created = append(r.Created, entered...)
	r.Findings = append(r.Findings, e.depthFindings()...)
	r.Findings = append(r.Findings, found...)
	return r, errors.Join(append(errs, err)...)
}

// relinked is a finding when .git was a symbolic link at the start and
// points elsewhere now, or is no link any more: git follows it, to a
// directory whose hooks and config were not the ones protected. Nothing
// was read or removed through it.
func (rp repoPin) relinked() []spec.Finding {
	if rp.link == "" {
		return nil
	}
	now, err := rp.ws.Readlink(".git")
	if err == nil && now == rp.link {
		return nil
	}
	what := "is no symbolic link any more"
	if err == nil {
		what = "points at " + now
	}
	return []spec.Finding{{Kind: spec.FindingSymlink, Path: rp.dotgit,
		Detail: "was a symbolic link to " + rp.link + " when the program started and " + what + " after it: git follows it, " +
			"so the hooks and config git uses there are not the ones the sandbox protected; the checks after the run used the git directory of the start, " +
			"and nothing was read or removed through the link"}}
}

// enteredRepos returns, for each protected repository, the .git of each
// gitlink in its index (a submodule, or an embedded repository added as
// one) that is checked out and whose git directory is none the mount layer
// protected. git status in the repository runs git status in each such
// checkout, with that repository's config (core.fsmonitor names a
// program to run) and, for other commands, its hooks: the program could
// write both, since the index, which git add needs, stays writable.
//
// The index is read through the git directory pinned at the start, at
// most maxGitIndex bytes; each checkout's .git through the repository's
// top, pinned too, never through a link in the gitlink's path (one there
// is a finding). A .git that is itself a link, or a file naming a git
// directory, is compared with the protected ones by identity (stat,
// following as git does; nothing is read there). An index that cannot be
// read for another reason (git would refuse it as well) is an error.
func (p *gitPins) enteredRepos() (out []string, found []spec.Finding, err error) {
	for _, rp := range p.repos {
		index := filepath.Join(rp.gitdir.Path(), "index")
		links, err := gitlinks(rp.gitdir, rp.hashLen, maxGitIndex)
		if f, ok := findingOf(index, err, "the submodules and embedded repositories git enters from "+filepath.Dir(rp.dotgit)+" were not checked"); ok {
			found = append(found, f)
			continue
		}
		if err != nil {
			return out, found, fmt.Errorf("reading the index of %s (git may enter submodules whose hooks and config the program wrote): %w", filepath.Dir(rp.dotgit), err)
		}
		for _, l := range links {
			l = filepath.Clean(filepath.FromSlash(l))
			if filepath.IsAbs(l) || l == ".." || strings.HasPrefix(l, ".."+string(filepath.Separator)) {
				continue // git refuses such a path
			}
			g, f, unprotected := p.enters(rp, l)
			found = append(found, f...)
			if unprotected {
				out = append(out, g)
			}
		}
	}
	return out, found, nil
}

// enters looks at the .git of gitlink l of rp: whether git enters it with
// hooks and config the mount layer did not protect.
func (p *gitPins) enters(rp repoPin, l string) (dotgit string, found []spec.Finding, unprotected bool) {
	rel := filepath.ToSlash(filepath.Join(l, ".git"))
	dotgit = filepath.Join(rp.ws.Path(), l, ".git")
	fi, err := rp.ws.Lstat(rel)
	if err != nil {
		if f, ok := findingOf(dotgit, err, "git may enter it; whether its hooks and config were protected was not checked"); ok {
			found = append(found, f)
		}
		return dotgit, found, false // not checked out: git does not enter it
	}
	target := dotgit
	switch {
	case fi.Mode.IsDir():
		return dotgit, nil, !p.protected[fileID{fi.Dev, fi.Ino}]
	case fi.Mode&fs.ModeSymlink != 0:
	case fi.Mode.IsRegular():
		b, err := rp.ws.ReadFile(rel, maxGitFile)
		if f, ok := findingOf(dotgit, err, "git may enter the git directory it names; whether that was protected was not checked"); ok {
			return dotgit, []spec.Finding{f}, false
		}
		if err != nil {
			return dotgit, nil, false
		}
		if target = mountns.GitDirOf(dotgit, bytesOf(b)); target == "" {
			return dotgit, nil, false // not a gitdir file: git does not enter it
		}
	default:
		f := spec.Finding{Kind: spec.FindingSpecialFile, Path: dotgit, Detail: fi.Mode.Type().String() +
			": not opened; git opening it to enter the submodule may hang or fail"}
		return dotgit, []spec.Finding{f}, false
	}
	id, ok := statID(target)
	if !ok {
		return dotgit, nil, false // names nothing: git does not enter it
	}
	return dotgit, nil, !p.protected[id]
}

// canonical is path with its symbolic links resolved, where it can be.
func canonical(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	return filepath.Clean(path)
}

// gitlinks lists the gitlink paths of gitdir's index (and of its shared
// index, for a split one), each read at most max bytes (maxGitIndex):
// none when it has no index.
func gitlinks(gitdir *safefs.Dir, hashLen int, max int64) ([]string, error) {
	b, err := gitdir.ReadFile("index", max)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	paths, shared, err := mountns.GitlinkPaths(b, hashLen)
	if err != nil || shared == "" {
		return paths, err
	}
	b, err = gitdir.ReadFile(shared, max)
	if err != nil {
		return paths, err
	}
	more, _, err := mountns.GitlinkPaths(b, hashLen)
	return append(paths, more...), err
}
