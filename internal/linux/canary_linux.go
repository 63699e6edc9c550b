//go:build linux

package linux

// The Linux canary. Each probe attempts one thing the sandbox must deny and
// counts it "blocked" only on the errno that proves the sandbox denied it:
// EACCES from Landlock, EPERM from seccomp or Landlock's scoping. Targets are
// chosen so that nothing else could give that answer: ordinary permissions
// are checked first with faccessat(2), which Landlock does not mediate, and a
// target the Config grants is never used. Probes leave nothing behind: a file
// a failing probe creates is removed, a process a failing probe creates
// exits at once and is reaped, sockets are closed.
//
// Besides the probes that follow the Config, three do not depend on it
// (canary_threads_linux.go): syscall_filter (calls only seccomp answers),
// threads (every thread under a seccomp filter with no_new_privs) and
// capabilities (no thread holds one). A Config that grants spawn, UDP and
// unix sockets skips the probes seccomp would otherwise answer; these still
// tell a process without a filter from a sandboxed one.

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/openparallax/sandbox/internal/probe"
	"github.com/openparallax/sandbox/internal/rawsys"
	"github.com/openparallax/sandbox/internal/spec"
)

const probeTimeout = 200 * time.Millisecond

// Verify runs the Linux canary's probes for rc in the calling process (the
// probes of sandbox.VerifyCanaryFor, whose mechanism is spec.ModeLandlock):
// each denied operation counts as blocked only on the errno that proves the
// sandbox denied it, and the positive controls must still work.
func Verify(rc *spec.Resolved) []spec.ProbeResult {
	k := kernel()
	layer := canaryLayer(rc)
	probes := []spec.ProbeResult{
		probeFileRead(rc),
		probeFileWrite(rc, layer),
		probeNetwork(rc, k.abi),
	}
	probes = append(probes, probeDenyWrite(rc)...)
	probes = append(probes, probeDenyRead(rc)...)
	spawn := probeProcessSpawn(rc) // forks from fresh threads too
	// Read once, after the spawn probe started its threads: the threads
	// probe, the capabilities probe and the spawn probe's own claim that
	// every thread is filtered all use it. A thread started later inherits
	// the filter and capabilities of a thread read here.
	threads, terr := readThreads()
	if spawn.Status == spec.ProbeBlocked {
		err := terr
		if err == nil {
			err = threadsFiltered(threads)
		}
		if err != nil {
			spawn = spec.ProbeResult{Name: spawn.Name, Status: spec.ProbeFailed, Target: spawn.Target, Error: err.Error()}
		}
	}
	probes = append(probes,
		spawn,
		probeExec(rc),
		probeUDP(rc),
		probeUnixAbstract(rc, k.abi),
		probeSignal(k.abi),
		probeSyscallFilter(),
		probeThreads(threads, terr),
		probeCapabilities(threads, terr),
	)
	probes = append(probes, probe.PositiveControls(rc, probeTimeout)...)
	return probes
}

// granted reports whether path is inside anything the sandbox grants: the
// Config's paths or a default system path. Such a path proves nothing.
func granted(rc *spec.Resolved, path string) bool {
	under := func(root string) bool { return spec.Under(path, root) }
	for _, list := range [][]spec.Path{rc.Read, rc.Write, rc.Exec} {
		for _, rp := range list {
			if under(rp.Resolved) {
				return true
			}
		}
	}
	if rc.Config.AllowSharedMemory && under(sharedMemoryDir) {
		return true
	}
	for _, sp := range SystemPaths {
		if r, err := filepath.EvalSymlinks(sp.Path); err == nil && under(r) {
			return true
		}
	}
	return false
}

// dacAllows asks the kernel whether ordinary permissions (and not the
// sandbox: Landlock does not mediate access(2)) allow mode on path.
func dacAllows(path string, mode uint32) bool {
	return unix.Faccessat(unix.AT_FDCWD, path, mode, unix.AT_EACCESS) == nil
}

// modeAllows reports whether the permission bits of path grant want (an
// rwx triple, e.g. 3 for write and search) to this process's effective
// uid and gid (or, for uid 0, whatever they say: the canary's root has
// dropped its capabilities, but owns what it probes).
func modeAllows(path string, want uint32) bool {
	var st unix.Stat_t
	if unix.Stat(path, &st) != nil {
		return false
	}
	uid, gid := uint32(os.Geteuid()), uint32(os.Getegid())
	switch {
	case st.Uid == uid:
		return st.Mode>>6&want == want
	case st.Gid == gid:
		return st.Mode>>3&want == want
	}
	return st.Mode&want == want
}

// target picks the first candidate that exists, is not granted, and that
// ordinary permissions allow.
func target(rc *spec.Resolved, mode uint32, candidates ...string) (string, bool) {
	for _, c := range candidates {
		r, err := filepath.EvalSymlinks(c)
		if err != nil || granted(rc, r) || !dacAllows(r, mode) {
			continue
		}
		return r, true
	}
	return "", false
}

