//go:build linux

package sandbox_test

// Issue 13, System V IPC: with AllowSysVIPC, WrapCommand and Run start the
// program in a private IPC namespace (no mounts needed), so the host's
// segments and queues are out of its reach while its own work; where
// namespaces cannot be made the plan says the host's namespace is shared.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/openparallax/sandbox"
	"github.com/openparallax/sandbox/internal/childtest"
	"github.com/openparallax/sandbox/internal/rawsys"
)

var _ = registerSysVHelpers()

func registerSysVHelpers() bool {
	childHelpers["sysv"] = sysvHelper
	return true
}

// sysvHelper KEY SHMID MSQID prints, one per line, the errno of:
// shmget(KEY, 0, 0) and shmctl(SHMID, IPC_STAT) (a segment the caller made
// outside), msgget(KEY, 0) (a queue the caller made outside), and making,
// attaching, writing, reading back and removing a segment of its own.
func sysvHelper(args []string) int {
	key, _ := strconv.Atoi(args[0])
	shmid, _ := strconv.Atoi(args[1])
	say := func(name string, err error) { fmt.Printf("%s %d\n", name, int(rawsys.Errno(err))) }
	_, err := unix.SysvShmGet(key, 0, 0)
	say("shmget-outside-key", err)
	var desc unix.SysvShmDesc
	_, err = unix.SysvShmCtl(shmid, unix.IPC_STAT, &desc)
	say("shmctl-outside-id", err)
	_, _, e := unix.Syscall(unix.SYS_MSGGET, uintptr(key), 0, 0)
	say("msgget-outside-key", errOrNil(e))
	say("own", ownSegment())
	return 0
}

func errOrNil(e syscall.Errno) error {
	if e == 0 {
		return nil
	}
	return e
}

// ownSegment makes a private segment, writes and reads it back, removes it.
func ownSegment() error {
	id, err := unix.SysvShmGet(unix.IPC_PRIVATE, 4096, unix.IPC_CREAT|0o600)
	if err != nil {
		return err
	}
	defer unix.SysvShmCtl(id, unix.IPC_RMID, nil)
	b, err := unix.SysvShmAttach(id, 0, 0)
	if err != nil {
		return err
	}
	defer unix.SysvShmDetach(b)
	copy(b, "mine")
	if string(b[:4]) != "mine" {
		return syscall.EIO
	}
	return nil
}

