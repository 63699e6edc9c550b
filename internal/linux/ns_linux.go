//go:build linux

package linux

// The parent's half of the namespace layer of WrapCommand and Run: the
// clone flags, user-namespace maps and capabilities of the child half, and
// the availability probe. The child's half is the namespace step of the
// child half in use: the static helper's ns_step (internal/spawnhelper's
// c/helper.c), or the Go trampoline's namespaceStep and ApplyMounts
// (internal/trampoline) where the helper cannot run.

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/openparallax/sandbox/internal/mountns"
	"github.com/openparallax/sandbox/internal/spawnhelper"
	"github.com/openparallax/sandbox/internal/trampoline"
)

// nsAttr returns the SysProcAttr fields the child half needs to start in
// new namespaces: a mount namespace (the mount layer), an IPC namespace (a
// private System V IPC and POSIX message queue namespace: issue 13), a
// network namespace when net is set (the egress layer's step), a PID
// namespace when pid is set (Run with spawn and without TTY: the tree
// dies with its PID 1, also when the caller is killed; see Run's doc and
// killTree in session_linux.go), and, when this process is not root, a user
// namespace that maps only the caller's own uid and gid to themselves
// (files keep their owners; setgroups is denied, as the kernel requires of
// an unprivileged gid map).
//
// The child half needs CAP_SYS_ADMIN in the new namespaces to mount. A root
// caller's child has it. An unprivileged caller's child has every
// capability in its user namespace until execve, which keeps only ambient
// ones: CAP_SYS_ADMIN (the mounts), CAP_SETPCAP (so that the child half's
// capability drop can empty the bounding set too) and, with net,
// CAP_NET_ADMIN (bringing up loopback, the transparent path's routes) and
// CAP_NET_BIND_SERVICE (its listeners on allowed ports below 1024 and the
// resolver's socket on port 53) are made ambient, and the child half drops
// them all before the target runs. A root caller whose SysProcAttr.
// Credential makes the child another user gets the same ambient set (in
// the host's user namespace, as a root child has them anyway; the same
// drop applies).
func nsAttr(base *syscall.SysProcAttr, net, pid bool) (*syscall.SysProcAttr, error) {
	attr := &syscall.SysProcAttr{}
	if base != nil {
		*attr = *base
	}
	switch {
	case attr.Cloneflags != 0, attr.Unshareflags != 0:
		return nil, errors.New("SysProcAttr.Cloneflags and Unshareflags cannot be combined with the sandbox's namespaces")
	case len(attr.UidMappings) > 0 || len(attr.GidMappings) > 0 || attr.GidMappingsEnableSetgroups:
		return nil, errors.New("SysProcAttr's uid and gid maps cannot be combined with the sandbox's user namespace")
	case len(attr.AmbientCaps) > 0:
		return nil, errors.New("SysProcAttr.AmbientCaps cannot be combined with the sandbox (its child half drops every capability)")
	}
	attr.Cloneflags = syscall.CLONE_NEWNS | syscall.CLONE_NEWIPC
	if net {
		attr.Cloneflags |= syscall.CLONE_NEWNET
	}
	if pid {
		attr.Cloneflags |= syscall.CLONE_NEWPID
	}
	caps := []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETPCAP}
	if net {
		caps = append(caps, unix.CAP_NET_ADMIN, unix.CAP_NET_BIND_SERVICE)
	}
	uid, gid := os.Geteuid(), os.Getegid()
	if uid == 0 {
		if c := attr.Credential; c != nil && c.Uid != 0 {
			attr.AmbientCaps = caps
		}
		return attr, nil
	}
	if c := attr.Credential; c != nil {
		return nil, fmt.Errorf("SysProcAttr.Credential cannot be combined with the sandbox's user namespace (this process is not root: uid %d)", uid)
	}
	attr.Cloneflags |= syscall.CLONE_NEWUSER
	attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
	attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	attr.GidMappingsEnableSetgroups = false
	attr.AmbientCaps = caps
	return attr, nil
}

var (
	nsProbeOnce sync.Once
	nsProbed    nsState
)

// namespaces reports whether WrapCommand and Run can start their child half
// in new namespaces here. It tries it for real, once per process: the
// child half WrapCommand uses (childHalf) is started under the clone flags
// nsAttr gives, with a payload whose namespace step makes mounts of every
// kind the layer uses (a private propagation, a recursive read-only
// remount, a tmpfs, a /dev/null mask: mount, open_tree, move_mount and
// mount_setattr), and which then exits 0 (trampoline.FlagProbe) without
// confining itself or running anything.
// Creating a user namespace can be refused outright (a sysctl, a
// container's seccomp profile), or allowed without capabilities inside
// (Ubuntu's AppArmor restriction): only a mount that fails finds the latter.
func namespaces() nsState {
	nsProbeOnce.Do(func() { nsProbed = probeNamespaces() })
	return nsProbed
}

