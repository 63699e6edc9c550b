package main

// --explain's table of named denials: messages whose cause is known from
// their words, wherever they appear in the output (a program below the
// one run, an exit code of 0), checked before the generic classification
// of hints.go. Each row is tested with the real program's own message
// (hintrules_linux_test.go: make, go test, sh as npm runs scripts, python3
// and node loading a native extension, git on a protected repository, tar
// restoring owners, a venv's pip).
//
// A row's hint is "" where the rules forbid one: the grant that would help
// is already given, or none would. It never widens the sandbox beyond the
// one flag named, and never names a grant that would not lift the denial.

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/openparallax/sandbox/internal/spec"
)

// hintRule is one row: the line patterns it owns (the first submatch, when
// there is one, is the path or value the hint needs) and its hint.
type hintRule struct {
	name string
	res  []func() *regexp.Regexp
	hint func(m []string, hc hintContext) string
}

// The rows, in the order they are tried; the first that matches a line
// owns it.
var hintRules = []hintRule{
	{"exec below the program", []func() *regexp.Regexp{
		lazyRE(`^make(?:\[\d+\])?: (\S+): Permission denied`),                                        // make running a recipe's first word
		lazyRE(`fork/exec (\S+): permission denied`),                                                 // Go: os/exec, go test, go run
		lazyRE(`^(?:/\S*/)?(?:sh|bash|dash|ash|zsh)(?:: line \d+|: \d+)?: (\S+): Permission denied`), // a shell, also as npm and make run scripts
		lazyRE(`^(?:env|xargs|nohup|timeout|nice|find): ['‘]?([^'’\s]+)['’]?: Permission denied`),    // tools that exec their argument
	}, execBelowHint},
	{"native extension in a write path", []func() *regexp.Regexp{
		lazyRE(`(\S+?):? failed to map segment from shared object`),
	}, nativeExtHint},
	{"protected git path", []func() *regexp.Regexp{
		lazyRE(`(\S*\.git(?:/\S*?)?)['’"]?: (?:Device or resource busy|Read-only file system)`),
	}, gitProtectedHint},
	{"read-only as the Config asked", []func() *regexp.Regexp{
		lazyRE(`['‘]?([^\s'’]+)['’]?: Read-only file system`),
	}, readOnlyHint},
	{"restoring another owner", []func() *regexp.Regexp{
		lazyRE(`Cannot change ownership to uid (\d+), gid (\d+)`),                     // GNU tar
		lazyRE(`changing (?:ownership|group) of ['‘].*['’]: Operation not permitted`), // chown, chgrp, cp -a
	}, chownHint},
	{"pip refusing the system's Python", []func() *regexp.Regexp{
		lazyRE(`externally-managed-environment`),
	}, pipHint},
}

// ruleHint returns the hint of the first row matching line, and whether
// one matched.
func ruleHint(line string, hc hintContext) (string, bool) {
	for _, r := range hintRules {
		for _, re := range r.res {
			if m := re().FindStringSubmatch(line); m != nil {
				return r.hint(m, hc), true
			}
		}
	}
	return "", false
}

// absIn makes a path from a message absolute: "~/" from home, a relative
// one from the working directory.
func absIn(p string, hc hintContext) string {
	switch {
	case strings.HasPrefix(p, "~/") && hc.home != "":
		p = filepath.Join(hc.home, p[2:])
	case !filepath.IsAbs(p):
		p = filepath.Join(hc.cwd, p)
	}
	return filepath.Clean(p)
}

// inWritePath says whether p (absolute) lies in a write path, and which
// one in words: a --rw path, or the run's private temporary directory
// (os.TempDir()/sandbox-run-*, where `go test` and `go run` build). A
// path that no longer exists is placed by its nearest existing parent; a
// relative path that does not exist counts as in the write paths when the
// working directory is (the program ran it from there or below).
func inWritePath(given, p string, hc hintContext) (string, bool) {
	tmp := os.TempDir()
	if r, err := filepath.EvalSymlinks(tmp); err == nil {
		tmp = r
	}
	if rel, err := filepath.Rel(tmp, p); err == nil && strings.HasPrefix(rel, "sandbox-run-") {
		return "the run's private temporary directory ($TMPDIR, where go test and go run build)", true
	}
	resolved := p
	for d := p; ; d = filepath.Dir(d) {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			resolved = filepath.Join(r, strings.TrimPrefix(p, d))
			break
		}
		if d == filepath.Dir(d) {
			break
		}
	}
	for _, w := range hc.cfg.AllowedWritePaths {
		if r, err := filepath.EvalSymlinks(w); err == nil {
			w = r
		}
		if spec.Under(resolved, w) || spec.Under(p, w) {
			return "a --rw path", true
		}
		if _, err := os.Lstat(p); err != nil && !filepath.IsAbs(given) && spec.Under(hc.cwd, w) {
			return "a --rw path", true
		}
	}
	return "", false
}

