//go:build linux

package cgroup

import (
	"errors"
	"io/fs"
	"os"
	"strconv"
)

// Owner identifies a process for as long as it lives, across PID reuse:
// its PID namespace (the inode of /proc/self/ns/pid), its PID and its
// start time (field 22 of /proc/<pid>/stat, clock ticks after boot). The
// trees' cgroups are named for theirs; the sandbox package names Run's
// temporary directories the same way, so that a later Run can tell one
// whose owner was killed.
type Owner struct {
	PIDNS uint64
	PID   int
	Start uint64
}

// Self is this process's Owner.
func Self() (Owner, error) {
	o, err := self()
	return Owner{o.pidns, o.pid, o.start}, err
}

// Dead reports whether o is known to be gone: it lived in this process's
// PID namespace pidns, and its PID names no process now (ENOENT for
// /proc/<pid>/stat, where /proc/self/stat reads) or one started at
// another time. An owner of another PID namespace is never known dead
// (its PIDs mean other processes here), nor one whose /proc entry cannot
// be read for another reason (a Landlock domain that does not grant
// /proc): a caller that cannot tell leaves the owner's things alone.
func (o Owner) Dead(pidns uint64) bool {
	if o.PIDNS != pidns {
		return false
	}
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		return false
	}
	if _, err := os.Stat("/proc/" + strconv.Itoa(o.PID) + "/stat"); errors.Is(err, fs.ErrNotExist) {
		return true
	} else if err != nil {
		return false
	}
	s, alive := startTime(o.PID)
	if !alive {
		// Read a moment ago, unreadable now: it exited in between, or
		// reading failed; only the former is dead.
		_, err := os.Stat("/proc/" + strconv.Itoa(o.PID))
		return errors.Is(err, fs.ErrNotExist)
	}
	return s != o.Start
}
