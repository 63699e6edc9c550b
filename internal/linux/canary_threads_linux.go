//go:build linux

package linux

// The canary's checks of what the kernel says about every thread, and the
// probe that only the seccomp filter can answer.
//
// Probes that attempt a file, a socket or a fork can all be skipped by a
// Config that grants them (spawn, UDP, unix sockets), and Landlock answers
// the file ones: a process with no seccomp filter at all could then pass.
// These checks do not depend on the Config: every thread must be under a
// seccomp filter with no_new_privs set and hold no capability, and three
// system calls that the filter always denies must be denied.

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/openparallax/sandbox/internal/probe"
	"github.com/openparallax/sandbox/internal/spec"
	"golang.org/x/sys/unix"
)

// threadState is what /proc/self/task/<tid>/status says about one thread.
type threadState struct {
	tid        string
	seccomp    string // "0" none, "1" strict, "2" filter
	filters    string // Seccomp_filters: how many filters (Linux 5.9+; "" before)
	noNewPrivs string // NoNewPrivs: "1" when set
	uids       []string
	caps       map[string]uint64 // CapInh, CapPrm, CapEff, CapBnd, CapAmb
}

// readThreads reads the status of every thread of the process. A thread
// that exits while it is read is left out.
func readThreads() ([]threadState, error) {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil, fmt.Errorf("cannot list threads: %w", err)
	}
	var out []threadState
	for _, t := range tasks {
		ts, err := readThreadStatus(t.Name())
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ESRCH) {
			continue // the thread exited meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("thread %s: %w", t.Name(), err)
		}
		out = append(out, ts)
	}
	if len(out) == 0 {
		return nil, errors.New("no thread listed in /proc/self/task")
	}
	return out, nil
}

func readThreadStatus(tid string) (threadState, error) {
	ts := threadState{tid: tid, caps: map[string]uint64{}}
	f, err := os.Open("/proc/self/task/" + tid + "/status")
	if err != nil {
		return ts, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		k, v, _ := strings.Cut(s.Text(), ":")
		v = strings.TrimSpace(v)
		switch k {
		case "Seccomp":
			ts.seccomp = v
		case "Seccomp_filters":
			ts.filters = v
		case "NoNewPrivs":
			ts.noNewPrivs = v
		case "Uid":
			ts.uids = strings.Fields(v)
		case "CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb":
			n, err := strconv.ParseUint(v, 16, 64)
			if err != nil {
				return ts, fmt.Errorf("%s: %q: %w", k, v, err)
			}
			ts.caps[k] = n
		}
	}
	if err := s.Err(); err != nil {
		return ts, err
	}
	if ts.seccomp == "" || ts.noNewPrivs == "" {
		return ts, errors.New("status has no Seccomp or NoNewPrivs line")
	}
	return ts, nil
}

// threadsFiltered checks that every thread is in seccomp filter mode with
// the same number of filters (a filter loaded without TSYNC leaves the
// other threads with fewer) and with no_new_privs set. Before Linux 5.9
// status has no Seccomp_filters line: then only the mode is compared.
func threadsFiltered(threads []threadState) error {
	want := ""
	for _, t := range threads {
		if t.seccomp != "2" {
			return fmt.Errorf("thread %s is not under a seccomp filter (Seccomp: %s)", t.tid, t.seccomp)
		}
		if t.filters == "0" {
			return fmt.Errorf("thread %s has no seccomp filter (Seccomp_filters: 0)", t.tid)
		}
		if want == "" {
			want = t.filters
		} else if t.filters != want {
			return fmt.Errorf("thread %s has %s seccomp filters, others %s: not loaded with TSYNC", t.tid, t.filters, want)
		}
		if t.noNewPrivs != "1" {
			return fmt.Errorf("thread %s does not have no_new_privs (NoNewPrivs: %s): executing a set-user-ID or file-capability program would gain privileges", t.tid, t.noNewPrivs)
		}
	}
	return nil
}

// probeThreads is "threads": every thread under a seccomp filter, the same
// number of filters on each, no_new_privs on each. It reads the kernel's own
// account, so a process whose other probes were skipped (granted by the
// Config) or answered by Landlock alone cannot pass without a filter.
func probeThreads(threads []threadState, err error) spec.ProbeResult {
	const name = "threads"
	if err != nil {
		return spec.ProbeResult{Name: name, Status: spec.ProbeFailed, Target: "/proc/self/task", Error: err.Error()}
	}
	if err := threadsFiltered(threads); err != nil {
		return spec.ProbeResult{Name: name, Status: spec.ProbeFailed, Target: "/proc/self/task", Error: err.Error()}
	}
	filters := threads[0].filters
	if filters == "" {
		filters = "an unknown number of" // before Linux 5.9
	}
	return spec.ProbeResult{Name: name, Status: spec.ProbeBlocked, Target: "/proc/self/task",
		Error: fmt.Sprintf("%d threads, each with Seccomp: 2 (%s filters) and NoNewPrivs: 1", len(threads), filters)}
}