// hostIPC makes, in this process's IPC namespace, a segment holding a
// secret and a message queue, both under one key; removed at the end.
func hostIPC(t *testing.T) (key, shmid, msqid int) {
	t.Helper()
	key = 0x5b130000 | os.Getpid()&0xffff
	shmid, err := unix.SysvShmGet(key, 4096, unix.IPC_CREAT|unix.IPC_EXCL|0o600)
	if err != nil {
		t.Fatalf("shmget outside: %v", err)
	}
	t.Cleanup(func() { unix.SysvShmCtl(shmid, unix.IPC_RMID, nil) })
	b, err := unix.SysvShmAttach(shmid, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	copy(b, "host secret")
	unix.SysvShmDetach(b)
	r, _, e := unix.Syscall(unix.SYS_MSGGET, uintptr(key), unix.IPC_CREAT|unix.IPC_EXCL|0o600, 0)
	if e != 0 {
		t.Fatalf("msgget outside: %v", e)
	}
	msqid = int(r)
	t.Cleanup(func() { unix.Syscall(unix.SYS_MSGCTL, uintptr(msqid), unix.IPC_RMID, 0) })
	return key, shmid, msqid
}

// sysvRun runs the helper on the host's key and segment, unconfined (nil
// cfg) or under Run with cfg.
func sysvRun(t *testing.T, cfg *sandbox.Config, key, shmid int) (string, error) {
	t.Helper()
	args := []string{helperArg, "sysv", strconv.Itoa(key), strconv.Itoa(shmid)}
	if cfg == nil {
		cmd := exec.Command(self(t), args...)
		cmd.Env = []string{quickExit}
		out, err := cmd.Output()
		return string(out), err
	}
	res, err := sandbox.Run(context.Background(), *cfg, self(t), args, sandbox.RunOptions{Env: []string{quickExit}})
	if err != nil {
		return "", err
	}
	if res.ExitCode != 0 {
		return string(res.Stdout), fmt.Errorf("exit %d: %s", res.ExitCode, res.Stderr)
	}
	return string(res.Stdout), nil
}

// sysvIPCEntry is the plan's WrapCommand/Run sysv_ipc entry.
func sysvIPCEntry(t *testing.T, cfg sandbox.Config) sandbox.Enforcement {
	t.Helper()
	plan, err := sandbox.PlanFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range plan.Features {
		if f.Feature == sandbox.FeatureSysVIPC {
			if f.Scope != sandbox.ScopeCommand {
				t.Fatalf("the first sysv_ipc entry is not WrapCommand/Run's: %+v", plan.Features)
			}
			return f
		}
	}
	t.Fatalf("no sysv_ipc entry: %+v", plan.Features)
	return sandbox.Enforcement{}
}

// Outside (unconfined, the control) the helper finds the caller's segment
// and queue; under Run with AllowSysVIPC it finds neither (ENOENT for the
// key, EINVAL for the id: they do not exist in its IPC namespace), and its
// own segment works. The plan says so.
func TestRunSysVIPCPrivate(t *testing.T) {
	requireSandbox(t)
	checkSysVIPCPrivate(t)
}

func TestRunSysVIPCPrivateAsNobody(t *testing.T) {
	requireSandbox(t)
	if !childtest.AsNobody(t) {
		return
	}
	checkSysVIPCPrivate(t)
}

func checkSysVIPCPrivate(t *testing.T) {
	key, shmid, _ := hostIPC(t)
	out, err := sysvRun(t, nil, key, shmid)
	if want := "shmget-outside-key 0\nshmctl-outside-id 0\nmsgget-outside-key 0\nown 0\n"; err != nil || out != want {
		t.Fatalf("unconfined control: %v\n%s\nwant\n%s", err, out, want)
	}
	cfg := sandbox.Config{AllowSysVIPC: true}
	f := sysvIPCEntry(t, cfg)
	t.Logf("uid %d, plan: %+v", os.Geteuid(), f)
	if !f.Enforced {
		t.Skipf("namespaces are unavailable here (%s): TestSysVIPCWithoutNamespaces covers this case", f.Detail)
	}
	if !strings.Contains(f.Detail, "private IPC namespace") {
		t.Errorf("plan: %+v; want a private IPC namespace named", f)
	}
	out, err = sysvRun(t, &cfg, key, shmid)
	want := fmt.Sprintf("shmget-outside-key %d\nshmctl-outside-id %d\nmsgget-outside-key %d\nown 0\n", int(syscall.ENOENT), int(syscall.EINVAL), int(syscall.ENOENT))
	if err != nil || out != want {
		t.Errorf("under Run with AllowSysVIPC: %v\n%s\nwant\n%s", err, out, want)
	}
}

// Where namespaces cannot be made (a seccomp filter in this test's child
// refuses them) the plan says the host's IPC namespace is shared, not
// enforced, Strict refuses, and without Strict the program does reach the
// caller's segment: what the plan says.
func TestSysVIPCWithoutNamespaces(t *testing.T) {
	requireSandbox(t)
	childtest.Run(t, func(t *testing.T) {
		refuseNamespaces(t)
		key, shmid, _ := hostIPC(t)
		cfg := sandbox.Config{AllowSysVIPC: true}
		f := sysvIPCEntry(t, cfg)
		if f.Enforced || !strings.Contains(f.Detail, "host's IPC namespace") || !strings.Contains(f.Detail, "unavailable") {
			t.Errorf("plan without namespaces: %+v; want the host's IPC namespace, not enforced, and why", f)
		}
		out, err := sysvRun(t, &cfg, key, shmid)
		if want := "shmget-outside-key 0\nshmctl-outside-id 0\nmsgget-outside-key 0\nown 0\n"; err != nil || out != want {
			t.Errorf("under Run without namespaces: %v\n%s\nwant (the host's IPC, as the plan says)\n%s", err, out, want)
		}
		strict := cfg
		strict.Strict = true
		_, err = sandbox.Run(context.Background(), strict, self(t), []string{helperArg, "say", "ran"}, sandbox.RunOptions{})
		if !errors.Is(err, sandbox.ErrNotEnforced) || !strings.Contains(err.Error(), sandbox.FeatureSysVIPC) {
			t.Errorf("Strict Run: %v; want ErrNotEnforced naming %s", err, sandbox.FeatureSysVIPC)
		}
	})
}

// POSIX message queues live in the IPC namespace's mqueue filesystem, which
// no path reaches, and Landlock checks only the open of a queue: mq_open
// with O_CREAT makes the queue before the open is refused, and mq_unlink
// is not checked at all. So the seccomp filter refuses the mq_* calls, as
// it refuses System V IPC (with AllowSysVIPC they are allowed, in the
// private IPC namespace of WrapCommand and Run).

func init() { childHelpers["mq"] = mqHelper }

// mqHelper NAME prints, one per line, the errno of mq_open(NAME, O_RDWR),
// mq_unlink(NAME) and mq_open(NAME+"-new", O_CREAT|O_EXCL|O_RDWR) (closed
// and removed again if it worked).
func mqHelper(args []string) int {
	fmt.Print(mqCalls(args[0]))
	return 0
}

// mqCalls makes mqHelper's calls in this process and returns its lines.
func mqCalls(name string) string {
	var out strings.Builder
	say := func(what string, e syscall.Errno) { fmt.Fprintf(&out, "%s %d\n", what, int(e)) }
	fd, e := mqOpen(name, unix.O_RDWR)
	if e == 0 {
		unix.Close(fd)
	}
	say("open", e)
	say("unlink", mqUnlink(name))
	fd, e = mqOpen(name+"-new", unix.O_CREAT|unix.O_EXCL|unix.O_RDWR)
	if e == 0 {
		unix.Close(fd)
	}
	say("create", e)
	if e != syscall.EEXIST {
		mqUnlink(name + "-new")
	}
	return out.String()
}

// mqOpen and mqUnlink are the raw system calls (the name without the
// leading slash that the C library strips).
func mqOpen(name string, flags int) (int, syscall.Errno) {
	p, _ := unix.BytePtrFromString(name)
	r, _, e := unix.Syscall6(unix.SYS_MQ_OPEN, uintptr(unsafe.Pointer(p)), uintptr(flags|unix.O_CLOEXEC), 0o600, 0, 0, 0)
	return int(r), e
}

func mqUnlink(name string) syscall.Errno {
	p, _ := unix.BytePtrFromString(name)
	_, _, e := unix.Syscall(unix.SYS_MQ_UNLINK, uintptr(unsafe.Pointer(p)), 0, 0)
	return e
}

// mqExists reports whether this IPC namespace has the queue name.
func mqExists(t *testing.T, name string) bool {
	t.Helper()
	fd, e := mqOpen(name, unix.O_RDONLY)
	if e == 0 {
		unix.Close(fd)
		return true
	}
	if e != syscall.ENOENT {
		t.Fatalf("mq_open(%s): %v", name, e)
	}
	return false
}

// hostQueue makes a POSIX message queue in this process's IPC namespace,
// removed at the end.
func hostQueue(t *testing.T) string {
	t.Helper()
	name := fmt.Sprintf("sbx-test-%d-%d", os.Getpid(), time.Now().UnixNano())
	fd, e := mqOpen(name, unix.O_CREAT|unix.O_EXCL|unix.O_RDWR)
	if e != 0 {
		t.Skipf("cannot make a POSIX message queue here: %v", e)
	}
	unix.Close(fd)
	t.Cleanup(func() { mqUnlink(name); mqUnlink(name + "-new") })
	return name
}

func TestPOSIXMessageQueues(t *testing.T) {
	requireSandbox(t)
	checkPOSIXMessageQueues(t)
}

func TestPOSIXMessageQueuesAsNobody(t *testing.T) {
	requireSandbox(t)
	if !childtest.AsNobody(t) {
		return
	}
	checkPOSIXMessageQueues(t)
}

func checkPOSIXMessageQueues(t *testing.T) {
	run := func(t *testing.T, cfg *sandbox.Config, name string) string {
		t.Helper()
		args := []string{helperArg, "mq", name}
		if cfg == nil {
			cmd := exec.Command(self(t), args...)
			cmd.Env = []string{quickExit}
			out, err := cmd.Output()
			if err != nil {
				t.Fatal(err)
			}
			return string(out)
		}
		res, err := sandbox.Run(context.Background(), *cfg, self(t), args, sandbox.RunOptions{Env: []string{quickExit}})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("Run: %v, exit %d: %s", err, res.ExitCode, res.Stderr)
		}
		return string(res.Stdout)
	}
	refused := fmt.Sprintf("open %d\nunlink %d\ncreate %d\n", int(syscall.EPERM), int(syscall.EPERM), int(syscall.EPERM))
	t.Run("control", func(t *testing.T) {
		name := hostQueue(t)
		if out, want := run(t, nil, name), "open 0\nunlink 0\ncreate 0\n"; out != want {
			t.Fatalf("unconfined: %q, want %q", out, want)
		}
		if mqExists(t, name) {
			t.Error("the unconfined control's mq_unlink left the queue")
		}
	})
	t.Run("Run", func(t *testing.T) {
		name := hostQueue(t)
		if out := run(t, &sandbox.Config{}, name); out != refused {
			t.Errorf("under Run: %q, want %q", out, refused)
		}
		if !mqExists(t, name) || mqExists(t, name+"-new") {
			t.Errorf("under Run the caller's queue was removed (%v) or a new one made (%v)", !mqExists(t, name), mqExists(t, name+"-new"))
		}
	})
	t.Run("ApplySelf", func(t *testing.T) {
		name := childtest.Share(t, func() string { return hostQueue(t) })
		childtest.Run(t, func(t *testing.T) {
			if err := sandbox.New().ApplySelf(sandbox.Config{}); err != nil {
				t.Fatal(err)
			}
			if out := mqCalls(name); out != refused {
				t.Errorf("under ApplySelf: %q, want %q", out, refused)
			}
		})
		if childtest.InChild(t) {
			return
		}
		if !mqExists(t, name) || mqExists(t, name+"-new") {
			t.Errorf("under ApplySelf the caller's queue was removed (%v) or a new one made (%v)", !mqExists(t, name), mqExists(t, name+"-new"))
		}
	})
	t.Run("AllowSysVIPC", func(t *testing.T) {
		name := hostQueue(t)
		cfg := sandbox.Config{AllowSysVIPC: true}
		if f := sysvIPCEntry(t, cfg); !f.Enforced {
			t.Skipf("no private IPC namespace here: %s", f.Detail)
		}
		// Its own namespace: the caller's queue is not there, and the
		// mqueue filesystem is no granted path (Landlock refuses the open
		// of a queue it makes).
		want := fmt.Sprintf("open %d\nunlink %d\ncreate %d\n", int(syscall.ENOENT), int(syscall.ENOENT), int(syscall.EACCES))
		if out := run(t, &cfg, name); out != want {
			t.Errorf("under Run with AllowSysVIPC: %q, want %q", out, want)
		}
		if !mqExists(t, name) || mqExists(t, name+"-new") {
			t.Errorf("the caller's queue was removed (%v) or a new one made here (%v)", !mqExists(t, name), mqExists(t, name+"-new"))
		}
	})
}
