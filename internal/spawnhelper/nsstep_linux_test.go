//go:build linux && (amd64 || arm64)

package spawnhelper

import (
	"encoding/base64"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/openparallax/sandbox/internal/egress"
	"github.com/openparallax/sandbox/internal/trampoline"
)

// nsOutcome is what a child half did with a namespace payload: its exit
// status, and its report. A report goes to the failure pipe once the child
// half knows the pipe; a payload the Go trampoline cannot parse is reported
// on standard error instead ("sandbox: cannot start TARGET: ..."), where
// the helper, which reads the descriptor layout first, still uses the pipe:
// the report is the same either way.
type nsOutcome struct {
	code    int
	failure trampoline.Failure
}

// fromStderr parses a report written to standard error.
func fromStderr(s string) (trampoline.Failure, bool) {
	rest, ok := strings.CutPrefix(strings.TrimSuffix(s, "\n"), "sandbox: cannot start ")
	if !ok {
		return trampoline.Failure{}, false
	}
	// TARGET: STEP DETAIL (no errno in the reports this applies to).
	_, msg, ok := strings.Cut(rest, ": ")
	step, detail, _ := strings.Cut(msg, " ")
	return trampoline.Failure{Step: step, Detail: detail}, ok
}

// runNamespaceStep runs the payload in env (FlagNamespaces, ErrFD 3) in the helper
// (helper true; with qemu, the arm64 helper under that qemu-user) or in
// the Go trampoline (this test binary: it imports
// internal/trampoline, whose init takes over when the marker is set), in
// dir, with the clone flags unshare (Go makes the new mount namespace's
// propagation private before exec, so nothing either child does reaches the
// host's mount table) and extra as descriptors 4 and up. during runs while
// the child does.
func runNamespaceStep(t *testing.T, helper bool, qemu string, env []string, dir string, unshare uintptr, extra []*os.File, during func()) nsOutcome {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	bin := "/proc/self/exe"
	if helper {
		bin = filepath.Join(t.TempDir(), "helper")
		if err := os.WriteFile(bin, image, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(bin, "target-argv0")
	cmd.Args[0] = trampoline.Arg0
	if qemu != "" {
		b, err := os.ReadFile("helper_linux_arm64.bin")
		if err != nil {
			t.Fatal(err)
		}
		bin = filepath.Join(t.TempDir(), "helper-arm64")
		if err := os.WriteFile(bin, b, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd = exec.Command(qemu, "-0", trampoline.Arg0, bin, "target-argv0")
	}
	cmd.Env = env
	cmd.Dir = dir
	cmd.ExtraFiles = append([]*os.File{w}, extra...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Unshareflags: unshare}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err = cmd.Start()
	w.Close()
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	if during != nil {
		during()
	}
	report, _ := io.ReadAll(r)
	err = cmd.Wait()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("wait: %v", err)
	}
	out := nsOutcome{code: cmd.ProcessState.ExitCode()}
	switch {
	case len(report) > 0:
		if out.failure, err = trampoline.UnmarshalFailure(report); err != nil {
			t.Fatalf("report %q: %v", report, err)
		}
	case stderr.Len() > 0:
		var ok bool
		if out.failure, ok = fromStderr(stderr.String()); !ok {
			t.Fatalf("standard error: %q", stderr.String())
		}
	}
	return out
}

func mountNS(t *testing.T) [2]uint64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat("/proc/self/ns/mnt", &st); err != nil {
		t.Fatal(err)
	}
	return [2]uint64{st.Dev, st.Ino}
}

// TestNamespaceStepParity: the helper's namespace step (c/helper.c ns_step)
// and the Go trampoline's (namespaceStep, ApplyMounts, netStep) do the same
// with the same payloads: both succeed on a plan with every kind of op,
// and both fail each way with the same report (step, errno, detail) and
// exit status. Every child runs in a new private mount namespace and every
// path is in the test's directory, so nothing reaches the host. Where
// qemu-user is installed, the arm64 helper runs the cases qemu-user can
// emulate too.
func TestNamespaceStepParity(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the children unshare a mount namespace (CAP_SYS_ADMIN)")
	}
	if _, why := Executable(); why != "" {
		t.Skipf("the helper cannot run here: %s", why)
	}
	dir := t.TempDir()
	for _, d := range []string{"src", "work", "t"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"file", "secret"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	at := func(s string) string { return filepath.Join(dir, s) }
	const (
		rdonly = 0x1
		nosuid = 0x2
		nodev  = 0x4
	)
	everyKind := []trampoline.MountOp{
		{Kind: trampoline.MountPrivate, Path: "/"},
		{Kind: trampoline.MountClone, Path: at("src"), Slot: 0},
		{Kind: trampoline.MountClone, Path: at("file"), Slot: 1},
		{Kind: trampoline.MountTmpfs, Path: at("t"), Mode: 0o700, Set: nosuid | nodev},
		{Kind: trampoline.MountAttach, Path: at("t/a/b"), Slot: 0, Create: true},
		{Kind: trampoline.MountAttach, Path: at("t/c/f"), Slot: 1, Create: true, File: true},
		{Kind: trampoline.MountSetAttr, Path: at("t/a/b"), Set: rdonly, Recursive: true},
		{Kind: trampoline.MountMaskFile, Path: at("secret")},
	}
	const probe = trampoline.FlagNamespaces | trampoline.FlagProbe
	// On a root that is the initial ramfs (the kernel matrix's guests)
	// pivot_root refuses to leave it: both halves must say so alike.
	ownRoot := nsOutcome{code: 0}
	if mi, _ := os.ReadFile("/proc/self/mountinfo"); strings.Contains(string(mi), " / / ") && strings.Contains(string(mi), " - rootfs rootfs ") {
		ownRoot = nsOutcome{125, trampoline.Failure{Step: "pivot_root", Errno: syscall.EINVAL, Detail: at("t")}}
	}
	cases := []struct {
		name    string
		ops     []trampoline.MountOp
		flags   uint32
		cwd     string
		unshare uintptr
		ownNS   bool // ParentMountNS is the child's own: the refusal
		net     *trampoline.NetStep
		// patchPort replaces the network step's port on the wire (a
		// u32 there; NetStep's uint16 cannot hold what the parser must
		// refuse).
		patchPort uint32
		// patchPool replaces the inbound pool's size on the wire, so
		// that both parsers see one above MaxInboundPool.
		patchPool uint32
		want      nsOutcome
	}{
		{name: "every kind of op", ops: everyKind, flags: probe, want: nsOutcome{code: 0}},
		{name: "still in the caller's mount namespace", ownNS: true,
			ops: []trampoline.MountOp{{Kind: trampoline.MountSetAttr, Path: at("missing"), Set: rdonly}},
			want: nsOutcome{125, trampoline.Failure{Step: "namespace step",
				Detail: "still in the caller's mount namespace (was cmd.SysProcAttr replaced after WrapCommand?): refusing to mount"}}},
		{name: "setattr of a missing path", ops: []trampoline.MountOp{{Kind: trampoline.MountSetAttr, Path: at("missing"), Set: rdonly}},
			want: nsOutcome{125, trampoline.Failure{Step: "mount_setattr", Errno: syscall.ENOENT, Detail: at("missing")}}},
		{name: "clone of a missing path", ops: []trampoline.MountOp{{Kind: trampoline.MountClone, Path: at("missing")}},
			want: nsOutcome{125, trampoline.Failure{Step: "open_tree", Errno: syscall.ENOENT, Detail: at("missing")}}},
		{name: "attach without a clone", ops: []trampoline.MountOp{{Kind: trampoline.MountAttach, Path: at("work"), Slot: 3}},
			want: nsOutcome{125, trampoline.Failure{Step: "move_mount (no such clone)", Errno: syscall.EINVAL, Detail: at("work")}}},
		{name: "a slot cloned twice", ops: []trampoline.MountOp{
			{Kind: trampoline.MountClone, Path: at("src"), Slot: 2}, {Kind: trampoline.MountClone, Path: at("work"), Slot: 2}},
			want: nsOutcome{125, trampoline.Failure{Step: "open_tree (slot used twice)", Errno: syscall.EINVAL, Detail: at("work")}}},
		{name: "tmpfs on a missing path", ops: []trampoline.MountOp{{Kind: trampoline.MountTmpfs, Path: at("missing"), Mode: 0o755}},
			want: nsOutcome{125, trampoline.Failure{Step: "mount(tmpfs)", Errno: syscall.ENOENT, Detail: at("missing")}}},
		{name: "a mount point beneath a file", ops: []trampoline.MountOp{
			{Kind: trampoline.MountClone, Path: at("src"), Slot: 0}, {Kind: trampoline.MountAttach, Path: at("file/sub"), Slot: 0, Create: true}},
			want: nsOutcome{125, trampoline.Failure{Step: "mkdir (mount point in the plan's tmpfs)", Errno: syscall.ENOTDIR, Detail: at("file/sub")}}},
		{name: "mask of a missing file", ops: []trampoline.MountOp{{Kind: trampoline.MountMaskFile, Path: at("missing")}},
			want: nsOutcome{125, trampoline.Failure{Step: "move_mount /dev/null", Errno: syscall.ENOENT, Detail: at("missing")}}},
		{name: "the working directory hidden by the mounts", cwd: at("work"),
			ops:  []trampoline.MountOp{{Kind: trampoline.MountPrivate, Path: "/"}, {Kind: trampoline.MountTmpfs, Path: dir, Mode: 0o755}},
			want: nsOutcome{125, trampoline.Failure{Step: "chdir", Errno: syscall.ENOENT, Detail: at("work") + " (the working directory, after the mounts)"}}},
		// The own root (internal/mountns's root.go): a clone of the test
		// directory taken before a tmpfs in it becomes the root, a fresh
		// procfs made there first, then the clone attached at its own
		// path in the new root (the working directory is found again
		// there) and a link made beside it.
		{name: "the own root", flags: probe, want: ownRoot, ops: []trampoline.MountOp{
			{Kind: trampoline.MountPrivate, Path: "/"},
			{Kind: trampoline.MountClone, Path: dir, Slot: 0, NoFollow: true},
			{Kind: trampoline.MountTmpfs, Path: at("t"), Mode: 0o755, Set: nosuid | nodev},
			{Kind: trampoline.MountProc, Path: at("t/proc"), Create: true, Set: rdonly | nosuid | nodev},
			{Kind: trampoline.MountPivot, Path: at("t")},
			{Kind: trampoline.MountAttach, Path: dir, Slot: 0, Create: true},
			{Kind: trampoline.MountSymlink, Path: "/x/bin", Target: "usr/bin"},
			{Kind: trampoline.MountSetAttr, Path: "/", Set: rdonly},
		}},
		{name: "a pivot into a missing directory", ops: []trampoline.MountOp{
			{Kind: trampoline.MountPrivate, Path: "/"}, {Kind: trampoline.MountPivot, Path: at("missing")}},
			want: nsOutcome{125, trampoline.Failure{Step: "chdir (the new root)", Errno: syscall.ENOENT, Detail: at("missing")}}},
		{name: "a symbolic link over a file", ops: []trampoline.MountOp{{Kind: trampoline.MountSymlink, Path: at("file"), Target: "x"}},
			want: nsOutcome{125, trampoline.Failure{Step: "symlink", Errno: syscall.EEXIST, Detail: at("file")}}},
		{name: "a symbolic link without a target", ops: []trampoline.MountOp{{Kind: trampoline.MountSymlink, Path: at("new")}},
			want: nsOutcome{125, trampoline.Failure{Step: "trampoline", Detail: "invalid invocation (bad mount step)"}}},
		{name: "a target on another kind of op", ops: []trampoline.MountOp{{Kind: trampoline.MountTmpfs, Path: at("t"), Target: "x"}},
			want: nsOutcome{125, trampoline.Failure{Step: "trampoline", Detail: "invalid invocation (bad mount step)"}}},
		{name: "an unknown kind of op", ops: []trampoline.MountOp{{Kind: 99, Path: "/"}},
			want: nsOutcome{125, trampoline.Failure{Step: "trampoline", Detail: "invalid invocation (bad mount step)"}}},
		{name: "a port out of range", net: &trampoline.NetStep{FD: 4, Port: 47000}, flags: probe, patchPort: 70000,
			unshare: unix.CLONE_NEWNS | unix.CLONE_NEWNET,
			want:    nsOutcome{125, trampoline.Failure{Step: "trampoline", Detail: "invalid invocation (bad network step)"}}},
		{name: "lo up: not a new network namespace", net: &trampoline.NetStep{FD: 4, Port: 47001}, flags: probe,
			want: nsOutcome{125, trampoline.Failure{Step: "network step",
				Detail: "lo is already up: not a new network namespace (was cmd.SysProcAttr replaced after WrapCommand?)"}}},
		{name: "the listener handed over", net: &trampoline.NetStep{FD: 4, Port: 47002}, flags: probe,
			unshare: unix.CLONE_NEWNS | unix.CLONE_NEWNET, want: nsOutcome{code: 0}},
		{name: "the transparent sockets handed over", net: &trampoline.NetStep{FD: 4, Port: 47003, Transparent: []uint16{47004, 80}},
			flags: probe, unshare: unix.CLONE_NEWNS | unix.CLONE_NEWNET, want: nsOutcome{code: 0}},
		{name: "a transparent port twice", net: &trampoline.NetStep{FD: 4, Port: 47005, Transparent: []uint16{47006, 47006}},
			flags: probe, unshare: unix.CLONE_NEWNS | unix.CLONE_NEWNET,
			want: nsOutcome{125, trampoline.Failure{Step: "bind", Errno: syscall.EADDRINUSE, Detail: "[::]:47006 (egress listener)"}}},
		{name: "a transparent port out of range", net: &trampoline.NetStep{FD: 4, Port: 47007, Transparent: []uint16{47008}}, flags: probe,
			patchPort: 70000, unshare: unix.CLONE_NEWNS | unix.CLONE_NEWNET,
			want: nsOutcome{125, trampoline.Failure{Step: "trampoline", Detail: "invalid invocation (bad network step)"}}},
		{name: "the inbound pool handed over", net: &trampoline.NetStep{FD: 4, Port: 47009, Pool: 3},
			flags: probe, unshare: unix.CLONE_NEWNS | unix.CLONE_NEWNET, want: nsOutcome{code: 0}},
		{name: "the transparent sockets and the inbound pool handed over", net: &trampoline.NetStep{FD: 4, Port: 47010, Transparent: []uint16{47011}, Pool: 2},
			flags: probe, unshare: unix.CLONE_NEWNS | unix.CLONE_NEWNET, want: nsOutcome{code: 0}},
		{name: "an inbound pool too large", net: &trampoline.NetStep{FD: 4, Port: 47012, Pool: 1}, flags: probe,
			patchPool: trampoline.MaxInboundPool + 1, unshare: unix.CLONE_NEWNS | unix.CLONE_NEWNET,
			want: nsOutcome{125, trampoline.Failure{Step: "trampoline", Detail: "invalid invocation (bad network step)"}}},
	}

	// The arm64 helper under qemu-user, where this is not arm64: qemu-user
	// passes the system calls to this kernel, but it does not know the new
	// mount API (open_tree, move_mount, mount_setattr: ENOSYS), so it runs
	// the cases that do not use it: the namespace and network steps, a
	// tmpfs, the working directory, and the parser.
	qemu, _ := exec.LookPath("qemu-aarch64")
	if runtime.GOARCH == "arm64" {
		qemu = ""
	}
	if qemu == "" {
		t.Log("qemu-aarch64 not installed (Debian package qemu-user), or this is arm64: the arm64 helper is not run under it")
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			runners := []string{"helper", "Go trampoline"}
			if qemu != "" && !slices.ContainsFunc(c.ops, func(o trampoline.MountOp) bool {
				return o.Kind == trampoline.MountClone || o.Kind == trampoline.MountSetAttr ||
					o.Kind == trampoline.MountAttach || o.Kind == trampoline.MountMaskFile
			}) {
				runners = append(runners, "arm64 helper under qemu-user")
			}
			got := make([]nsOutcome, len(runners))
			for k, name := range runners {
				helper := name != "Go trampoline"
				q := ""
				if name == "arm64 helper under qemu-user" {
					q = qemu
				}
				p := &trampoline.Payload{Path: "/nonexistent/target", FirstFD: 3, ErrFD: 3,
					Flags: trampoline.FlagNamespaces | c.flags, Mounts: c.ops, Net: trampoline.NetStep{FD: -1},
					ParentMountNS: mountNS(t)}
				unshare := c.unshare
				if unshare == 0 {
					unshare = unix.CLONE_NEWNS
				}
				if c.ownNS {
					unshare = 0
				}
				var extra []*os.File
				var during func()
				var parentEnd *os.File
				var lerr error
				var laddr string
				if c.net != nil {
					p.Net = *c.net
					var childEnd *os.File
					var err error
					if parentEnd, childEnd, err = egress.SocketPair(); err != nil {
						t.Fatal(err)
					}
					defer parentEnd.Close()
					extra = []*os.File{childEnd}
					during = func() {
						childEnd.Close()
						var h *egress.Handoff
						if h, lerr = egress.ReceiveSockets(parentEnd, 10*time.Second, c.net.Transparent, int(c.net.Pool)); lerr == nil {
							laddr = h.Proxy.Addr().String()
							for i, l := range h.Transparent {
								laddr += " " + l.Addr().String() + "=" + itoa(int(c.net.Transparent[i]))
							}
							if h.Resolver != nil {
								laddr += " " + h.Resolver.LocalAddr().String()
							}
							for range h.Pool {
								laddr += " pool" // each checked by ReceiveSockets: unbound, unconnected AF_INET TCP
							}
							h.Close()
						}
					}
				}
				env := p.Environ()
				if c.patchPort != 0 {
					env = patchNetPort(t, env, c.net, c.patchPort)
				}
				if c.patchPool != 0 {
					env = patchPool(t, env, c.patchPool)
				}
				cwd := c.cwd
				if cwd == "" {
					cwd = dir
				}
				got[k] = runNamespaceStep(t, helper, q, env, cwd, unshare, extra, during)
				if c.net != nil && got[k].code == 0 && (lerr != nil || laddr != wantSockets(c.net)) {
					t.Errorf("%s: the sockets handed over: %q, %v; want %q", name, laddr, lerr, wantSockets(c.net))
				}
			}
			for k, name := range runners {
				if got[k] != c.want {
					t.Errorf("%s: %+v; want %+v", name, got[k], c.want)
				}
			}
		})
	}
}

