//go:build linux

package sandbox_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/openparallax/sandbox"
)

// pidfdGetInfo is PIDFD_GET_INFO, _IOWR(0xFF, 11, struct pidfd_info)
// with the struct's first version (64 bytes): linux/pidfd.h.
const pidfdGetInfo = 0xc040ff0b

// pidfsView is what the pidfs-ioctl helper saw.
type pidfsView struct {
	Target    int // the process asked about
	OpenErr   int // errno of pidfd_open
	InfoErr   int // errno of ioctl(PIDFD_GET_INFO)
	PPid      int // the ppid the kernel told, when it did
	NSErr     int // errno of ioctl(PIDFD_GET_PID_NAMESPACE)
	PipeErr   int // errno of ioctl(FIONREAD) on a pipe: unrelated, must work
	ApplyFail string
}

func init() {
	// pidfs-ioctl PID [apply]: pidfd_open(PID) (itself when PID is not
	// visible, as in a PID namespace), then the pidfs ioctls on it, after
	// ApplySelf(Config{}) with "apply"; prints a pidfsView.
	childHelpers["pidfs-ioctl"] = func(args []string) int {
		var v pidfsView
		if len(args) > 1 && args[1] == "apply" {
			if err := sandbox.New().ApplySelf(sandbox.Config{}); err != nil {
				v.ApplyFail = err.Error()
			}
		}
		v.Target, _ = strconv.Atoi(args[0])
		fd, err := unix.PidfdOpen(v.Target, 0)
		if err == unix.ESRCH {
			v.Target = os.Getpid()
			fd, err = unix.PidfdOpen(v.Target, 0)
		}
		v.OpenErr = int(errnoOf(err))
		if err == nil {
			var info [128]byte // struct pidfd_info: mask, cgroupid, pid, tgid, ppid, ...
			_, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), pidfdGetInfo, uintptr(unsafe.Pointer(&info[0])))
			v.InfoErr = int(e)
			if e == 0 {
				v.PPid = int(*(*uint32)(unsafe.Pointer(&info[24])))
			}
			_, _, e = unix.Syscall(unix.SYS_IOCTL, uintptr(fd), 0xff05, 0)
			v.NSErr = int(e)
		}
		var p [2]int
		if err := unix.Pipe(p[:]); err != nil {
			v.PipeErr = int(errnoOf(err))
		} else {
			_, err = unix.IoctlGetInt(p[0], unix.TIOCINQ) // FIONREAD
			v.PipeErr = int(errnoOf(err))
		}
		json.NewEncoder(os.Stdout).Encode(v)
		return 0
	}
}

func errnoOf(err error) syscall.Errno {
	if e, ok := err.(syscall.Errno); ok {
		return e
	}
	if err != nil {
		return syscall.EINVAL
	}
	return 0
}

// TestPidfsIoctlRefused: without a PID namespace, pidfd_open and
// PIDFD_GET_INFO would tell a confined program the ppid, uids and cgroup
// of any process on the host (here: the test process, its caller).
// Unconfined the helper reads them (the control: on a kernel without
// PIDFD_GET_INFO, before 6.13, the answer is ENOTTY and the control says
// so); under ApplySelf and under Run the ioctl answers EPERM from the
// seccomp filter, PIDFD_GET_PID_NAMESPACE too, and an unrelated ioctl
// still works.
func TestPidfsIoctlRefused(t *testing.T) {
	requireSandbox(t)
	target := strconv.Itoa(os.Getpid())
	decode := func(what string, out []byte, err error) pidfsView {
		t.Helper()
		var v pidfsView
		if err != nil || json.Unmarshal(out, &v) != nil {
			t.Fatalf("%s: %v\n%s", what, err, out)
		}
		if v.ApplyFail != "" {
			t.Fatalf("%s: ApplySelf: %s", what, v.ApplyFail)
		}
		return v
	}
	cmd := exec.Command(self(t), helperArg, "pidfs-ioctl", target)
	cmd.Env = []string{quickExit}
	out, err := cmd.Output()
	control := decode("unconfined", out, err)
	switch {
	case control.OpenErr != 0:
		t.Skipf("pidfd_open unavailable here (errno %v): nothing to refuse", syscall.Errno(control.OpenErr))
	case control.InfoErr == 0 && control.PPid != os.Getppid():
		t.Fatalf("unconfined PIDFD_GET_INFO told ppid %d, want %d: the helper misreads the struct", control.PPid, os.Getppid())
	case control.InfoErr == int(unix.EPERM):
		t.Fatalf("unconfined PIDFD_GET_INFO answered EPERM: the checks below could not tell the filter's refusal")
	}
	t.Logf("unconfined: PIDFD_GET_INFO errno %v (ppid %d), PIDFD_GET_PID_NAMESPACE errno %v",
		syscall.Errno(control.InfoErr), control.PPid, syscall.Errno(control.NSErr))

	cmd = exec.Command(self(t), helperArg, "pidfs-ioctl", target, "apply")
	cmd.Env = []string{quickExit}
	out, err = cmd.Output()
	views := map[string]pidfsView{"ApplySelf": decode("ApplySelf", out, err)}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := sandbox.Run(ctx, sandbox.Config{}, self(t), []string{helperArg, "pidfs-ioctl", target},
		sandbox.RunOptions{Env: []string{quickExit}})
	views["Run"] = decode("Run", res.Stdout, err)
	for name, v := range views {
		if v.OpenErr != 0 {
			t.Errorf("%s: pidfd_open(%d): %v, want it allowed (only the ioctls are refused)", name, v.Target, syscall.Errno(v.OpenErr))
		}
		if v.InfoErr != int(unix.EPERM) || v.NSErr != int(unix.EPERM) {
			t.Errorf("%s: PIDFD_GET_INFO errno %v (ppid %d), PIDFD_GET_PID_NAMESPACE errno %v; want EPERM for both",
				name, syscall.Errno(v.InfoErr), v.PPid, syscall.Errno(v.NSErr))
		}
		if v.PipeErr != 0 {
			t.Errorf("%s: FIONREAD on a pipe: %v, want it to work", name, syscall.Errno(v.PipeErr))
		}
	}
}
