//go:build linux

package cgroup

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// Options point detection at other files than the process's own; tests
// use them to show a hierarchy the caller cannot write.
type Options struct {
	Mountinfo  string // default /proc/self/mountinfo
	SelfCgroup string // default /proc/self/cgroup

	// Parent, when set, is the cgroup v2 directory to make trees' cgroups
	// under; only it is considered. Without it detection walks up from
	// the caller's own cgroup (see the package doc), which finds a
	// delegated cgroup whose leaf the caller runs in by itself; Parent
	// names one elsewhere (the caller must still be allowed to move a
	// process from its own cgroup there).
	Parent string
}

// Manager is a place where this process may make trees' cgroups.
type Manager struct {
	// Version is the hierarchy used: V2, or V1 for the legacy controllers.
	Version Version
	// Controllers are the controllers a tree's cgroup gets: on v1 the
	// hierarchies found usable among pids, memory, freezer and cpuacct; on
	// v2 those enabled for the children of Parents()[0] among pids and memory
	// (CPU time and the tree kill need no controller on v2).
	Controllers []string
	// Notes say, per controller or hierarchy not used, why.
	Notes map[string]string

	// dirs maps each hierarchy used to the cgroup directory the trees'
	// cgroups are made below (in DirName): on v1 the caller's own cgroup
	// in that hierarchy, on v2 (key "") the one detectV2 chose.
	dirs map[string]string
}

// Has reports whether trees' cgroups get controller c.
func (m *Manager) Has(c string) bool { return slices.Contains(m.Controllers, c) }

// CanEnforce reports whether l can be enforced here, and if not, why.
func (m *Manager) CanEnforce(l Limits) error {
	var missing []string
	if l.Pids > 0 && !m.Has(Pids) {
		missing = append(missing, "pids (task limit)")
	}
	if l.MemoryBytes > 0 && !m.Has(Memory) {
		missing = append(missing, "memory")
	}
	if l.CPUTime > 0 && m.Version == V1 && !m.Has(CPUAcct) {
		missing = append(missing, "cpuacct (CPU time)")
	}
	if len(missing) == 0 {
		return nil
	}
	var why []string
	for c, n := range m.Notes {
		why = append(why, c+": "+n)
	}
	slices.Sort(why)
	return fmt.Errorf("cgroup: %s: no usable %s controller (%s)", m.Version, strings.Join(missing, ", "), strings.Join(why, "; "))
}

// For returns a Manager that makes groups only in the hierarchies l needs
// and the one the race-free kill needs: on v1, pids for l.Pids, memory for
// l.MemoryBytes, cpuacct for l.CPUTime, and the freezer; on v2 (one
// hierarchy) m itself. Every v1 hierarchy is one more mkdir, open and
// rmdir per tree. It returns nil when none of them is usable here.
// Stale groups are still looked for in every hierarchy m found.
func (m *Manager) For(l Limits) *Manager {
	if m.Version == V2 {
		return m
	}
	want := map[string]bool{Pids: l.Pids > 0, Memory: l.MemoryBytes > 0, CPUAcct: l.CPUTime > 0, Freezer: true}
	n := *m
	n.Controllers = nil
	for _, c := range m.Controllers {
		if want[c] {
			n.Controllers = append(n.Controllers, c)
		}
	}
	if len(n.Controllers) == 0 {
		return nil
	}
	return &n
}

// KillsRaceFree reports whether [Group.Kill] can stop the whole tree
// before killing it (v2 cgroup.kill or cgroup.freeze; v1 freezer).
func (m *Manager) KillsRaceFree() bool { return m.Version == V2 || m.Has(Freezer) }

// Detect finds where this process may make cgroups, changing nothing. The
// error wraps ErrUnavailable and says, per hierarchy, why none can be used.
func Detect(opts Options) (*Manager, error) {
	if opts.Mountinfo == "" {
		opts.Mountinfo = "/proc/self/mountinfo"
	}
	if opts.SelfCgroup == "" {
		opts.SelfCgroup = "/proc/self/cgroup"
	}
	mf, err := os.Open(opts.Mountinfo)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	mounts, err := parseMountinfo(mf)
	mf.Close()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrUnavailable, opts.Mountinfo, err)
	}
	cf, err := os.Open(opts.SelfCgroup)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnavailable, err)
	}
	self, err := parseSelfCgroup(cf)
	cf.Close()
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrUnavailable, opts.SelfCgroup, err)
	}

	v2, v2why := detectV2(mounts, self, opts.Parent)
	if opts.Parent != "" {
		if v2 == nil {
			return nil, fmt.Errorf("%w: %s", ErrUnavailable, v2why)
		}
		return v2, nil
	}
	v1, v1why := detectV1(mounts, self)
	switch {
	case v2 != nil && v2.Has(Pids) && v2.Has(Memory):
		return v2, nil
	case v1 != nil && (v1.Has(Pids) || v1.Has(Memory)):
		if v2why != "" {
			v1.Notes["cgroup2"] = v2why
		}
		return v1, nil
	case v2 != nil:
		return v2, nil
	case v1 != nil:
		return v1, nil
	}
	return nil, fmt.Errorf("%w: cgroup v2: %s; cgroup v1: %s", ErrUnavailable, v2why, v1why)
}