func probeNamespaces() nsState {
	ops := []mountns.Op{
		{Kind: mountns.OpPrivate, Path: "/"},
		{Kind: mountns.OpSetAttr, Path: "/", Set: mountns.AttrRdonly | mountns.AttrNosuid, Recursive: true},
		{Kind: mountns.OpMaskFile, Path: "/dev/null"},
	}
	if fi, err := os.Stat("/tmp"); err == nil && fi.IsDir() {
		ops = append(ops, mountns.Op{Kind: mountns.OpTmpfs, Path: "/tmp", Mode: 0o1777, Set: mountns.AttrNosuid | mountns.AttrNodev})
	}
	p := &trampoline.Payload{Path: "/", FirstFD: 3, ErrFD: 3,
		Flags:  trampoline.FlagNamespaces | trampoline.FlagProbe,
		Mounts: mountns.Plan{Ops: ops}.MountOps(), Net: trampoline.NetStep{FD: -1}}
	if s, ok := probeNamespacesProvingHelper(p); ok {
		return s
	}
	helper, _ := childHalf()
	if helper == nil {
		if _, err := os.Stat(selfExe); err != nil {
			return nsState{reason: "the helper cannot run here, so the namespace step would run in the Go trampoline, a re-exec of " + selfExe + ", which is missing: " + err.Error(),
				hint: "mount /proc"}
		}
	}
	pr, err := runProbe("namespace-probe", helper, p, false, nil, nil)
	return namespaceAnswer(pr, err)
}

// probeNamespacesProvingHelper runs the namespace probe with the helper
// before the helper's own probe has run, so that one process start
// answers both questions (every `sandbox run` is a new process and asked
// both): a child that reports its namespace step, success or failure, is
// the helper executing from its memfd, which is all its own probe asks
// (spawnhelper.Proven). ok is false, and nothing is decided, when the
// child could not be started or exited without a report (the helper's
// execution may be what was refused): probeNamespaces then asks the two
// questions one after the other, as before, and the answer is the same as
// theirs.
func probeNamespacesProvingHelper(p *trampoline.Payload) (nsState, bool) {
	if forceGoTrampoline || spawnhelper.Decided() {
		return nsState{}, false
	}
	helper, _ := spawnhelper.Unproven()
	if helper == nil {
		return nsState{}, false
	}
	pr, err := runProbe("namespace-probe", helper, p, false, nil, nil)
	if !provesHelper(pr, err) {
		return nsState{}, false
	}
	spawnhelper.Proven(helper)
	return namespaceAnswer(pr, nil), true
}

// provesHelper reports whether a namespace probe's run with the helper
// shows the helper executed: it exited 0 after its namespace step, or
// sent its report of a failed step. A start refused may be the helper's
// execution refused, and an exit without a report may be anything.
func provesHelper(pr probeRun, err error) bool {
	return err == nil && pr.startErr == nil && (pr.waitErr == nil || pr.failure != nil)
}

// namespaceAnswer is what a namespace probe's run says.
func namespaceAnswer(pr probeRun, err error) nsState {
	switch {
	case err != nil:
		return nsState{reason: "probe: " + err.Error()}
	case pr.startErr != nil:
		return refusedNamespaces(pr.startErr, thisHost())
	case pr.waitErr == nil:
		return nsState{ok: true}
	case pr.failure == nil:
		return nsState{reason: fmt.Sprintf("the namespace probe's child failed (%v) without a report", pr.waitErr)}
	}
	return failedMounts(*pr.failure, thisHost())
}

// probeRun is what a namespace probe's child did: startErr if it could not
// be started (the namespaces refused), else waitErr from its exit and, when
// it failed, its report (nil if it sent none).
type probeRun struct {
	startErr, waitErr error
	failure           *trampoline.Failure
}

