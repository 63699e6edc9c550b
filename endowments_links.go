package sandbox

// The descriptor's rule for symbolic links: a declared path is resolved
// before it is granted (Config does that), and a link on the way is
// refused where it leads out of what the descriptor declares.

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/openparallax/sandbox/internal/spec"
)

// declared is one path the descriptor grants, for the link rule.
type declared struct {
	field, path string
	write       bool // fs read-write, or a device
}

// checkLinks refuses a declared path (fs, exec.allowPaths, devices) that
// passes through a symbolic link leading out of the declared scope. The
// machine's own layout links (owned by root, in a directory that only
// root can change: /bin -> usr/bin, macOS /tmp -> private/tmp) are
// followed without question, unless they lie inside a path the
// descriptor grants read-write (where a program running as root could
// have planted them). Any other link on the way (one a user or a
// program could have made or could replace) is accepted only when the
// path resolves inside another declared path of the same kind that
// grants at least as much (a read-write fs entry for a read-write one):
// a descriptor that says /home/u/project must not grant /etc because
// project is a link to it.
func (e *Endowments) checkLinks() error {
	var fsList, execList, devList []declared
	for i, g := range e.FS {
		fsList = append(fsList, declared{field: fieldIndex("fs", i) + ".path", path: g.Path, write: g.Mode == ModeReadWrite})
	}
	for i, p := range e.Exec.AllowPaths {
		execList = append(execList, declared{field: fieldIndex("exec.allowPaths", i), path: p})
	}
	for i, d := range e.Devices {
		if filepath.IsAbs(d) {
			devList = append(devList, declared{field: fieldIndex("devices", i), path: d, write: true})
		}
	}
	var writable []string
	for _, d := range fsList {
		if d.write {
			writable = append(writable, d.path, evalOr(hostLinks{}, d.path))
		}
	}
	for _, list := range [][]declared{fsList, execList, devList} {
		for _, d := range list {
			if err := checkLinksOf(d, list, writable, hostLinks{}); err != nil {
				return err
			}
		}
	}
	return nil
}

func fieldIndex(name string, i int) string { return name + "[" + strconv.Itoa(i) + "]" }

// linkFS is what the link rule reads of the host: injected for tests.
type linkFS interface {
	Lstat(string) (fs.FileInfo, error)
	Readlink(string) (string, error)
	EvalSymlinks(string) (string, error)
	// System reports whether the link at path is the machine's own:
	// owned by root, in a directory owned by root that no other user may
	// write.
	System(path string, link fs.FileInfo) bool
}

type hostLinks struct{}

func (hostLinks) Lstat(p string) (fs.FileInfo, error)    { return os.Lstat(p) }
func (hostLinks) Readlink(p string) (string, error)      { return os.Readlink(p) }
func (hostLinks) EvalSymlinks(p string) (string, error)  { return filepath.EvalSymlinks(p) }
func (hostLinks) System(p string, link fs.FileInfo) bool { return systemLink(p, link) }

// checkLinksOf applies the rule to d against the other paths of its
// list.
// writable are the read-write paths (as declared and resolved).
func checkLinksOf(d declared, list []declared, writable []string, lfs linkFS) error {
	link := userLinkOn(d.path, writable, lfs)
	if link == "" {
		return nil
	}
	resolved, err := lfs.EvalSymlinks(d.path)
	if err != nil {
		return &EndowmentsError{Field: d.field, Value: d.path, Reason: "cannot resolve it: " + err.Error()}
	}
	for _, o := range list {
		if o.path == d.path || (d.write && !o.write) {
			continue
		}
		if within(resolved, o.path, evalOr(lfs, o.path)) {
			return nil
		}
	}
	return &EndowmentsError{Field: d.field, Value: d.path,
		Reason: "passes through the symbolic link " + link + " and resolves to " + resolved +
			", outside every path this descriptor declares: declare " + resolved + " itself if that is what you mean to grant"}
}

func evalOr(lfs linkFS, p string) string {
	if r, err := lfs.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

// within reports whether p is one of bases or lies inside one.
func within(p string, bases ...string) bool {
	for _, b := range bases {
		if spec.Under(p, b) {
			return true
		}
	}
	return false
}

// userLinkOn walks path as the kernel resolves it (spec.WalkLinks) and
// returns the first symbolic link on the way that is not the machine's
// own (or lies in one of writable), or one it cannot follow (unreadable,
// or past the loop bound: refused too); "" when there is none.
func userLinkOn(path string, writable []string, lfs linkFS) string {
	link, _ := spec.WalkLinks(lfs, path, func(l string, fi fs.FileInfo, _ string) bool {
		return lfs.System(l, fi) && !within(l, writable...)
	})
	return link
}