// detectV2 looks for the cgroup v2 directory to make trees' cgroups
// under: parent when set (only it), else the nearest cgroup, from the
// caller's own up to the root of the cgroup2 mount, that this process may
// use (see checkDir) and whose cgroup.subtree_control already enables the
// most of pids and memory for its children; among those that enable none,
// the nearest usable one (the tree kill needs no controller).
//
// Why upwards: on cgroup v2 a cgroup other than the root that holds a
// process cannot enable a domain controller for its children (the "no
// internal processes" rule), and the caller's own cgroup holds the caller.
// So under systemd the caller's unit (x.service, a session's scope) never
// has pids or memory for children, while the slice above it does (systemd
// enables a controller in a slice when a unit below accounts for it:
// TasksAccounting= and MemoryAccounting= are on by default, the latter
// since systemd 238); and in a delegated
// subtree (Delegate=yes) run the systemd way, the caller sits in a leaf
// of the delegated cgroup, which enables them. Moving a process from the
// caller's cgroup into one below an ancestor needs write access to that
// ancestor's cgroup.procs (their common ancestor), which checkDir checks.
// Nothing is written: a controller not enabled where a cgroup could be
// made is reported, never enabled (see the package doc).
func detectV2(mounts []mount, self selfCgroups, parent string) (*Manager, string) {
	if self.v2 == "" {
		return nil, "the process is in no cgroup v2 hierarchy"
	}
	var reasons []string
	for _, m := range mounts {
		if m.fstype != "cgroup2" {
			continue
		}
		own, ok := m.dirOf(self.v2)
		if !ok {
			reasons = append(reasons, m.point+" does not show the process's cgroup "+self.v2)
			continue
		}
		if parent != "" {
			dir := filepath.Clean(parent)
			if !within(dir, m.point) {
				reasons = append(reasons, parent+" is not on the cgroup2 mount "+m.point)
				continue
			}
			mg, why := v2At(dir, own)
			if mg == nil {
				reasons = append(reasons, why)
				continue
			}
			for _, c := range []string{Pids, Memory} {
				if !mg.Has(c) {
					mg.Notes[c] = "not enabled in " + filepath.Join(dir, "cgroup.subtree_control") + " (this library enables no controller in a cgroup it did not create)"
				}
			}
			return mg, strings.Join(mapNotes(mg.Notes), "; ")
		}
		var best *Manager
		var refused []string
		for dir := own; ; dir = filepath.Dir(dir) {
			mg, why := v2At(dir, own)
			if mg == nil {
				refused = append(refused, why)
			} else if best == nil || len(mg.Controllers) > len(best.Controllers) {
				best = mg
			}
			if best != nil && len(best.Controllers) == 2 || dir == m.point || !within(dir, m.point) {
				break
			}
		}
		if best == nil {
			reasons = append(reasons, refused...)
			continue
		}
		for _, c := range []string{Pids, Memory} {
			if best.Has(c) {
				continue
			}
			why := "not enabled for the children of any cgroup this process may use, from its own (" + own + ") up to " + m.point +
				" (this library enables no controller in a cgroup it did not create)"
			if own != m.point {
				why += "; a cgroup other than the root that holds a process (as the caller's own does) cannot enable controllers " +
					"for its children: run the caller in a leaf of a delegated cgroup whose cgroup.subtree_control enables them"
			}
			best.Notes[c] = why
		}
		return best, strings.Join(mapNotes(best.Notes), "; ")
	}
	if len(reasons) == 0 {
		return nil, "no cgroup2 mount"
	}
	return nil, strings.Join(reasons, "; ")
}