// wantSockets is what the parity test's receiver records for n: the
// proxy's address, each transparent listener's as "[::]:P=P", and the
// resolver's.
func wantSockets(n *trampoline.NetStep) string {
	s := "127.0.0.1:" + itoa(int(n.Port))
	for _, p := range n.Transparent {
		s += " [::]:" + itoa(int(p)) + "=" + itoa(int(p))
	}
	if len(n.Transparent) > 0 {
		s += " [::]:53"
	}
	for range n.Pool {
		s += " pool"
	}
	return s
}

// patchNetPort rewrites, in a one-chunk payload environment, the network
// step's last transparent port if it has any, else the proxy's port (the
// u32 before the count of transparent ports): both are before the pool's
// size (a u32) and ParentMountNS's two u64, the last 20 bytes.
func patchNetPort(t *testing.T, env []string, n *trampoline.NetStep, port uint32) []string {
	t.Helper()
	name, raw := oneChunk(t, env)
	at := len(raw) - 16 - 4 - 4
	if len(n.Transparent) == 0 {
		at -= 4
	}
	binary.LittleEndian.PutUint32(raw[at:], port)
	return []string{env[0], name + "=" + base64.RawStdEncoding.EncodeToString(raw)}
}

// patchPool rewrites, in a one-chunk payload environment, the network
// step's pool size: the u32 before ParentMountNS's two u64.
func patchPool(t *testing.T, env []string, pool uint32) []string {
	t.Helper()
	name, raw := oneChunk(t, env)
	binary.LittleEndian.PutUint32(raw[len(raw)-16-4:], pool)
	return []string{env[0], name + "=" + base64.RawStdEncoding.EncodeToString(raw)}
}

// oneChunk returns the name and the decoded bytes of the payload chunk of
// env, a payload environment that must have exactly one.
func oneChunk(t *testing.T, env []string) (name string, raw []byte) {
	t.Helper()
	if len(env) != 2 {
		t.Fatalf("want one chunk, got %d entries", len(env))
	}
	name, chunk, _ := strings.Cut(env[1], "=")
	raw, err := base64.RawStdEncoding.DecodeString(chunk)
	if err != nil {
		t.Fatal(err)
	}
	return name, raw
}
