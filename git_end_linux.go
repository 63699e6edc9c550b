//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"weak"

	"github.com/openparallax/sandbox/internal/mountns"
)

// gitEnd is what the git checks after a command need from its start (see
// RunResult.Removed and GitCreated, and FinishCommand): what the mount
// layer cannot keep the program from creating, because there is nothing
// yet to mount over.
type gitEnd struct {
	// commonDirs are the commondir paths of the protected git directories
	// that had none at the start (missingCommonDirs; see
	// FeatureGitCommonDir).
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
}

// check runs once the program's tree is gone (nothing of it can make
// either again). It reports each .git that appeared at a spot, leaving it:
// a repository the program made may be the work it was asked to do;
// whoever runs git there next should first look at its hooks and config.
// And it removes each commondir that appeared: git would take hooks and
// config from the directory it names the next time the user runs git in
// the repository, outside the sandbox. git itself never makes one in a
// repository's own git directory (only in a worktree's administrative
// directory, which is not one of these). The path is the git directory's,
// which the program could not rename or replace (a mount point in its
// namespace); the entry is removed whatever it is (file, directory,
// symbolic link: the link, not its target).
//
// Last it reports each repository git enters from a protected one whose
// hooks and config were not protected (enteredRepos): a submodule or an
// embedded repository the program added to the index, or one whose .git
// it pointed elsewhere. It leaves them too.
func (e gitEnd) check() (r gitReport, err error) {
	for _, d := range e.spots {
		g := filepath.Join(d, ".git")
		if _, err := os.Lstat(g); err == nil {
			r.created = append(r.created, g)
		}
	}
	for _, c := range e.commonDirs {
		if _, err := os.Lstat(c); err != nil {
			continue
		}
		if err := os.RemoveAll(c); err != nil {
			return r, fmt.Errorf("removing %s, which the program created (a later git run would take hooks and config from where it points): %w", c, err)
		}
		r.removed = append(r.removed, c)
	}
	entered, err := e.enteredRepos()
	r.created = append(r.created, entered...)
	r.findings = append(r.findings, e.depthFindings()...)
	return r, err
}

// enteredRepos returns, for each protected repository, the .git of each
// gitlink in its index (a submodule, or an embedded repository added as
// one) that is checked out and whose git directory is none the mount layer
// protected. git status in the repository runs git status in each such
// checkout, with that repository's config (core.fsmonitor names a
// program to run) and, for other commands, its hooks: the program could
// write both, since the index, which git add needs, stays writable. An
// index that cannot be read (git would refuse it as well) is an error.
func (e gitEnd) enteredRepos() ([]string, error) {
	protected := map[string]bool{}
	for _, d := range e.protected {
		protected[canonical(d)] = true
	}
	var out []string
	for _, dotgit := range e.repos {
		ws := filepath.Dir(dotgit)
		gitdir := dotgit
		if fi, err := os.Stat(dotgit); err == nil && !fi.IsDir() {
			if gitdir = mountns.GitDirOf(dotgit, os.ReadFile); gitdir == "" {
				continue // protected only when it named one, and read-only since
			}
		}
		links, err := gitlinks(gitdir)
		if err != nil {
			return out, fmt.Errorf("reading the index of %s (git may enter submodules whose hooks and config the program wrote): %w", ws, err)
		}
		for _, p := range links {
			p = filepath.Clean(filepath.FromSlash(p))
			if filepath.IsAbs(p) || p == ".." || strings.HasPrefix(p, ".."+string(filepath.Separator)) {
				continue // git refuses such a path
			}
			g := filepath.Join(ws, p, ".git")
			fi, err := os.Stat(g)
			if err != nil {
				continue // not checked out: git does not enter it
			}
			dir := g
			if !fi.IsDir() {
				if dir = mountns.GitDirOf(g, os.ReadFile); dir == "" {
					continue // not a gitdir file: git does not enter it
				}
			}
			if !protected[canonical(dir)] {
				out = append(out, g)
			}
		}
	}
	return out, nil
}

// canonical is path with its symbolic links resolved, where it can be.
func canonical(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	return filepath.Clean(path)
}

// gitlinks lists the gitlink paths of gitdir's index (and of its shared
// index, for a split one): none when it has no index.
func gitlinks(gitdir string) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(gitdir, "index"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	hashLen := gitHashLen(gitdir)
	paths, shared, err := mountns.GitlinkPaths(b, hashLen)
	if err != nil || shared == "" {
		return paths, err
	}
	b, err = os.ReadFile(filepath.Join(gitdir, shared))
	if err != nil {
		return paths, err
	}
	more, _, err := mountns.GitlinkPaths(b, hashLen)
	return append(paths, more...), err
}

// gitHashLen is the object hash length of the repository of gitdir: 32
// when its config (the common directory's, for a worktree) sets
// extensions.objectFormat to sha256, else 20. That config was protected
// (read-only) while the program ran.
func gitHashLen(gitdir string) int {
	common := mountns.CommonDirOf(gitdir, os.ReadFile)
	if common == "" {
		common = gitdir
	}
	b, _ := os.ReadFile(filepath.Join(common, "config"))
	for line := range strings.SplitSeq(string(b), "\n") {
		if strings.EqualFold(strings.ReplaceAll(strings.TrimSpace(line), " ", ""), "objectformat=sha256") {
			return 32
		}
	}
	return 20
}

// gitEnds maps a command WrapCommand prepared, weakly (a command its
// caller forgets is reclaimed, and its entry with it), to its gitEnd until
// FinishCommand.
var gitEnds sync.Map

func registerGitEnd(cmd *exec.Cmd, e gitEnd) {
	if len(e.commonDirs) == 0 && len(e.spots) == 0 && len(e.repos) == 0 && e.depth == nil {
		return
	}
	key := weak.Make(cmd)
	gitEnds.Store(key, e)
	runtime.AddCleanup(cmd, func(k weak.Pointer[exec.Cmd]) { gitEnds.Delete(k) }, key)
}

// finishGit is FinishCommand's git step on Linux.
func finishGit(cmd *exec.Cmd) (gitReport, error) {
	v, ok := gitEnds.LoadAndDelete(weak.Make(cmd))
	if !ok {
		return gitReport{}, nil
	}
	r, err := v.(gitEnd).check()
	if err != nil {
		err = fmt.Errorf("sandbox: FinishCommand: %w", err)
	}
	return r, err
}
