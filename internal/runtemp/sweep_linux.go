package runtemp

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/openparallax/sandbox/internal/cgroup"
	"github.com/openparallax/sandbox/internal/safefs"
)

// Temporary directories of a killed caller. Run removes its temporary
// directory when the run ends; a caller killed mid-run cannot. So each
// directory is named for its caller, "sandbox-run-<pidns>-<pid>-<start>-
// <random>" (the PID namespace, PID and start time that identify a
// process across PID reuse: cgroup.Owner, as the trees' cgroups are
// named), and Run sweeps the caller's temporary directory for those whose
// caller is dead: at a process's first Run in that temporary directory,
// and after that on a Run at least sweepEvery after the last sweep there
// (sweepDue). A directory a caller killed leaves is therefore removed by
// the first Run of any process started after, or within sweepEvery by a
// process that keeps running: the sweep is garbage collection of private
// directories (mode 0700, their user's), which nothing else reads, so
// only when it happens moves, not what it removes.
//
// What the sweep removes: an entry of the temporary directory whose name
// has that form, whose caller lived in this PID namespace and is known
// dead (its PID names no process, or one started at another time), and
// that is a directory (not a link to one: looked at with fstatat, never
// followed) owned by this process's effective user. Everything else is
// left: another user's directories, a live caller's (this process's
// own included), one of another PID namespace (a container sharing /tmp:
// its PIDs mean other processes here), one whose caller's /proc entry
// cannot be read (a caller confined without /proc cannot tell), and
// directories of an older version's "sandbox-run-<random>" form, whose
// caller cannot be known. It removes through descriptors only
// (safefs.RemoveAll beneath the pinned temporary directory). It lists at
// most maxSweepEntries names: a temporary directory with more is not
// swept. Its errors are not reported (a directory it cannot remove now is
// tried again by the next sweep).

// maxSweepEntries bounds the listing of the caller's temporary directory
// by a sweep.
const maxSweepEntries = 1 << 16

const runTempPrefix = "sandbox-run-"

// runOwner is this process's identity, read once.
var runOwner = sync.OnceValues(cgroup.Self)

// Pattern is os.MkdirTemp's pattern for a Run's temporary
// directory: named for this process, or "sandbox-run-*" where its
// identity cannot be read (such a directory is never swept).
func Pattern() string {
	o, err := runOwner()
	if err != nil {
		return runTempPrefix + "*"
	}
	return fmt.Sprintf("%s%d-%d-%d-*", runTempPrefix, o.PIDNS, o.PID, o.Start)
}

// parseRunTemp returns the caller a Run temporary directory's name names.
func parseRunTemp(name string) (cgroup.Owner, bool) {
	rest, ok := strings.CutPrefix(name, runTempPrefix)
	f := strings.Split(rest, "-")
	if !ok || len(f) != 4 || f[3] == "" {
		return cgroup.Owner{}, false
	}
	ns, err1 := strconv.ParseUint(f[0], 10, 64)
	pid, err2 := strconv.Atoi(f[1])
	start, err3 := strconv.ParseUint(f[2], 10, 64)
	if err1 != nil || err2 != nil || err3 != nil || pid <= 0 {
		return cgroup.Owner{}, false
	}
	return cgroup.Owner{PIDNS: ns, PID: pid, Start: start}, true
}

// sweepEvery is how long after a sweep of a temporary directory the next
// Run in this process sweeps it again. Listing the temporary directory
// costs about a fifth of a millisecond with a few hundred entries, and
// Run's whole own cost is about a millisecond: paid once a minute, not on
// every Run.
const sweepEvery = time.Minute

// swept records, per temporary directory (resolved), when this process
// may next sweep it.
var swept struct {
	sync.Mutex
	next map[string]time.Time
}

// sweepDue reports whether a Run at now sweeps tmp, and if so records the
// sweep: true at the first call for tmp in this process and then at most
// once per sweepEvery (the monotonic clock: a change of the wall clock
// neither hastens nor delays it). Concurrent Runs do not wait for one
// another's sweep: one of them sweeps.
func sweepDue(tmp string, now time.Time) bool {
	swept.Lock()
	defer swept.Unlock()
	if next, ok := swept.next[tmp]; ok && now.Before(next) {
		return false
	}
	if swept.next == nil {
		swept.next = make(map[string]time.Time)
	}
	swept.next[tmp] = now.Add(sweepEvery)
	return true
}

// sweepLazily sweeps tmp, the resolved temporary directory a Run's
// directory is made in, when sweepDue says so.
func sweepLazily(tmp string) {
	if sweepDue(tmp, time.Now()) {
		sweep(tmp)
	}
}

// sweep removes the temporary directories of dead callers in tmp, the
// caller's temporary directory, resolved (see above).
func sweep(tmp string) {
	self, err := runOwner()
	if err != nil {
		return
	}
	d, err := safefs.Pin(tmp)
	if err != nil {
		return
	}
	defer d.Close()
	ents, err := d.ReadDir("", maxSweepEntries)
	if err != nil {
		return
	}
	euid := os.Geteuid()
	for _, e := range ents {
		owner, ok := parseRunTemp(e.Name)
		if !ok || !e.Type.IsDir() || !owner.Dead(self.PIDNS) {
			continue
		}
		fi, err := d.Lstat(e.Name)
		if err != nil || !fi.Mode.IsDir() || int(fi.Uid) != euid {
			continue
		}
		d.RemoveAll(e.Name)
	}
}