// probeCapabilities is "capabilities": no thread holds a capability, and
// none can gain one by executing a program.
//
// CapEff (what the thread may use now), CapPrm (what it may make effective
// with capset) and CapInh and CapAmb (what an executed program would
// receive) must be empty on every thread, whoever the process runs as: a
// thread holding any fails the probe.
//
// CapBnd, the ceiling on what executing a program can grant, is reported,
// not required to be empty. Executing any program as root yields every
// capability in the bounding set, except under no_new_privs: then the
// kernel limits the permitted set an execve produces to the old one, here
// empty, for a root execve, a set-user-ID program and a file-capability
// program alike (security/commoncap.c, cap_bprm_creds_from_file;
// Documentation/userspace-api/no_new_privs.rst). So a thread with any user
// ID 0 and a non-empty bounding set fails the probe unless it has
// no_new_privs (which the threads probe requires as well). For a thread
// whose user IDs are all non-zero a non-empty bounding set is accepted
// either way: with an empty permitted set and no_new_privs nothing is
// gained.
//
// The probe counts as blocked only for a process running as user 0, whose
// capabilities someone had to drop. A process that is not root and holds
// none had none to drop: that proves nothing about a sandbox, so the probe
// is skipped (as a probe without a target is), and an unsandboxed
// unprivileged process still reports nothing blocked.
//
// Capabilities are per thread, and are checked on every thread.
func probeCapabilities(threads []threadState, err error) spec.ProbeResult {
	const name = "capabilities"
	if err != nil {
		return spec.ProbeResult{Name: name, Status: spec.ProbeFailed, Target: "/proc/self/task", Error: err.Error()}
	}
	root := false
	var bounding uint64
	for _, t := range threads {
		for _, set := range []string{"CapEff", "CapPrm", "CapInh", "CapAmb"} {
			if c := t.caps[set]; c != 0 {
				return spec.ProbeResult{Name: name, Status: spec.ProbeFailed, Target: "/proc/self/task",
					Error: fmt.Sprintf("thread %s holds capabilities: %s %016x", t.tid, set, c)}
			}
		}
		// Real, effective, saved and filesystem user IDs; none read: assume root.
		if len(t.uids) == 0 || slices.Contains(t.uids, "0") {
			root = true
			c := t.caps["CapBnd"]
			if c != 0 && t.noNewPrivs != "1" {
				return spec.ProbeResult{Name: name, Status: spec.ProbeFailed, Target: "/proc/self/task",
					Error: fmt.Sprintf("thread %s runs as user 0 with a bounding set %016x and without no_new_privs: executing a program would grant those capabilities", t.tid, c)}
			}
			bounding |= c
		}
	}
	if !root {
		return probe.Skipped(name, "not root and holding no capability (CapEff, CapPrm, CapInh, CapAmb empty): nothing was dropped, so this proves nothing; the bounding set of a non-root process is not required to be empty")
	}
	msg := "user 0 holding no capability on any thread: CapEff, CapPrm, CapInh, CapAmb and the bounding set empty"
	if bounding != 0 {
		msg = fmt.Sprintf("user 0 holding no capability on any thread: CapEff, CapPrm, CapInh, CapAmb empty; "+
			"bounding set %016x left, which grants nothing under no_new_privs (an execve's permitted set is limited to the old, empty one: cap_bprm_creds_from_file)", bounding)
	}
	return spec.ProbeResult{Name: name, Status: spec.ProbeBlocked, Target: "/proc/self/task", Error: msg}
}

// probeSyscallFilter is "syscall_filter": three system calls that the
// sandbox's seccomp filter denies with EPERM whatever the Config grants,
// each chosen so that without a filter the kernel gives a different answer
// and nothing happens:
//
//   - ptrace(PTRACE_PEEKUSER, own thread): ESRCH, since no thread traces
//     itself (the check comes before any permission check: Yama and
//     capabilities do not decide it).
//   - process_vm_readv with flags 1: EINVAL, the first check it makes.
//   - unshare(0): succeeds and changes nothing.
//
// All three must answer EPERM. A seccomp filter other than the sandbox's
// (a container runtime's) that also denies them would pass this probe; the
// threads probe and the others are what tie the result to this sandbox.
func probeSyscallFilter() spec.ProbeResult {
	const name = "syscall_filter"
	tid := unix.Gettid()
	attempts := []struct {
		what string
		call func() syscall.Errno
	}{
		{"ptrace(PTRACE_PEEKUSER, self)", func() syscall.Errno {
			_, _, e := syscall.Syscall6(syscall.SYS_PTRACE, syscall.PTRACE_PEEKUSR, uintptr(tid), 0, 0, 0, 0)
			return e
		}},
		{"process_vm_readv(flags 1)", func() syscall.Errno {
			_, _, e := syscall.Syscall6(unix.SYS_PROCESS_VM_READV, uintptr(os.Getpid()), 0, 0, 0, 0, 1)
			return e
		}},
		{"unshare(0)", func() syscall.Errno {
			_, _, e := syscall.Syscall(syscall.SYS_UNSHARE, 0, 0, 0)
			return e
		}},
	}
	var names []string
	for _, a := range attempts {
		names = append(names, a.what)
		if e := a.call(); e != syscall.EPERM {
			err := errnoErr(a.what, e)
			if err == nil {
				err = fmt.Errorf("%s: not denied: the call succeeded", a.what)
			}
			return spec.ProbeResult{Name: name, Status: spec.ProbeFailed, Target: a.what, Error: err.Error() + " (the sandbox's seccomp filter answers EPERM)"}
		}
	}
	return spec.ProbeResult{Name: name, Status: spec.ProbeBlocked, Target: strings.Join(names, ", "), Error: "each: " + syscall.EPERM.Error()}
}