func probeFileRead(rc *spec.Resolved) spec.ProbeResult {
	path, ok := target(rc, unix.R_OK, "/etc/passwd", "/etc/group", "/etc/hostname", "/etc/os-release")
	if !ok {
		return probe.Skipped("file_read", "no readable file outside the granted paths to probe")
	}
	return probe.Outcome("file_read", path, probe.TryRead(path), syscall.EACCES)
}

// probeFileWrite creates a file in a directory outside the grants. Under
// the mount layer (see canary_mount_linux.go) /tmp and /dev/shm are the
// sandbox's own, and the rest is a read-only mount: the target is taken
// elsewhere and EROFS counts too.
func probeFileWrite(rc *spec.Resolved, layer bool) spec.ProbeResult {
	candidates := []string{"/tmp", "/var/tmp", "/dev/shm", os.TempDir()}
	blocked := []syscall.Errno{syscall.EACCES}
	if layer {
		candidates = []string{"/var/tmp", "/var/cache", "/root", "/home", "/"}
		blocked = append(blocked, syscall.EROFS)
	}
	var dir string
	ok := false
	if layer {
		// access(2) answers EROFS on the read-only mounts: ordinary
		// permissions are read from the mode instead.
		for _, c := range candidates {
			if r, err := filepath.EvalSymlinks(c); err == nil && !granted(rc, r) && modeAllows(r, 3) {
				dir, ok = r, true
				break
			}
		}
	} else {
		dir, ok = target(rc, unix.W_OK|unix.X_OK, candidates...)
	}
	if !ok {
		return probe.Skipped("file_write", "no writable directory outside the granted paths to probe")
	}
	path, err := probe.TryCreate(dir)
	return probe.Outcome("file_write", path, err, blocked...)
}

