//go:build linux

package linux

import (
	"fmt"
	"os"
	"sync"
)

// Command is what WrapCommand set up beside one command's process, for the
// caller to end once the command's whole tree is gone: the tree's cgroup
// and limits, the egress proxy, and the git checks with the directories
// they pinned before the spawn. The caller keeps one per command (the root
// package's session) and ends it with Release, Egress().Close and
// FinishGit, in that order, or Drop for a command it forgot. Run's [Proc]
// holds one too, and is ended the same way.
type Command struct {
	mu       sync.Mutex
	group    *treeGroup // nil without limits or a kill-only cgroup
	egress   *EgressProc
	git      gitEnd
	released bool
	gitDone  bool
}

// newCommand is the Command of what wrapLinux set up; git checks with
// nothing to check hold nothing (their pins are closed at once).
func newCommand(group *treeGroup, g *EgressProc, git gitEnd) *Command {
	c := &Command{group: group, egress: g, git: git}
	if len(git.commonDirs) == 0 && len(git.spots) == 0 && len(git.repos) == 0 && git.depth == nil {
		git.pins.close()
		c.gitDone = true
	}
	return c
}

// Egress is the command's egress proxy, or nil when it has none (its Config
// names no host, or host names fell back to port rules here).
func (c *Command) Egress() Proxy {
	if c == nil || c.egress == nil {
		return nil
	}
	return c.egress
}

// Release ends the tree's cgroup once: it kills what is left in it,
// removes it, and says which limit ended the program (a limit feature
// name; "" when none is known to have). ps is the program's state after
// Wait (nil when it never ran). A second call, or one for a command without
// a cgroup, returns "" and nil.
func (c *Command) Release(ps *os.ProcessState) (string, error) {
	if c == nil {
		return "", nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.released || c.group == nil {
		c.released = true
		return "", nil
	}
	c.released = true
	t := c.group
	hit := t.exceeded(ps == nil || !ps.Success())
	if hit == "" {
		hit = signalLimit(ps, t.limits)
	}
	if err := t.close(); err != nil {
		return hit, fmt.Errorf("removing the tree's cgroup: %w", err)
	}
	return hit, nil
}

// FinishGit makes the git checks once, through the directories pinned
// before the spawn, and closes them; a second call reports nothing. Its
// findings are meaningful only once no process of the program is left.
func (c *Command) FinishGit() (GitReport, error) {
	if c == nil {
		return GitReport{}, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gitDone {
		return GitReport{}, nil
	}
	c.gitDone = true
	return c.git.check()
}

// Drop releases what the Command holds in the caller without checking
// anything: the egress proxy is closed and the git pins are closed. The
// tree's cgroup is left to the caller's reaper (see internal/cgroup), as
// the tree may still run. For a command its caller forgot.
func (c *Command) Drop() {
	if c == nil {
		return
	}
	if c.egress != nil {
		c.egress.Close()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.gitDone {
		c.gitDone = true
		c.git.pins.close()
	}
}
