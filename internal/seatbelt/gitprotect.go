package seatbelt

// Git protection: a repository's hooks and config run outside the sandbox
// the next time the user runs git there, so a program that may write the
// workspace must not write them. SBPL applies the last rule that matches,
// so these denies come after every allow and win inside WritePaths; they
// are regular expressions, fixed text of this package, so they hold at any
// depth and for repositories the program creates or moves too.

import (
	"path"
	"strconv"
	"strings"
)

// ci spells an ASCII word as a case-insensitive regular expression
// ("git" becomes "[gG][iI][tT]"): macOS volumes are case-insensitive by
// default, so .GIT/HOOKS is .git/hooks to git.
func ci(word string) string {
	var sb strings.Builder
	for _, c := range word {
		switch {
		case c >= 'a' && c <= 'z':
			sb.WriteString("[" + string(c) + string(c-'a'+'A') + "]")
		case c == '.':
			sb.WriteString("[.]")
		default:
			sb.WriteRune(c)
		}
	}
	return sb.String()
}

// gitDirName matches the last component of a git directory's path: .git,
// or NAME.git, the usual name of a bare repository.
var gitDirName = "/[^/]*" + ci(".git")

// gitInside is what may follow a git directory's path before the
// protected names: nothing, a submodule's git directory
// (modules/NAME/, where NAME may hold slashes, nested submodules
// included) or a linked worktree's (worktrees/NAME/).
var gitInside = "/((" + ci("modules") + "/.+|" + ci("worktrees") + "/[^/]+)/)?"

// GitProtectRegexes are the paths whose writing Policy.GitProtection
// denies, as the regular expressions the profile holds:
//
//   - hooks/ and everything in it, config, config.worktree and commondir
//     of a git directory (.git or NAME.git), of its submodules' git
//     directories (.git/modules/NAME) and of its linked worktrees' (.git/
//     worktrees/NAME): hooks run, and config names programs (core.fsmonitor,
//     core.hooksPath, core.sshCommand, aliases, filters) that git runs;
//     commondir points git at another directory for hooks and config;
//   - the .git (or NAME.git) entry itself: it can be neither created,
//     written (a "gitdir:" file), renamed nor removed, so no directory the
//     program filled with hooks can be renamed into place, and no gitdir:
//     file can point git at one.
//
// What is inside a git directory but those stays writable: index, objects,
// refs, HEAD, logs, so add, commit, branch, merge and fetch work. A branch
// or tag whose name ends in a protected name (refs/heads/config) inside a
// submodule's or worktree's git directory is refused too. A repository
// cannot be created (git init and git clone write config): set
// Config.NoGitProtection for that.
var GitProtectRegexes = []string{
	"^.*" + gitDirName + gitInside + "(" + ci("hooks") + "(/.*)?|" + ci("config") + "|" + ci("config.worktree") + "|" + ci("commondir") + ")$",
	"^.*" + gitDirName + "$",
}

// writeGitProtection writes the git denies of p, or says why there are
// none.
func writeGitProtection(b *builder, p Policy) {
	if !p.GitProtection {
		b.comment("none: GitProtection is off")
		return
	}
	if len(p.WritePaths) == 0 {
		b.comment("GitProtection: no WritePaths, so nothing is writable to protect (the denies below hold anyway)")
	}
	var sb strings.Builder
	for _, re := range GitProtectRegexes {
		sb.WriteString(" (regex " + b.regex(re) + ")")
	}
	for _, f := range gitDirFiles(p.GitDirs) {
		sb.WriteString(" " + f.filter())
	}
	what := "GitProtection: hooks, config, config.worktree and commondir of every git directory (.git, NAME.git, " +
		"their modules/NAME and worktrees/NAME), and the .git entry itself: git runs what they name outside the sandbox"
	if len(p.GitDirs) > 0 {
		what += "; the same in GitDirs (parameters G*), and each of them itself"
	}
	b.rule(what,
		"(deny file-write*"+sb.String()+")")
}

// gitDirFile is one path of a GitDirs entry that the deny names, as the
// parameter that carries it.
type gitDirFile struct {
	param, path string
	subpath     bool
}

func (f gitDirFile) filter() string {
	if f.subpath {
		return "(subpath " + paramRef(f.param) + ")"
	}
	return "(literal " + paramRef(f.param) + ")"
}

// gitDirFiles lists, for each distinct git directory in dirs, the paths
// the deny names: the directory itself, hooks (a subpath), config,
// config.worktree and commondir; parameters G0, G1, ... in that order.
func gitDirFiles(dirs []string) []gitDirFile {
	var out []gitDirFile
	seen := map[string]bool{}
	for _, d := range dirs {
		if seen[d] {
			continue
		}
		seen[d] = true
		for _, f := range []struct {
			name    string
			subpath bool
		}{{"", false}, {"hooks", true}, {"config", false}, {"config.worktree", false}, {"commondir", false}} {
			out = append(out, gitDirFile{param: "G" + strconv.Itoa(len(out)), path: path.Join(d, f.name), subpath: f.subpath})
		}
	}
	return out
}
