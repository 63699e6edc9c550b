// Package cgroup gives each sandboxed process tree a cgroup of its own:
// it finds a cgroup hierarchy the caller may manage, without changing
// anything; makes one fresh cgroup per tree under a directory named for
// this library; sets the tree's limits (tasks, memory with no swap on top,
// and a CPU-time watchdog); says which limit was hit; kills the whole tree
// without a race; and removes the cgroup, also the ones left by a caller
// that was killed.
//
// # Where
//
// Detection reads /proc/self/mountinfo and /proc/self/cgroup, and checks
// with access(2) and stat(2) (no write, no mkdir) that the caller could
// create a cgroup below a given one and move a process there:
//
//   - cgroup v2: the nearest cgroup, from the caller's own up to the root
//     of the cgroup2 mount, that this process may write (root; or a
//     delegated subtree: a systemd unit with Delegate=yes, systemd's user
//     manager's own slices, a container's own cgroup), whose cgroup.procs
//     it may write (moving a process from the caller's cgroup to one below
//     it needs write access to the cgroup.procs of their common ancestor,
//     which is that cgroup), and whose cgroup.subtree_control already
//     enables pids and memory for its children (failing that, the nearest
//     that enables the most of them; failing that, the nearest usable one,
//     for the tree kill alone); or the cgroup given as Options.Parent.
//     Upwards because a cgroup other than the root cannot enable a
//     controller for its children while it holds a process (the "no
//     internal processes" rule), and the caller's own cgroup holds the
//     caller: only the root, a slice above the caller's unit, or a
//     delegated cgroup whose leaf the caller runs in can. This package
//     never enables a controller in a cgroup it did not create: enabling
//     one in the root or in a slice would change the host.
//   - cgroup v1, on hosts still on the legacy hierarchy: the pids, memory,
//     freezer and cpuacct controllers, each on its own mount (as
//     /sys/fs/cgroup/<controller>), each used below the caller's own cgroup
//     in that hierarchy when that is writable (v1 has no rule against
//     processes in inner cgroups).
//
// Every tree's cgroup is DirName/<name> below that cgroup ([Manager.Parents]).
// DirName is created when missing and removed again when a tree's removal
// leaves it empty. Nothing else of the host is written: no limit of an
// existing cgroup is changed, no process other than the tree is moved.
//
// # Whose cgroup that is
//
// On a systemd host the cgroup found is, for a caller that is not in a
// delegated subtree, the slice above its unit (system.slice for a system
// service, user-1000.slice for root in a login session; the root cgroup
// when no slice enables the controllers), or for a user's session the
// user manager's app.slice. Those belong to systemd, whose rule is that
// only it writes in its tree outside delegated subtrees ("single
// writer"). This package does anyway, as runc's and Docker's cgroupfs
// drivers do, and what it does there is small: one directory, DirName,
// whose cgroup.subtree_control it sets, with one cgroup per running tree
// inside. systemd does not know them: they are not accounted to the
// caller's unit (a MemoryMax= of the caller's service does not cover its
// trees, the slice's does); systemd does not remove them, and cannot
// disable pids or memory in the slice while DirName enables them (the
// write fails with EBUSY, and systemd logs it), so a limit never silently
// disappears under a running tree. To stay within systemd's rules, run the
// caller in a leaf of a delegated cgroup (Delegate=yes; systemd 254's
// DelegateSubgroup= starts it in one) with pids and memory enabled in the
// delegated cgroup's cgroup.subtree_control (the delegate's to write, as
// its owner, once no process is left in it; this package does not): that
// cgroup is then the nearest.
//
// # Names and stale cgroups
//
// A tree's cgroup is named "<pidns>.<pid>.<start>.<random>": the PID
// namespace, PID and start time of the process that created it. When that
// process is gone (it was killed before it could remove the cgroup), its
// reaper (reaper_linux.go: one background process per caller, which waits
// for the caller's exit) kills what is left in it and removes it; if the
// reaper could not, the next [Manager.New] in the same PID namespace does.
// cgroup v1's release_agent is host-wide and is left alone.
//
// # Placing a process
//
// A process must be in the cgroup before the sandboxed program's first
// instruction. [Group.ProcsFiles] are open on the cgroup.procs file of each
// hierarchy: a child that writes "0" to each before execve moves itself
// (v1 moves the whole thread group). On v2, [Group.DirFD] is a descriptor
// of the cgroup's directory for clone3's CLONE_INTO_CGROUP, which
// os/exec exposes as SysProcAttr.UseCgroupFD and CgroupFD: the child is
// born in the cgroup.
package cgroup

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"
	"time"
)

// DirName is the directory, below the cgroup detection chose
// ([Manager.Parents]), that holds the trees' cgroups.
const DirName = "openparallax-sandbox"

// Controllers of cgroup v1 this package uses, each on its own hierarchy.
const (
	Pids    = "pids"    // task limit
	Memory  = "memory"  // memory limit, OOM kill
	Freezer = "freezer" // the race-free tree kill
	CPUAcct = "cpuacct" // CPU time, for the watchdog
)

// v1Controllers are the v1 controllers looked for, in order.
var v1Controllers = []string{Pids, Memory, Freezer, CPUAcct}

// Version is a cgroup hierarchy version.
type Version int

