package darwin

// The Plan's entries for git protection, the toolchain switches
// (executable write paths, Python's semaphores) and the user-lookup
// channel on macOS.

import (
	"strconv"
	"strings"

	"github.com/openparallax/sandbox/internal/seatbelt"
	"github.com/openparallax/sandbox/internal/spec"
)

// userLookupDetail is the user_lookup_service entry: the one channel every
// profile grants.
const userLookupDetail = "channel: com.apple.system.opendirectoryd.libinfo is always granted, for user and group lookups " +
	"(getpwuid, getgrgid: shells, git, ssh, ls -l, Python's pwd module); it answers the names and attributes of every user and group " +
	"of this Mac, and on a Mac bound to a directory server (LDAP, Active Directory) a lookup of a name the process makes up reaches that server"

// gitFeatures reports the git protection of the profile for rc (the
// fixed-text denies of seatbelt.GitProtectRegexes), when there is a write
// path and Config.NoGitProtection is not set. Unlike Linux, where mounts
// protect the repositories found when the sandbox starts, the denies are
// path patterns: they hold at any depth, for repositories the program
// creates or moves too, so the after-run report (GitCreated, Findings) is
// not made on macOS.
func gitFeatures(f addFeature, rc *spec.Resolved) {
	if rc.Config.NoGitProtection || len(rc.Write) == 0 {
		return
	}
	var roots []string
	for _, w := range rc.Write {
		roots = append(roots, canonicalPath(w.Resolved))
	}
	named := ""
	dirs, unusable := gitDirsAt(roots)
	if len(dirs) > 0 {
		named = "; the same for " + strings.Join(dirs, ", ") + " (named by a .git file at the top of a write path, or its commondir, " +
			"or a write path that is a bare repository), which can be neither written, renamed nor removed itself"
	}
	f(spec.FeatureGitProtect, true, "Seatbelt, after the write grants (the last matching rule wins): in "+strings.Join(roots, ", ")+
		", at any depth, writing hooks/, config, config.worktree and commondir of every git directory named .git or NAME.git, "+
		"of its submodules' (modules/NAME) and its linked worktrees' (worktrees/NAME) is denied (EPERM), upper or lower case alike, "+
		"and so are creating, writing, renaming and removing a .git or NAME.git entry itself (no directory of hooks renamed into place, no gitdir: file): "+
		"for repositories that exist, and for those the program creates or moves"+named+"; the rest of each repository stays writable (add, commit, branch, fetch). "+
		"So no repository can be created there, and no tracking configuration written (git init, git clone, git submodule update --init, "+
		"git worktree add, git checkout -b NAME REMOTE/NAME and git push -u fail writing config), as with Linux's read-only config: set no_git_protection for that. "+
		"Not protected: a git directory of another name deeper in the write paths (git --separate-git-dir, a bare repository not named *.git), whose hooks and config stay writable; "+
		"on an HFS+ volume, a .git spelled with ignorable Unicode characters. Run's GitCreated and Findings are not made on macOS "+
		"(the workspace is not read after the run): not available there", "")
	if len(unusable) > 0 {
		f(spec.FeatureGitProtect, false, "not protected: the git directories "+quoteAll(unusable)+" (named by a .git file at the top of a write path, "+
			"or its commondir, or a write path that is one) cannot be named in a Seatbelt profile (a path too long, or a control character): "+
			"their hooks and config stay writable", "move the repository, or grant it read-only")
	}
	f(spec.FeatureGitCommonDir, true, "Seatbelt: creating or writing commondir in any git directory (.git, NAME.git, modules/NAME, worktrees/NAME) "+
		"in the write paths is denied by the same rule", "")
}

// toolchainFeatures reports Config.AllowExecWritePaths and
// Config.AllowSharedMemory as the profile grants them.
func toolchainFeatures(f addFeature, rc *spec.Resolved) {
	if rc.Config.AllowExecWritePaths {
		f(spec.FeatureExecWrites, true, "granted: Seatbelt process-exec and file-map-executable in every write path (allow_exec_write_paths): "+
			"whatever the program writes there it can run, and load as code", "")
	}
	if rc.Config.AllowSharedMemory {
		f(spec.FeatureSharedMem, false, "Seatbelt: POSIX named semaphores whose names start as Python's multiprocessing makes them ("+
			strings.Join(seatbelt.PythonSemaphorePrefixes, ", ")+") are granted, and they are the host's, not private: the program can open, post, wait on "+
			"and unlink those of every process outside the sandbox by name; POSIX shared memory (shm_open) and other semaphores are not granted",
			"grant it only to programs that need Python's multiprocessing")
	}
}

// quoteAll is paths quoted as Go strings, comma-separated: a path a
// profile cannot name may hold control characters.
func quoteAll(paths []string) string {
	q := make([]string, len(paths))
	for i, p := range paths {
		q[i] = strconv.Quote(p)
	}
	return strings.Join(q, ", ")
}
