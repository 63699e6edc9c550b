//go:build linux

package cgroup

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The reaper: what removes the trees' cgroups of a caller that was killed.
//
// A tree's cgroup is removed by the process that made it (Group.Close).
// cgroup v2 has no self-removal, and v1's release_agent is host-wide, so a
// caller killed before its Close leaves the cgroup behind, and with it the
// tree, which nothing else may end: under WrapCommand a descendant of the
// program outlives the caller (Pdeathsig reaches only the program). The
// next New in the same PID namespace removes it (cleanStale), but there may
// be no next New.
//
// So the first New of a process starts one reaper for it, in the
// background: a re-execution of the caller's executable (/proc/self/exe)
// with argv[0] ReaperArg0, taken over by this package's init function
// before the host's main can run. The reaper holds a pidfd of the caller
// and waits for it to become readable, which it does when the caller's
// last thread has exited, however it died. Then it kills what is left in
// each cgroup the caller made (Kill: cgroup.kill, or the v1 freezer) and
// removes it, as cleanStale would, and exits. While the caller lives, it
// does nothing else and holds nothing of the caller's but the pidfd: no
// descriptor of the caller, the working directory "/", an environment of
// only its marker, a session of its own (a ^C to the caller's terminal
// does not reach it), no Pdeathsig.
//
// The reaper stays in the caller's cgroup (a service manager counts it as
// the caller's: it exits just after the caller, and a unit's stop kills it
// with the caller's other processes).
//
// As with the Go trampoline, the host's init functions run in the reaper
// (package initialisation comes before this package's init), its main
// never does. One reaper is started per process and hierarchy, not per
// tree: its cost (one start of the host) is paid once.
//
// The reaper is best effort and the sweep in New stays: a reaper that
// could not start, or that was killed with its caller (a whole session
// or a systemd unit stopped at once), leaves the cleanup to the next New
// in the PID namespace. ReaperErr says why the last start failed.

// ReaperArg0 is argv[0] of a reaper process, as ps shows it.
const ReaperArg0 = "openparallax-sandbox-cgroup-reaper"

// envReaper marks a reaper's environment: a process whose argv[0] is
// ReaperArg0 runs as one only when it is there.
const envReaper = "OPENPARALLAX_SANDBOX_CGROUP_REAPER"

func init() {
	if len(os.Args) == 0 || os.Args[0] != ReaperArg0 {
		return
	}
	if _, ok := syscall.Getenv(envReaper); !ok {
		os.Stderr.WriteString("sandbox: started as a cgroup reaper without its environment: refusing to run the host program\n")
		os.Exit(125)
	}
	if err := reap(os.Args[1:]); err != nil {
		os.Stderr.WriteString("sandbox: cgroup reaper: " + err.Error() + "\n")
		os.Exit(1)
	}
	os.Exit(0)
}

// reaperOff stops New from starting reapers (tests of the sweep alone).
var reaperOff bool

var reapers struct {
	sync.Mutex
	started map[string]bool // reaper arguments, per start
	err     error
}

// ReaperErr is why the last reaper start failed, nil when none did.
func ReaperErr() error {
	reapers.Lock()
	defer reapers.Unlock()
	return reapers.err
}

// owner is the identity a tree's cgroup name records: this process's PID
// namespace, PID and start time.
type owner struct {
	pidns uint64
	pid   int
	start uint64
}

func self() (owner, error) {
	var st unix.Stat_t
	if err := unix.Stat("/proc/self/ns/pid", &st); err != nil {
		return owner{}, fmt.Errorf("cgroup: %w", err)
	}
	start, ok := startTime(os.Getpid())
	if !ok {
		return owner{}, errors.New("cgroup: cannot read this process's start time")
	}
	return owner{st.Ino, os.Getpid(), start}, nil
}

func (o owner) String() string { return fmt.Sprintf("%d.%d.%d", o.pidns, o.pid, o.start) }

// reaperArgs are the reaper's arguments for m and the caller o: o, the
// version, and hierarchy=directory for each hierarchy in which groups are
// looked for.
func (m *Manager) reaperArgs(o owner) []string {
	args := []string{o.String(), strconv.Itoa(int(m.Version))}
	for _, c := range m.allHierarchies() {
		args = append(args, c+"="+m.dirs[c])
	}
	return args
}

// startReaper starts the reaper for m's hierarchies and this process,
// unless one was started already.
func (m *Manager) startReaper(o owner) {
	if reaperOff {
		return
	}
	args := m.reaperArgs(o)
	key := strings.Join(args, "\x00")
	reapers.Lock()
	defer reapers.Unlock()
	if reapers.started[key] {
		return
	}
	cmd := exec.Command("/proc/self/exe", args...)
	cmd.Args[0] = ReaperArg0
	cmd.Env = []string{envReaper + "=1"}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		reapers.err = fmt.Errorf("cgroup: starting the reaper: %w", err)
		return
	}
	if reapers.started == nil {
		reapers.started = map[string]bool{}
	}
	reapers.started[key] = true
	// It exits after this process does; should it die first, this Wait
	// reaps it (no zombie).
	go cmd.Wait()
}

// reap is the reaper: args as reaperArgs made them.
func reap(args []string) error {
	if len(args) < 3 {
		return fmt.Errorf("bad arguments %q", args)
	}
	ns, pid, start, ok := parseGroupName(args[0] + ".x")
	if !ok {
		return fmt.Errorf("bad owner %q", args[0])
	}
	v, err := strconv.Atoi(args[1])
	if err != nil || (Version(v) != V1 && Version(v) != V2) {
		return fmt.Errorf("bad version %q", args[1])
	}
	m := &Manager{Version: Version(v), dirs: map[string]string{}}
	for _, a := range args[2:] {
		c, dir, ok := strings.Cut(a, "=")
		if !ok || !strings.HasPrefix(dir, "/") || (m.Version == V2) != (c == "") {
			return fmt.Errorf("bad hierarchy %q", a)
		}
		m.dirs[c] = dir
	}
	o := owner{ns, pid, start}
	waitGone(o)
	_, err = m.clean(func(n uint64, p int, s uint64) bool { return owner{n, p, s} == o })
	return err
}

// waitGone returns once the process o has exited (a zombie has).
func waitGone(o owner) {
	fd, err := unix.PidfdOpen(o.pid, 0)
	if err == unix.ESRCH {
		return
	}
	if err == nil {
		defer unix.Close(fd)
	}
	for alive(o) {
		if err != nil {
			// No pidfd (Linux before 5.3): look every second.
			time.Sleep(time.Second)
			continue
		}
		// The pidfd was opened while o was alive (checked after the
		// open): it is o's, and readable once o has exited.
		unix.Poll([]unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}, -1)
	}
}

// alive reports whether the process o is running: its PID names a process
// started at o's start time that is not a zombie.
func alive(o owner) bool {
	state, start, ok := procStat(o.pid)
	return ok && start == o.start && !slices.Contains([]string{"Z", "X", "x"}, state)
}