const (
	V1 Version = 1
	V2 Version = 2
)

func (v Version) String() string {
	switch v {
	case V1:
		return "cgroup v1"
	case V2:
		return "cgroup v2"
	}
	return "no cgroup"
}

// Limits are what a tree's cgroup enforces. Zero means no limit.
type Limits struct {
	Pids        int64         // tasks (processes and threads) at once
	MemoryBytes int64         // memory, swap not granted on top
	CPUTime     time.Duration // total CPU time of the tree, by the watchdog
}

// Names of the limits [Group.Exceeded] reports.
const (
	LimitPids   = "pids"
	LimitMemory = "memory"
	LimitCPU    = "cpu"
)

// mount is one cgroup mount from mountinfo.
type mount struct {
	root, point string // the mount's root inside the hierarchy, and where it is mounted
	fstype      string // "cgroup" or "cgroup2"
	options     []string
}

// parseMountinfo returns the cgroup and cgroup2 mounts of a mountinfo file.
func parseMountinfo(r io.Reader) ([]mount, error) {
	var out []mount
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// id parent major:minor root point options [optional...] - fstype source superoptions
		f := strings.Fields(sc.Text())
		sep := -1
		for i, s := range f {
			if s == "-" {
				sep = i
				break
			}
		}
		if sep < 6 || len(f) < sep+4 {
			continue
		}
		fstype := f[sep+1]
		if fstype != "cgroup" && fstype != "cgroup2" {
			continue
		}
		out = append(out, mount{
			root:    unescapeMountinfo(f[3]),
			point:   unescapeMountinfo(f[4]),
			fstype:  fstype,
			options: strings.Split(f[sep+3], ","),
		})
	}
	return out, sc.Err()
}

// unescapeMountinfo undoes the kernel's octal escapes (\040 for a space).
func unescapeMountinfo(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+4 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// selfCgroups is /proc/self/cgroup: the v2 path ("" if none) and the v1
// path of each controller.
type selfCgroups struct {
	v2 string
	v1 map[string]string
}

func parseSelfCgroup(r io.Reader) (selfCgroups, error) {
	sc := selfCgroups{v1: map[string]string{}}
	s := bufio.NewScanner(r)
	for s.Scan() {
		// hierarchy-ID:controller-list:cgroup-path
		id, rest, ok := strings.Cut(s.Text(), ":")
		if !ok {
			continue
		}
		ctrls, p, ok := strings.Cut(rest, ":")
		if !ok {
			continue
		}
		if id == "0" && ctrls == "" {
			sc.v2 = p
			continue
		}
		for c := range strings.SplitSeq(ctrls, ",") {
			sc.v1[c] = p
		}
	}
	return sc, s.Err()
}

// dirOf returns the directory of cgroup path p (as /proc/self/cgroup gives
// it) under mount m, or false if p is outside what m shows (a cgroup
// namespace or a bind mount of a subtree that does not hold the caller).
func (m mount) dirOf(p string) (string, bool) {
	p = path.Clean("/" + p)
	root := path.Clean("/" + m.root)
	if root != "/" {
		if p != root && !strings.HasPrefix(p, root+"/") {
			return "", false
		}
		p = strings.TrimPrefix(p, root)
	}
	return path.Join(m.point, p), true
}

// hasOption reports whether the mount names controller c.
func (m mount) hasOption(c string) bool {
	for _, o := range m.options {
		if o == c {
			return true
		}
	}
	return false
}

// groupName is the name of a tree's cgroup made by the process pid, started
// at start (clock ticks after boot), in PID namespace pidns.
func groupName(pidns uint64, pid int, start uint64, random string) string {
	return fmt.Sprintf("%d.%d.%d.%s", pidns, pid, start, random)
}

// parseGroupName reads a name made by groupName.
func parseGroupName(name string) (pidns uint64, pid int, start uint64, ok bool) {
	f := strings.Split(name, ".")
	if len(f) != 4 || f[3] == "" {
		return 0, 0, 0, false
	}
	var err1, err2, err3 error
	pidns, err1 = strconv.ParseUint(f[0], 10, 64)
	pid, err2 = strconv.Atoi(f[1])
	start, err3 = strconv.ParseUint(f[2], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || pid <= 0 {
		return 0, 0, 0, false
	}
	return pidns, pid, start, true
}

// parseKeyed reads a flat keyed file ("key value" lines: memory.events,
// pids.events, cpu.stat, memory.oom_control) and returns key's value.
func parseKeyed(b []byte, key string) (int64, bool) {
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		k, v, ok := bytes.Cut(line, []byte(" "))
		if ok && string(k) == key {
			n, err := strconv.ParseInt(string(bytes.TrimSpace(v)), 10, 64)
			return n, err == nil
		}
	}
	return 0, false
}

// parsePids reads a cgroup.procs file.
func parsePids(b []byte) ([]int, error) {
	var out []int
	for f := range bytes.FieldsSeq(b) {
		n, err := strconv.Atoi(string(f))
		if err != nil {
			return nil, fmt.Errorf("cgroup.procs: %q is not a PID", f)
		}
		out = append(out, n)
	}
	return out, nil
}

// ErrUnavailable is wrapped by Detect's error when no cgroup can be
// managed here.
var ErrUnavailable = errors.New("cgroup: no cgroup the caller may manage")