// execBelowHint: a program below the one run could not execute a file. A
// file in a write path needs --allow-exec-rw (write paths are mounted
// noexec); elsewhere the exec allowlist decides (pathHint).
func execBelowHint(m []string, hc hintContext) string {
	p := absIn(m[1], hc)
	if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 == 0 {
		// Not a program: the denial was reading it (make: Makefile: ...).
		return pathHint(m[1], "read", hc)
	}
	where, ok := inWritePath(m[1], p, hc)
	if !ok {
		return pathHint(m[1], "exec", hc)
	}
	if hc.cfg.AllowExecWritePaths {
		return "" // already given: not what refused it
	}
	return fmt.Sprintf("executing %s was denied: it is in %s, and write paths are mounted noexec; --allow-exec-rw lets programs built there run", m[1], where)
}

// nativeExtHint: the dynamic linker could not map a shared object as code
// (Python's compiled modules, node's .node addons): in a write path that
// is the noexec mount.
func nativeExtHint(m []string, hc hintContext) string {
	p := absIn(strings.Trim(m[1], `'"‘’`), hc)
	where, ok := inWritePath(m[1], p, hc)
	if !ok || hc.cfg.AllowExecWritePaths {
		return ""
	}
	return fmt.Sprintf("%s is a native extension (a compiled wheel's .so, a node .node addon) in %s: loading it maps it as code, and write paths are mounted noexec; --allow-exec-rw lets it load", m[1], where)
}

// gitProtectedHint: a write to a repository's hooks or config, or a rename
// of its .git, refused by git protection (EROFS, EBUSY).
func gitProtectedHint(m []string, hc hintContext) string {
	if hc.cfg.NoGitProtection {
		return ""
	}
	return fmt.Sprintf("%s is protected: under run the hooks and config of every repository in the write paths are read-only, and its .git cannot be renamed or removed, "+
		"because git runs what hooks and config name outside the sandbox, at the next git command anyone runs there; "+
		"run this git command (git remote, git config, installing a hook) outside the sandbox", m[1])
}

// chownHint: giving a file an owner. Without --allow-chown a change by
// path is refused (EPERM); with it, only to owners the caller may give
// without a capability (its own user and groups): the sandbox drops every
// capability, CAP_CHOWN included, whatever the flags.
func chownHint(m []string, hc hintContext) string {
	own := len(m) == 3 && ownOwner(m[1], m[2])
	switch {
	case len(m) == 3 && !own:
		return fmt.Sprintf("giving files another owner (uid %s, gid %s) needs CAP_CHOWN, which the sandbox drops whatever the flags: extract with tar --no-same-owner (the files are then yours)", m[1], m[2])
	case !hc.cfg.AllowChown:
		return "changing a file's owner by path was denied: --allow-chown grants it (to your own user and groups only: the sandbox keeps no capability)"
	case len(m) == 3:
		return "" // own owner and --allow-chown given: not this rule
	}
	return "changing a file's owner was refused although --allow-chown is given: giving it another user or a group you are not in needs CAP_CHOWN, which the sandbox drops whatever the flags"
}

// ownOwner reports whether uid and gid are the caller's own (its user, and
// its group or a supplementary one): a change the kernel allows without
// CAP_CHOWN.
func ownOwner(uid, gid string) bool {
	u, err1 := strconv.Atoi(uid)
	g, err2 := strconv.Atoi(gid)
	if err1 != nil || err2 != nil || u != os.Geteuid() {
		return false
	}
	groups, _ := os.Getgroups()
	return g == os.Getegid() || slices.Contains(groups, g)
}

// readOnlyHint: a write refused by a read-only mount the Config made: a
// --deny-write path (as asked: said, nothing suggested) or a --mount
// without :rw. Other read-only mounts (the system's) get no hint.
func readOnlyHint(m []string, hc hintContext) string {
	p := absIn(m[1], hc)
	for _, d := range hc.cfg.DenyWritePaths {
		if spec.Under(p, d) {
			return fmt.Sprintf("%s is kept read-only by --deny-write %s, as asked", m[1], d)
		}
	}
	for _, mt := range hc.cfg.Mounts {
		if !mt.Write && spec.Under(p, mt.At) {
			return fmt.Sprintf("%s is under --mount %s:%s, which is read-only: --mount %s:%s:rw lets the program write there", m[1], mt.Path, mt.At, mt.Path, mt.At)
		}
	}
	return ""
}
