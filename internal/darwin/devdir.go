package darwin

// The active developer directory, which the xcrun shims (/usr/bin/git,
// python3, make, clang, ...) execute their tools from: the Command Line
// Tools, which the profile grants as fixed text, or a directory that
// xcode-select or DEVELOPER_DIR names (Xcode.app), which it grants only as
// found here. Pure but for the host facts in [host], which tests replace.

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/openparallax/sandbox/internal/seatbelt"
	"github.com/openparallax/sandbox/internal/spec"
)

// Where xcode-select keeps its choice, and the Command Line Tools.
const (
	xcodeSelectLink  = "/private/var/db/xcode_select_link"
	commandLineTools = "/Library/Developer/CommandLineTools"
)

// host are the facts of this machine the developer directory is read
// from: the caller's environment, the xcode-select link, symlinks, and
// whether a path is a directory.
var host = struct {
	lookupEnv    func(string) (string, bool)
	readlink     func(string) (string, error)
	evalSymlinks func(string) (string, error)
	isDir        func(string) bool
	readSmall    func(string) (string, error) // a regular file's first bytes, no link followed (gitdirs.go)
}{
	readSmall:    readSmall,
	lookupEnv:    os.LookupEnv,
	readlink:     os.Readlink,
	evalSymlinks: filepath.EvalSymlinks,
	isDir: func(p string) bool {
		fi, err := os.Stat(p)
		return err == nil && fi.IsDir()
	},
}

// devDir is the active developer directory as the xcrun shims would find
// it for rc: granted is the directory to grant (resolved, canonical) or
// ""; note says what was found when that is not the Command Line Tools,
// for the plan ("" when nothing needs saying).
type devDir struct {
	granted, note string
}

// developerDir finds the developer directory: DEVELOPER_DIR in the
// program's environment (rc.Env, or the caller's), else where the
// xcode-select link points; a directory holding Contents/Developer (an
// Xcode.app) stands for that. It is granted unless it is the Command Line
// Tools (fixed text already), is not a directory, lies inside a write path
// (the program could put its own tools there), or cannot be used in a
// profile; the note says which.
func developerDir(rc *spec.Resolved, writeRoots []string) devDir {
	dir, from := "", "DEVELOPER_DIR"
	if v, ok := envLookup(rc, "DEVELOPER_DIR"); ok && v != "" {
		dir = v
	} else if l, err := host.readlink(xcodeSelectLink); err == nil {
		dir, from = l, "xcode-select ("+xcodeSelectLink+")"
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(filepath.Dir(xcodeSelectLink), dir)
		}
	} else {
		return devDir{} // no selection: the shims use the Command Line Tools
	}
	if !filepath.IsAbs(dir) {
		return devDir{note: from + " names " + dir + ", not an absolute path: not granted, so the xcrun tools fail"}
	}
	if app := filepath.Join(dir, "Contents", "Developer"); host.isDir(app) {
		dir = app
	}
	r, err := host.evalSymlinks(dir)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return devDir{note: from + " names " + dir + ", which cannot be resolved (" + err.Error() + "): not granted, so the xcrun tools fail"}
	}
	r = canonicalPath(r)
	switch {
	case spec.Under(r, commandLineTools):
		return devDir{}
	case !host.isDir(r):
		return devDir{note: from + " names " + r + ", not a directory: not granted, so the xcrun tools fail"}
	}
	for _, w := range writeRoots {
		if spec.Under(r, w) || spec.Under(w, r) {
			return devDir{note: from + " names " + r + ", which overlaps the write path " + w +
				" (the program could put its own tools there): not granted, so the xcrun tools fail"}
		}
	}
	if _, err := seatbelt.Generate(seatbelt.Policy{XcrunShim: true, DeveloperDir: r}); err != nil {
		return devDir{note: from + " names " + r + ", which cannot be used in a Seatbelt profile: not granted, so the xcrun tools fail"}
	}
	return devDir{granted: r, note: from + " names " + r + ": granted like the Command Line Tools (execute, read, map executable)"}
}

// envLookup looks key up in rc.Env when the program gets an environment of
// its own, else in the caller's.
func envLookup(rc *spec.Resolved, key string) (string, bool) {
	if rc.Env == nil {
		return host.lookupEnv(key)
	}
	for i := len(rc.Env) - 1; i >= 0; i-- { // the last one wins, as in exec.Cmd
		if v, ok := strings.CutPrefix(rc.Env[i], key+"="); ok {
			return v, true
		}
	}
	return "", false
}
