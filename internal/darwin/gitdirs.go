package darwin

// Git directories the profile's regular expressions miss: the git
// directory a ".git" file at the top of a write path names ("gitdir:", a
// linked worktree's or one made with --separate-git-dir), its common
// directory, and a write path that is itself a bare repository, when they
// lie in a write path and are not named .git or NAME.git. They go into
// seatbelt.Policy.GitDirs. Read before the program starts, through the
// host facts (no link followed at the last step, at most maxGitFile
// bytes), on the trusted side.

import (
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/openparallax/sandbox/internal/seatbelt"
	"github.com/openparallax/sandbox/internal/spec"
)

// maxGitFile bounds what is read of a ".git" or commondir file.
const maxGitFile = 4096

// readSmall reads at most maxGitFile bytes of a regular file that is not a
// symlink.
func readSmall(p string) (string, error) {
	fi, err := os.Lstat(p)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", os.ErrInvalid
	}
	f, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxGitFile))
	return string(b), err
}

// gitCovered matches a git directory's config path that the profile's
// regular expressions already protect. Compiled on first use: the package
// is linked into every program of the module, on every GOOS, and a
// package-level MustCompile would cost each of them its start-up time.
var gitCovered = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(seatbelt.GitProtectRegexes[0]) })

// gitDirsAt lists the git directories at the top of writeRoots (resolved,
// canonical) that the regular expressions miss and that lie inside a write
// root (one outside is not writable anyway); unusable lists those a
// profile cannot name (a file in them would pass PATH_MAX, or a control
// character), which stay unprotected and the plan names.
func gitDirsAt(writeRoots []string) (out, unusable []string) {
	add := func(dir string) string {
		r, err := host.evalSymlinks(dir)
		if err != nil || !filepath.IsAbs(r) {
			return ""
		}
		r = canonicalPath(r)
		inside := false
		for _, w := range writeRoots {
			inside = inside || spec.Under(r, w)
		}
		if !inside || gitCovered().MatchString(r+"/config") {
			return r
		}
		if slices.Contains(out, r) || slices.Contains(unusable, r) {
			return r
		}
		if _, err := seatbelt.Generate(seatbelt.Policy{GitProtection: true, GitDirs: []string{r}}); err != nil {
			unusable = append(unusable, r)
			return ""
		}
		out = append(out, r)
		return r
	}
	for _, w := range writeRoots {
		var dirs []string
		if s, err := host.readSmall(filepath.Join(w, ".git")); err == nil {
			if d := pointer(s, "gitdir:", w); d != "" {
				dirs = append(dirs, d)
			}
		}
		if isGitDir(w) {
			dirs = append(dirs, w)
		}
		for _, d := range dirs {
			r := add(d)
			if r == "" {
				continue
			}
			if s, err := host.readSmall(filepath.Join(r, "commondir")); err == nil {
				if c := pointer(s, "", r); c != "" {
					add(c)
				}
			}
		}
	}
	return out, unusable
}

// pointer is the path a ".git" file (prefix "gitdir:") or a commondir file
// (no prefix) names, relative to base when relative; "" when s is not one.
func pointer(s, prefix, base string) string {
	line, _, _ := strings.Cut(s, "\n")
	p, ok := strings.CutPrefix(line, prefix)
	if !ok {
		return ""
	}
	p = strings.TrimSpace(p)
	if p == "" {
		return ""
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	return filepath.Clean(p)
}

// isGitDir reports whether dir looks like a git directory as git itself
// tells one: HEAD, objects/ and refs/.
func isGitDir(dir string) bool {
	_, err := host.readSmall(filepath.Join(dir, "HEAD"))
	return err == nil && host.isDir(filepath.Join(dir, "objects")) && host.isDir(filepath.Join(dir, "refs"))
}