// probeNetwork connects to a loopback port the Config does not grant, with
// no listener expected: ECONNREFUSED means the connect was let through.
func probeNetwork(rc *spec.Resolved, abi int) spec.ProbeResult {
	port := probe.Port(rc)
	if port == 0 {
		return probe.Skipped("network", "every candidate port is granted by the config")
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	d := net.Dialer{Timeout: probeTimeout}
	d.SetMultipathTCP(false)
	c, err := d.Dial("tcp", addr)
	if c != nil {
		c.Close()
	}
	r := probe.Outcome("network", addr, err, syscall.EACCES, syscall.EPERM)
	tcpGranted := len(rc.Connect) > 0 || len(rc.Bind) > 0
	if r.Status == spec.ProbeFailed && tcpGranted && abi >= 1 && abi < 4 {
		return probe.Skipped("network", "requires Landlock ABI 4 (Linux 6.7+) to restrict TCP ports; this kernel has ABI "+strconv.Itoa(abi))
	}
	return r
}

// probeProcessSpawn tries to create a process, from the calling thread and
// from other OS threads. Its "blocked" holds only together with the check,
// made by Verify from /proc, that every thread of the process runs
// under the same seccomp filters: a filter loaded without TSYNC leaves the
// other threads free to fork.
func probeProcessSpawn(rc *spec.Resolved) spec.ProbeResult {
	const name = "process_spawn"
	if rc.Config.AllowProcessSpawn {
		return probe.Skipped(name, "process spawn is granted by the config")
	}
	if e := rawsys.Fork(); e != syscall.EPERM {
		return probe.Outcome(name, "fork", errnoErr("fork on the calling thread", e), syscall.EPERM)
	}
	// Other OS threads: the runtime's existing threads are covered by the
	// /proc check below; these are goroutines pinned to fresh threads.
	var wg sync.WaitGroup
	errs := make([]syscall.Errno, 4)
	for i := range errs {
		wg.Go(func() {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			errs[i] = rawsys.Fork()
		})
	}
	wg.Wait()
	for _, e := range errs {
		if e != syscall.EPERM {
			return probe.Outcome(name, "fork", errnoErr("fork on another thread", e), syscall.EPERM)
		}
	}
	// Verify checks from /proc that every thread is filtered.
	return spec.ProbeResult{Name: name, Status: spec.ProbeBlocked, Target: "fork", Error: "fork: " + syscall.EPERM.Error() + " on every thread"}
}

func errnoErr(op string, e syscall.Errno) error {
	if e == 0 {
		return nil
	}
	return fmt.Errorf("%s: %w", op, e)
}

// probeExec asks the kernel to execute a program outside the exec allowlist
// with an invalid argv pointer. The kernel checks the file (Landlock's
// execute right, EACCES) before it reads argv (EFAULT), and seccomp denies
// execve outright (EPERM); so EFAULT means "would have run", and the process
// is never replaced whatever the answer.
func probeExec(rc *spec.Resolved) spec.ProbeResult {
	path, ok := target(rc, unix.X_OK, "/bin/sh", "/usr/bin/env", "/bin/ls", "/usr/bin/id")
	if !ok {
		return probe.Skipped("exec", "no executable outside the exec allowlist to probe")
	}
	p, err := syscall.BytePtrFromString(path)
	if err != nil {
		return probe.Skipped("exec", err.Error())
	}
	_, _, e := syscall.RawSyscall(syscall.SYS_EXECVE, uintptr(unsafe.Pointer(p)), 1, 0)
	if e == 0 {
		e = syscall.EFAULT // unreachable: the process would have been replaced
	}
	err = probe.PathErr("execve", path, e)
	if e == syscall.EFAULT {
		err = fmt.Errorf("execve %s: passed the permission checks (EFAULT on the deliberately bad argv)", path)
	}
	return probe.Outcome("exec", path, err, syscall.EACCES, syscall.EPERM)
}

func probeUDP(rc *spec.Resolved) spec.ProbeResult {
	if rc.Config.AllowUDP {
		return probe.Skipped("udp", "UDP is granted by the config")
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err == nil {
		// Allowed: only the egress layer's namespace may allow it
		// (canary_udp_linux.go).
		defer unix.Close(fd)
		return udpContainment(fd)
	}
	return probe.Outcome("udp", "socket(AF_INET, SOCK_DGRAM)", probe.ErrOp("socket", err), syscall.EPERM)
}

// probeUnixAbstract connects to an abstract unix socket that something
// outside the sandbox listens on. Without AF_UNIX granted, socket() itself
// is the denial.
func probeUnixAbstract(rc *spec.Resolved, abi int) spec.ProbeResult {
	const name = "unix_abstract"
	if !rc.Config.AllowUnixSockets {
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err == nil {
			unix.Close(fd)
		}
		return probe.Outcome(name, "socket(AF_UNIX)", probe.ErrOp("socket", err), syscall.EPERM)
	}
	if abi < 6 {
		return probe.Skipped(name, "requires Landlock ABI 6 (Linux 6.12+) to scope abstract unix sockets; this kernel has ABI "+strconv.Itoa(abi))
	}
	names, err := abstractListeners()
	if err != nil {
		return probe.Skipped(name, "cannot list abstract unix sockets: "+err.Error())
	}
	for _, n := range names {
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return probe.Outcome(name, "@"+n, probe.ErrOp("socket", err), syscall.EPERM)
		}
		err = unix.Connect(fd, &unix.SockaddrUnix{Name: "@" + n})
		unix.Close(fd)
		if errors.Is(err, syscall.ECONNREFUSED) {
			continue // gone or not accepting: try another
		}
		return probe.Outcome(name, "@"+n, probe.ErrOp("connect", err), syscall.EPERM)
	}
	return probe.Skipped(name, "no abstract unix socket listening outside the sandbox to probe")
}

// abstractListeners lists listening abstract stream sockets from
// /proc/self/net/unix.
func abstractListeners() ([]string, error) {
	f, err := os.Open("/proc/self/net/unix")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	s := bufio.NewScanner(f)
	for s.Scan() {
		// Num RefCount Protocol Flags Type St Inode Path
		fields := strings.Fields(s.Text())
		if len(fields) < 8 || !strings.HasPrefix(fields[7], "@") {
			continue
		}
		if fields[3] == "00010000" && fields[4] == "0001" { // __SO_ACCEPTCON, SOCK_STREAM
			out = append(out, fields[7][1:])
		}
	}
	return out, s.Err()
}

// probeSignal sends signal 0 to the parent, which is outside the sandbox
// when an Engine started this Agent (the case the canary exists for).
func probeSignal(abi int) spec.ProbeResult {
	const name = "signal"
	if abi < 6 {
		return probe.Skipped(name, "requires Landlock ABI 6 (Linux 6.12+) to scope signals; this kernel has ABI "+strconv.Itoa(abi))
	}
	ppid := os.Getppid()
	var st unix.Stat_t
	if ppid <= 1 || unix.Stat("/proc/"+strconv.Itoa(ppid), &st) != nil {
		return probe.Skipped(name, "no parent process to probe")
	}
	if euid := os.Geteuid(); euid != 0 && int(st.Uid) != euid {
		return probe.Skipped(name, "the parent belongs to another user: ordinary permissions already forbid signalling it")
	}
	err := syscall.Kill(ppid, 0)
	if errors.Is(err, syscall.ESRCH) {
		return probe.Skipped(name, "the parent exited")
	}
	return probe.Outcome(name, "kill(ppid "+strconv.Itoa(ppid)+", 0)", probe.ErrOp("kill", err), syscall.EPERM)
}
