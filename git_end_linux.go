//go:build linux

package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"weak"
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
func (e gitEnd) check() (removed, created []string, err error) {
	for _, d := range e.spots {
		g := filepath.Join(d, ".git")
		if _, err := os.Lstat(g); err == nil {
			created = append(created, g)
		}
	}
	for _, c := range e.commonDirs {
		if _, err := os.Lstat(c); err != nil {
			continue
		}
		if err := os.RemoveAll(c); err != nil {
			return removed, created, fmt.Errorf("removing %s, which the program created (a later git run would take hooks and config from where it points): %w", c, err)
		}
		removed = append(removed, c)
	}
	return removed, created, nil
}

// gitEnds maps a command WrapCommand prepared, weakly (a command its
// caller forgets is reclaimed, and its entry with it), to its gitEnd until
// FinishCommand.
var gitEnds sync.Map

func registerGitEnd(cmd *exec.Cmd, e gitEnd) {
	if len(e.commonDirs) == 0 && len(e.spots) == 0 {
		return
	}
	key := weak.Make(cmd)
	gitEnds.Store(key, e)
	runtime.AddCleanup(cmd, func(k weak.Pointer[exec.Cmd]) { gitEnds.Delete(k) }, key)
}

// finishGit is FinishCommand's git step on Linux.
func finishGit(cmd *exec.Cmd) (removed, created []string, err error) {
	v, ok := gitEnds.LoadAndDelete(weak.Make(cmd))
	if !ok {
		return nil, nil, nil
	}
	removed, created, err = v.(gitEnd).check()
	if err != nil {
		err = fmt.Errorf("sandbox: FinishCommand: %w", err)
	}
	return removed, created, err
}
