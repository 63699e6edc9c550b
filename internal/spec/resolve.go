package spec

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// FS is how Resolve reads the host: the caller's own paths, before any
// sandboxed program runs. [OS] is the host's; tests inject others.
type FS interface {
	EvalSymlinks(path string) (string, error)
	Stat(path string) (fs.FileInfo, error)
	Lstat(path string) (fs.FileInfo, error)
	Readlink(path string) (string, error)
	ReadFile(path string) ([]byte, error)
	ReadDir(path string) ([]fs.DirEntry, error)
}

// OS is the host's file system, as the os package sees it.
var OS FS = osFS{}

type osFS struct{}

func (osFS) EvalSymlinks(p string) (string, error)   { return filepath.EvalSymlinks(p) }
func (osFS) Stat(p string) (fs.FileInfo, error)      { return os.Stat(p) }
func (osFS) Lstat(p string) (fs.FileInfo, error)     { return os.Lstat(p) }
func (osFS) Readlink(p string) (string, error)       { return os.Readlink(p) }
func (osFS) ReadFile(p string) ([]byte, error)       { return os.ReadFile(p) }
func (osFS) ReadDir(p string) ([]fs.DirEntry, error) { return os.ReadDir(p) }

// Resolve validates cfg. It touches the filesystem only to resolve symlinks
// and to learn whether a path is a directory.
func Resolve(cfg Config) (*Resolved, error) { return ResolveIn(OS, cfg) }

// ResolveIn is Resolve reading the host through fsys.
func ResolveIn(fsys FS, cfg Config) (*Resolved, error) {
	rc := &Resolved{Config: cfg}
	if err := cfg.Limits.Validate(); err != nil {
		return nil, err
	}
	if err := ValidateEnv(cfg.Env); err != nil {
		return nil, err
	}
	if cfg.StrictAcceptLoader && !cfg.Strict {
		// Fail closed: whoever set it wants Strict's refusals.
		return nil, &ConfigError{Field: "strict_accept_loader", Value: "true", Reason: "changes only what strict refuses: set strict too"}
	}
	var err error
	if rc.Read, err = resolvePaths(fsys, "allowed_read_paths", cfg.AllowedReadPaths); err != nil {
		return nil, err
	}
	if rc.Write, err = resolvePaths(fsys, "allowed_write_paths", cfg.AllowedWritePaths); err != nil {
		return nil, err
	}
	if rc.Exec, err = resolvePaths(fsys, "allowed_exec_paths", cfg.AllowedExecPaths); err != nil {
		return nil, err
	}
	for _, s := range cfg.AllowedTCPConnect {
		ep, err := ParseEndpoint(s)
		if err != nil {
			return nil, &ConfigError{Field: "allowed_tcp_connect", Value: s, Reason: err.Error()}
		}
		if !slices.Contains(rc.Connect, ep) {
			rc.Connect = append(rc.Connect, ep)
		}
	}
	if rc.DenyWrite, err = cleanPaths("deny_write_paths", cfg.DenyWritePaths); err != nil {
		return nil, err
	}
	if rc.DenyRead, err = cleanPaths("deny_read_paths", cfg.DenyReadPaths); err != nil {
		return nil, err
	}
	for _, m := range cfg.Mounts {
		src, err := resolvePath(fsys, m.Path)
		if err != nil {
			err.(*ConfigError).Field = "mounts"
			return nil, err
		}
		at, err := CleanPath(m.At)
		if err != nil {
			return nil, &ConfigError{Field: "mounts", Value: m.At, Reason: "at: " + err.Error()}
		}
		if at == "/" {
			return nil, &ConfigError{Field: "mounts", Value: m.At, Reason: "at: cannot mount over /"}
		}
		rc.Mounts = append(rc.Mounts, Mount{Path: src.Resolved, At: at, Write: m.Write})
	}
	for _, p := range cfg.AllowedTCPBind {
		if !slices.Contains(rc.Bind, p) {
			rc.Bind = append(rc.Bind, p)
		}
	}
	if err := rc.checkPlantedSymlinks(fsys); err != nil {
		return nil, err
	}
	return rc, nil
}

func resolvePaths(fsys FS, field string, paths []string) ([]Path, error) {
	var out []Path
	for _, p := range paths {
		rp, err := resolvePath(fsys, p)
		if err != nil {
			var ce *ConfigError
			if errors.As(err, &ce) {
				ce.Field = field
			}
			return nil, err
		}
		if !slices.ContainsFunc(out, func(o Path) bool { return o.Resolved == rp.Resolved }) {
			out = append(out, rp)
		}
	}
	return out, nil
}