// runProbe starts a child half, the helper's memfd, or the Go trampoline
// when helper is nil (WrapCommand's: childHalf), with payload p (ErrFD
// 3: the failure pipe) in new mount and IPC namespaces, and a network
// namespace when net (nsAttr, as for a spawn), with extra as descriptors 4
// and up; calls during, if set, while the child runs; and waits for it. The
// child half exits 0 after its namespace step (trampoline.FlagProbe),
// confining nothing and running nothing. err is a failure here, before the
// child.
func runProbe(name string, helper *os.File, p *trampoline.Payload, net bool, extra []*os.File, during func()) (pr probeRun, err error) {
	defer func() {
		for _, f := range extra {
			f.Close()
		}
	}()
	r, w, err := os.Pipe()
	if err != nil {
		return pr, err
	}
	defer r.Close()
	attr, err := nsAttr(nil, net, false)
	if err != nil {
		w.Close()
		return pr, err
	}
	cmd := exec.Command(selfExe)
	cmd.Args = []string{trampoline.Arg0, name}
	cmd.Dir = "/" // the working directory is looked up again after the mounts
	cmd.Env = p.Environ()
	cmd.ExtraFiles = append([]*os.File{w}, extra...)
	if helper != nil {
		// As WrapCommand does: the last descriptor, executed through
		// /proc/self/fd (the helper marks it close-on-exec).
		cmd.ExtraFiles = append(cmd.ExtraFiles, helper)
		cmd.Path = spawnhelper.Path(3 + len(cmd.ExtraFiles) - 1)
	}
	cmd.SysProcAttr = attr
	pr.startErr = cmd.Start()
	w.Close()
	if pr.startErr != nil {
		return pr, nil
	}
	for _, f := range extra {
		f.Close() // the child's now
	}
	extra = nil
	if during != nil {
		during()
	}
	report, _ := readAll(r)
	if pr.waitErr = cmd.Wait(); pr.waitErr != nil {
		if f, ferr := trampoline.UnmarshalFailure(report); ferr == nil {
			pr.failure = &f
		}
	}
	return pr, nil
}

func readAll(r *os.File) ([]byte, error) {
	var out []byte
	buf := make([]byte, 512)
	for {
		n, err := r.Read(buf)
		out = append(out, buf[:n]...)
		if err != nil {
			return out, err
		}
	}
}

func sysctl(name string) string {
	b, err := os.ReadFile("/proc/sys/" + strings.ReplaceAll(name, ".", "/"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// nsHost is what the explanations below read of this machine: whether
// this process is root, and sysctl values (tests give other ones).
type nsHost struct {
	root   bool
	sysctl func(name string) string
}

func thisHost() nsHost { return nsHost{root: os.Geteuid() == 0, sysctl: sysctl} }

// refusedNamespaces explains a clone of the namespaces that failed.
func refusedNamespaces(err error, h nsHost) nsState {
	what := "clone(CLONE_NEWNS|CLONE_NEWIPC) failed"
	if !h.root {
		what = "clone(CLONE_NEWUSER|CLONE_NEWNS|CLONE_NEWIPC) failed"
	}
	switch {
	case !h.root && h.sysctl("kernel.unprivileged_userns_clone") == "0":
		return nsState{reason: what + ": unprivileged user namespaces are disabled (sysctl kernel.unprivileged_userns_clone = 0)",
			hint: "sysctl -w kernel.unprivileged_userns_clone=1, or run the host as root"}
	case !h.root && h.sysctl("user.max_user_namespaces") == "0":
		return nsState{reason: what + ": user namespaces are disabled (sysctl user.max_user_namespaces = 0)",
			hint: "sysctl -w user.max_user_namespaces=15000, or run the host as root"}
	case errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES):
		return nsState{reason: what + " (" + err.Error() + "): refused by a seccomp filter (a container runtime's default profile refuses new namespaces) or an LSM",
			hint: "run the container with a seccomp profile that allows clone and unshare of namespaces (or with CAP_SYS_ADMIN), or the host outside the container"}
	}
	return nsState{reason: what + ": " + err.Error()}
}

// failedMounts explains a namespace step that failed in the probe.
func failedMounts(f trampoline.Failure, h nsHost) nsState {
	s := nsState{reason: "the namespaces were created, but the mount step failed: " + f.Error()}
	switch {
	case f.Errno == syscall.ENOSYS:
		s.reason += ": this kernel lacks the mount API (open_tree and move_mount need Linux 5.2, mount_setattr 5.12), or a seccomp filter hides it"
		s.hint = "upgrade the kernel to 5.12 or later"
	case (f.Errno == syscall.EPERM || f.Errno == syscall.EACCES) && !h.root && h.sysctl("kernel.apparmor_restrict_unprivileged_userns") == "1":
		s.reason += ": Ubuntu's AppArmor restricts unprivileged user namespaces (sysctl kernel.apparmor_restrict_unprivileged_userns = 1), which are then created without capabilities"
		s.hint = "give this program an AppArmor profile that allows userns (Ubuntu 23.10+: a profile with the \"userns,\" rule), or sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"
	case f.Errno == syscall.EPERM || f.Errno == syscall.EACCES:
		s.reason += ": refused by a seccomp filter or an LSM"
		s.hint = "allow mount, open_tree, move_mount and mount_setattr to this program (a container's seccomp profile), or run it outside the container"
	}
	return s
}
