package sandbox

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

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
func (rc *resolvedConfig) checkPlantedSymlinks() error {
	var dirs []string
	for _, w := range rc.write {
		if w.IsDir {
			dirs = append(dirs, w.Resolved)
		}
	}
	if len(dirs) == 0 {
		return nil
	}
	for _, l := range []struct {
		field string
		paths []ResolvedPath
	}{{"allowed_read_paths", rc.read}, {"allowed_write_paths", rc.write}, {"allowed_exec_paths", rc.exec}} {
		for _, rp := range l.paths {
			if link, dir := symlinkWithin(rp.Given, dirs); link != "" {
				return &ConfigError{Field: l.field, Value: rp.Given,
					Reason: "resolves through the symlink " + link + ", which lies inside the write path " + dir +
						" where a sandboxed program can replace it; grant the path it points to (" + rp.Resolved + ") instead"}
			}
		}
	}
	for _, m := range rc.cfg.Mounts {
		for _, p := range []struct{ what, path string }{{"path", m.Path}, {"at", m.At}} {
			if link, dir := symlinkWithin(p.path, dirs); link != "" {
				return &ConfigError{Field: "mounts", Value: p.path,
					Reason: p.what + ": resolves through the symlink " + link + ", which lies inside the write path " + dir +
						" where a sandboxed program can replace it; name the path it points to instead"}
			}
		}
	}
	return nil
}

// symlinkWithin walks path as the kernel resolves it and returns the first
// symlink it passes through that lies inside one of dirs (resolved
// directories), and that directory. The walk keeps the resolved directory
// reached so far, so ".." after a symlink goes where the kernel goes, not
// where lexical cleaning would.
func symlinkWithin(path string, dirs []string) (link, dir string) {
	todo := strings.Split(path, "/")
	cur := "/"
	for links := 0; len(todo) > 0; {
		part := todo[0]
		todo = todo[1:]
		switch part {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, part) // cur has no symlink, part is one name
		fi, err := os.Lstat(next)
		if err != nil {
			return "", "" // resolvePath has seen it exist; nothing to follow
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		for _, d := range dirs {
			if strings.HasPrefix(next, d+"/") || d == "/" {
				return next, d
			}
		}
		if links++; links > 40 {
			return "", "" // ELOOP: resolvePath refused it already
		}
		target, err := os.Readlink(next)
		if err != nil {
			return "", ""
		}
		if strings.HasPrefix(target, "/") {
			cur = "/"
		}
		todo = append(strings.Split(target, "/"), todo...)
	}
	return "", ""
}
