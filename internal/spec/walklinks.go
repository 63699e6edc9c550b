package spec

import (
	"errors"
	"io/fs"
	"path"
	"strings"
)

// LinkFS is what WalkLinks reads of the host (FS has it; tests inject a
// fake).
type LinkFS interface {
	Lstat(string) (fs.FileInfo, error)
	Readlink(string) (string, error)
}

// ErrLinkLoop is WalkLinks' error past 40 symbolic links, the kernel's
// bound (ELOOP).
var ErrLinkLoop = errors.New("too many levels of symbolic links")

// WalkLinks resolves p (absolute, "/"-separated) as the kernel does, one
// name at a time from "/": ".." goes up from the directory reached so
// far (which holds no symbolic link, so it goes where the kernel goes,
// not where lexical cleaning would), and each symbolic link met is
// replaced by its target (an absolute one restarts at "/"), 40 links at
// most. visit is called for each link met, with its path, its Lstat and
// its target, before the target is followed; false stops the walk there.
//
// It returns the link the walk stopped at: the one visit stopped at (nil
// error), the 41st (ErrLinkLoop), or one whose target could not be read
// (that error). It returns "" and nil when the walk ended: the whole path
// resolved, or a name on it could not be looked at (missing, or not
// searchable: the caller's own resolution has the last word on that).
//
// This is the one place the library walks a path as the kernel resolves
// it: the Config's planted-link check, seed 004's link rule and the own
// root's links all use it.
func WalkLinks(fsys LinkFS, p string, visit func(link string, fi fs.FileInfo, target string) bool) (string, error) {
	todo := strings.Split(p, "/")
	cur := "/"
	for links := 0; len(todo) > 0; {
		part := todo[0]
		todo = todo[1:]
		switch part {
		case "", ".":
			continue
		case "..":
			cur = path.Dir(cur)
			continue
		}
		next := path.Join(cur, part) // cur has no link, part is one name
		fi, err := fsys.Lstat(next)
		if err != nil {
			return "", nil
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if links++; links > 40 {
			return next, ErrLinkLoop
		}
		target, err := fsys.Readlink(next)
		if err != nil {
			return next, err
		}
		if !visit(next, fi, target) {
			return next, nil
		}
		if path.IsAbs(target) {
			cur = "/"
		}
		todo = append(strings.Split(target, "/"), todo...)
	}
	return "", nil
}