// v2At is a Manager making trees' cgroups below dir, a cgroup2 directory
// at or above own (the caller's cgroup), with the controllers of pids and
// memory that dir's cgroup.subtree_control enables; nil and why when this
// process may not use dir (see checkDir).
func v2At(dir, own string) (*Manager, string) {
	// Moving a process from the caller's cgroup into one below dir
	// needs write access to the cgroup.procs of their common ancestor.
	if err := checkDir(dir, unix.CGROUP2_SUPER_MAGIC, commonAncestor(own, dir)); err != nil {
		return nil, err.Error()
	}
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.subtree_control"))
	if err != nil {
		return nil, err.Error()
	}
	mg := &Manager{Version: V2, Notes: map[string]string{}, dirs: map[string]string{"": dir}}
	enabled := strings.Fields(string(b))
	for _, c := range []string{Pids, Memory} {
		if slices.Contains(enabled, c) {
			mg.Controllers = append(mg.Controllers, c)
		}
	}
	return mg, ""
}

// Parents are the cgroups, one per hierarchy used (on v2, one), below
// which the trees' cgroups are made (in DirName).
func (m *Manager) Parents() []string {
	var out []string
	for _, c := range m.hierarchies() {
		out = append(out, m.dirs[c])
	}
	return out
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// commonAncestor is the deepest directory holding both a and b.
func commonAncestor(a, b string) string {
	for !within(b, a) {
		a = filepath.Dir(a)
	}
	return a
}

// detectV1 looks at the caller's cgroup in each v1 hierarchy.
func detectV1(mounts []mount, self selfCgroups) (*Manager, string) {
	mg := &Manager{Version: V1, Notes: map[string]string{}, dirs: map[string]string{}}
	for _, c := range v1Controllers {
		p, ok := self.v1[c]
		if !ok {
			mg.Notes[c] = "no " + c + " hierarchy holds the process"
			continue
		}
		why := "no " + c + " mount"
		for _, m := range mounts {
			if m.fstype != "cgroup" || !m.hasOption(c) {
				continue
			}
			dir, ok := m.dirOf(p)
			if !ok {
				why = m.point + " does not show the process's cgroup " + p
				continue
			}
			if err := checkDir(dir, unix.CGROUP_SUPER_MAGIC, ""); err != nil {
				why = err.Error()
				continue
			}
			mg.dirs[c] = dir
			mg.Controllers = append(mg.Controllers, c)
			why = ""
			break
		}
		if why != "" {
			mg.Notes[c] = why
		}
	}
	if len(mg.Controllers) == 0 {
		return nil, strings.Join(mapNotes(mg.Notes), "; ")
	}
	return mg, ""
}

func mapNotes(n map[string]string) []string {
	var out []string
	for k, v := range n {
		out = append(out, k+": "+v)
	}
	slices.Sort(out)
	return out
}

// checkDir checks, without writing, that a cgroup could be made in
// DirName below dir and a process moved into it: dir is on a cgroup file
// system of the given magic; DirName, if it exists, is a directory this
// process owns and may write; if it does not, dir is writable. On v2,
// moving a process from the caller's cgroup into one below dir also needs
// write access to the cgroup.procs of their common ancestor, procsDir.
func checkDir(dir string, magic int64, procsDir string) error {
	var fs unix.Statfs_t
	if err := unix.Statfs(dir, &fs); err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	if int64(fs.Type) != magic {
		return fmt.Errorf("%s is not a cgroup file system (type %#x)", dir, fs.Type)
	}
	access := func(p string, mode uint32) error {
		if err := unix.Faccessat(unix.AT_FDCWD, p, mode, unix.AT_EACCESS); err != nil {
			return fmt.Errorf("%s: %w", p, err)
		}
		return nil
	}
	if procsDir != "" {
		if err := access(filepath.Join(procsDir, "cgroup.procs"), unix.W_OK); err != nil {
			return fmt.Errorf("cannot move processes out of the caller's cgroup: %w", err)
		}
	}
	parent := filepath.Join(dir, DirName)
	var st unix.Stat_t
	switch err := unix.Lstat(parent, &st); {
	case errors.Is(err, unix.ENOENT):
		return access(dir, unix.W_OK|unix.X_OK)
	case err != nil:
		return fmt.Errorf("%s: %w", parent, err)
	case st.Mode&unix.S_IFMT != unix.S_IFDIR:
		return fmt.Errorf("%s is not a directory", parent)
	case int(st.Uid) != os.Geteuid():
		return fmt.Errorf("%s belongs to uid %d, not to this process's uid %d", parent, st.Uid, os.Geteuid())
	}
	if err := access(parent, unix.W_OK|unix.X_OK); err != nil {
		return err
	}
	return access(filepath.Join(parent, "cgroup.procs"), unix.W_OK)
}
