package mountns

import (
	"path"
	"strings"
)

// GitProtected returns, for a write path ws that holds a git repository at
// its top, the paths the default protection keeps read-only (protect: the
// git directory's hooks and config, code that git runs or that names
// programs git runs the next time the user runs git outside the sandbox),
// and the .git entry to pin (so that it can be neither renamed nor removed
// and replaced by a fresh one with writable hooks).
//
// For a worktree or a submodule, .git is a file "gitdir: DIR"; the hooks
// and config that git uses are then those of DIR and of its common
// directory (DIR/commondir), which may lie outside ws: they are returned
// too, and protected where they lie inside a write path; and the .git
// file itself is protected (read-only), as it names DIR.
//
// A commondir that exists in a git directory (a worktree's points at the
// main repository's) is protected too: rewritten, it would point git at
// hooks and config of the program's choosing. What this cannot cover: a
// file the sandbox creates in a git directory that stays writable. The one
// that matters is a new commondir, which git reads in every repository and
// which points it at another directory for hooks and config: a mount
// cannot keep a new file out of a writable directory. The sandbox package
// reports it (git_commondir), and Run removes one that appeared once the
// program's tree is gone.
//
// The git directories of submodules (DIR/modules/NAME, nested as deep as
// submodules go) are git directories git runs commands in too: a git
// status in the repository runs git status in each checked-out submodule,
// with the submodule's config (core.fsmonitor names a program). Their
// hooks and config are protected as the repository's are. A submodule, or
// an embedded repository, that the program adds (a gitlink in the index,
// which stays writable) has a git directory that did not exist to mount
// over; the sandbox package reports it after the run (GitlinkPaths).
//
// Everything else in the git directory (objects, refs, the index, HEAD,
// logs) stays writable, so add, commit, branch, merge and fetch work.
// lookup and readFile are the host's stat and read, readDir lists the
// subdirectories of a directory: on the host HostLookup, HostReadFile and
// HostReadDir, which neither wait on a FIFO nor read without a bound nor
// walk links in the modules tree (see there for what each follows, and
// why).
func GitProtected(ws string, lookup func(string) Kind, readFile func(string) ([]byte, error), readDir func(string) []string) (protect, pin []string) {
	dotgit := path.Join(ws, ".git")
	var gitdirs []string
	switch lookup(dotgit) {
	case Dir:
		gitdirs = append(gitdirs, dotgit)
	case File:
		dir := gitdirOf(dotgit, readFile)
		if dir == "" {
			return nil, nil
		}
		// The file itself names the git directory: rewritten, it would
		// point git at one the sandbox made, hooks and all.
		protect = append(protect, dotgit)
		gitdirs = append(gitdirs, dir)
		if common := CommonDirOf(dir, readFile); common != "" {
			gitdirs = append(gitdirs, common)
		}
	default:
		return nil, nil
	}
	return append(protect, gitDirsProtected(gitdirs, lookup, readDir)...), []string{dotgit}
}

// gitDirsProtected returns what the protection keeps read-only in each of
// gitdirs and in their submodules' git directories: hooks, config, and
// commondir where one exists.
func gitDirsProtected(gitdirs []string, lookup func(string) Kind, readDir func(string) []string) []string {
	var subs, protect []string
	for _, d := range gitdirs {
		subs = append(subs, submoduleGitDirs(d, lookup, readDir)...)
	}
	for _, d := range append(gitdirs, subs...) {
		protect = append(protect, path.Join(d, "hooks"), path.Join(d, "config"))
		if c := path.Join(d, "commondir"); lookup(c) != Missing {
			protect = append(protect, c)
		}
	}
	return protect
}

// CommonDirOf is the common directory gitdir's commondir file names
// (relative to gitdir), or "" if it has none.
func CommonDirOf(gitdir string, readFile func(string) ([]byte, error)) string {
	b, err := readFile(path.Join(gitdir, "commondir"))
	if err != nil {
		return ""
	}
	common := strings.TrimSpace(string(b))
	if common == "" {
		return ""
	}
	if !path.IsAbs(common) {
		common = path.Join(gitdir, common)
	}
	return path.Clean(common)
}

// GitDirOf is the git directory a "gitdir: DIR" file names (DIR relative
// to the file's directory), or "" if file is not one.
func GitDirOf(file string, readFile func(string) ([]byte, error)) string {
	return gitdirOf(file, readFile)
}

// gitdirOf reads a "gitdir: DIR" file; DIR relative to the file's directory.
func gitdirOf(file string, readFile func(string) ([]byte, error)) string {
	b, err := readFile(file)
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(string(b), "\n")
	dir, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
	dir = strings.TrimSpace(dir)
	if !ok || dir == "" {
		return ""
	}
	if !path.IsAbs(dir) {
		dir = path.Join(path.Dir(file), dir)
	}
	return path.Clean(dir)
}

// Bounds of the walk for submodules' git directories: how deep a
// submodule's name may nest, how many git directories the walk may return
// (each costs two mounts, within the layer's MaxMountSlots), and how many
// directories it may look at in all (the program could have filled the
// modules tree before this spawn: the walk's cost stays bounded whatever
// is there).
const (
	maxSubmoduleDepth  = 16
	maxSubmoduleDirs   = 256
	maxSubmoduleVisits = 4096
)

// submoduleGitDirs returns the git directories below gitdir/modules: each
// directory there that holds a HEAD file (a submodule's name may contain
// slashes, so the walk goes on down where there is none), and those of
// their own submodules. readDir lists the subdirectories of a directory
// (HostReadDir: real ones, not links to one). The walk looks at no path
// twice and at most maxSubmoduleVisits directories: past that, the
// submodules not reached are not protected, and the sandbox package
// reports one git enters after the run (GitCreated).
func submoduleGitDirs(gitdir string, lookup func(string) Kind, readDir func(string) []string) []string {
	var out []string
	type dir struct {
		path  string
		depth int
	}
	visited := map[string]bool{}
	stack := []dir{{path.Join(gitdir, "modules"), 0}}
	for len(stack) > 0 && len(out) < maxSubmoduleDirs && len(visited) < maxSubmoduleVisits {
		d := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if d.depth > maxSubmoduleDepth || visited[d.path] {
			continue
		}
		visited[d.path] = true
		if lookup(d.path) != Dir {
			continue
		}
		if lookup(path.Join(d.path, "HEAD")) == File {
			out = append(out, d.path)
			stack = append(stack, dir{path.Join(d.path, "modules"), d.depth + 1})
			continue
		}
		for _, name := range readDir(d.path) {
			stack = append(stack, dir{path.Join(d.path, name), d.depth + 1})
		}
	}
	return out
}