// cleanPaths validates paths that need not exist, and cleans them.
func cleanPaths(field string, paths []string) ([]string, error) {
	var out []string
	for _, p := range paths {
		c, err := CleanPath(p)
		if err != nil {
			return nil, &ConfigError{Field: field, Value: p, Reason: err.Error()}
		}
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return out, nil
}

// CleanPath checks one path's text: not empty, no control characters,
// absolute, no ".." segment; and cleans it. It does not look at the
// filesystem.
func CleanPath(p string) (string, error) {
	if p == "" {
		return "", errors.New("empty path")
	}
	if err := CheckText(p); err != nil {
		return "", err
	}
	if !filepath.IsAbs(p) {
		return "", errors.New("path is not absolute")
	}
	for seg := range strings.FieldsFuncSeq(p, func(r rune) bool { return r == '/' || r == filepath.Separator }) {
		if seg == ".." {
			return "", errors.New(`path has a ".." segment`)
		}
	}
	return filepath.Clean(p), nil
}

// resolvePath validates one path: not empty, no control characters, absolute,
// no ".." segment, existing; then cleans it and resolves symlinks.
func resolvePath(fsys FS, p string) (Path, error) {
	bad := func(reason string, err error) (Path, error) {
		return Path{}, &ConfigError{Value: p, Reason: reason, Err: err}
	}
	clean, err := CleanPath(p)
	if err != nil {
		return bad(err.Error(), nil)
	}
	resolved, err := fsys.EvalSymlinks(clean)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return bad("path does not exist", nil)
		}
		return bad("cannot resolve path", err)
	}
	fi, err := fsys.Stat(resolved)
	if err != nil {
		return bad("cannot stat path", err)
	}
	return Path{Given: p, Resolved: resolved, IsDir: fi.IsDir()}, nil
}

// checkPlantedSymlinks refuses a granted path whose resolution passes
// through a symlink that lies inside a write path: a sandboxed program (an
// earlier run) can plant or redirect such a link at will, so the grant
// would follow whatever it names at the next resolution (a secret, say).
// Such grants are refused, whatever Strict says (fail closed); granting the
// path the link points to works.
//
// Mounts get the same check: a source reached through such a link would
// show (and, with Write, let the program change) whatever the link names
// at the next spawn; a target reached through one would put the view, and
// the grant that follows it, wherever the link points inside the sandbox.
func (rc *Resolved) checkPlantedSymlinks(fsys FS) error {
	var dirs []string
	for _, w := range rc.Write {
		if w.IsDir {
			dirs = append(dirs, w.Resolved)
		}
	}
	if len(dirs) == 0 {
		return nil
	}
	for _, l := range []struct {
		field string
		paths []Path
	}{{"allowed_read_paths", rc.Read}, {"allowed_write_paths", rc.Write}, {"allowed_exec_paths", rc.Exec}} {
		for _, rp := range l.paths {
			if link, dir := symlinkWithin(fsys, rp.Given, dirs); link != "" {
				return &ConfigError{Field: l.field, Value: rp.Given,
					Reason: "resolves through the symlink " + link + ", which lies inside the write path " + dir +
						" where a sandboxed program can replace it; grant the path it points to (" + rp.Resolved + ") instead"}
			}
		}
	}
	for _, m := range rc.Config.Mounts {
		for _, p := range []struct{ what, path string }{{"path", m.Path}, {"at", m.At}} {
			if link, dir := symlinkWithin(fsys, p.path, dirs); link != "" {
				return &ConfigError{Field: "mounts", Value: p.path,
					Reason: p.what + ": resolves through the symlink " + link + ", which lies inside the write path " + dir +
						" where a sandboxed program can replace it; name the path it points to instead"}
			}
		}
	}
	return nil
}

// symlinkWithin walks path as the kernel resolves it (WalkLinks) and
// returns the first symlink it passes through that lies inside one of
// dirs (resolved directories), and that directory. A link inside one that
// cannot be followed (unreadable, or past the loop bound) is returned too:
// it is still a planted link.
func symlinkWithin(fsys FS, path string, dirs []string) (link, dir string) {
	inside := func(l string) string {
		for _, d := range dirs {
			if strings.HasPrefix(l, d+"/") || d == "/" {
				return d
			}
		}
		return ""
	}
	l, _ := WalkLinks(fsys, path, func(l string, _ fs.FileInfo, _ string) bool { return inside(l) == "" })
	if d := inside(l); l != "" && d != "" {
		return l, d
	}
	return "", ""
}
