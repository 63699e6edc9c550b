//go:build linux

package sandbox_test

// Executing a program after ApplySelf, as root, gains no capability: the
// bounding set ApplySelf leaves is inert under no_new_privs (see
// internal/linux's dropCapabilities for the kernel's rule).

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
	"kernel.org/pub/linux/libs/security/libcap/psx"

	"github.com/openparallax/sandbox"
	"github.com/openparallax/sandbox/internal/childtest"
)

func init() {
	// caps-self: the capabilities, effective user ID and no_new_privs of
	// this process, as "eff=… prm=… inh=… amb=… euid=… nnp=…".
	childHelpers["caps-self"] = func([]string) int {
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var data [2]unix.CapUserData
		if err := unix.Capget(&hdr, &data[0]); err != nil {
			fmt.Fprintln(os.Stderr, "capget:", err)
			return 3
		}
		set := func(f func(unix.CapUserData) uint32) uint64 {
			return uint64(f(data[1]))<<32 | uint64(f(data[0]))
		}
		var amb uint64
		for c := range 64 {
			if v, err := unix.PrctlRetInt(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_IS_SET, uintptr(c), 0, 0); err == nil && v == 1 {
				amb |= 1 << c
			}
		}
		nnp, _ := unix.PrctlRetInt(unix.PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0)
		fmt.Printf("eff=%x prm=%x inh=%x amb=%x euid=%d nnp=%d\n",
			set(func(d unix.CapUserData) uint32 { return d.Effective }),
			set(func(d unix.CapUserData) uint32 { return d.Permitted }),
			set(func(d unix.CapUserData) uint32 { return d.Inheritable }),
			amb, os.Geteuid(), nnp)
		return 0
	}
}

// capsPrograms makes, in the parent, copies of this test binary in a
// directory shared with the child: "plain", and where asked "suid"
// (set-user-ID root) and "fcap" (file capabilities cap_net_raw and
// cap_sys_admin, permitted and effective, set with setcap). It skips t
// when setcap is missing or refused.
func capsPrograms(t *testing.T, kinds ...string) string {
	t.Helper()
	dir := childtest.Dir(t)
	if childtest.InChild(t) {
		return dir
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kinds {
		dst := filepath.Join(dir, k)
		copyFile(t, self, dst)
		switch k {
		case "suid":
			if err := os.Chmod(dst, 0o4755); err != nil {
				t.Fatal(err)
			}
		case "fcap":
			setcap, err := exec.LookPath("setcap")
			if err != nil {
				t.Skip("setcap (libcap2-bin) not installed: cannot make a file-capability program")
			}
			if out, err := exec.Command(setcap, "cap_net_raw,cap_sys_admin+ep", dst).CombinedOutput(); err != nil {
				t.Skipf("setcap refused (a file system without security.capability?): %v %s", err, out)
			}
		}
	}
	return dir
}

// capsOf runs prog in caps-self mode and returns what it printed.
func capsOf(t *testing.T, prog string) string {
	t.Helper()
	out, err := exec.Command(prog, helperArg, "caps-self").Output()
	if err != nil {
		t.Fatalf("%s: %v", prog, err)
	}
	return strings.TrimSpace(string(out))
}

// As root, after ApplySelf, executing a program (any program: root's
// execve grants the bounding set), a set-user-ID-root program and a
// file-capability program each starts with every capability set empty.
func TestApplySelfExecGainsNoCapability(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: a set-user-ID-root program and file capabilities grant nothing more to others")
	}
	requireSandbox(t)
	dir := capsPrograms(t, "plain", "suid", "fcap")
	childtest.Run(t, func(t *testing.T) {
		if err := sandbox.New().ApplySelf(sandbox.Config{AllowProcessSpawn: true, AllowedExecPaths: []string{dir}}); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"plain", "suid", "fcap"} {
			got := capsOf(t, filepath.Join(dir, k))
			if want := "eff=0 prm=0 inh=0 amb=0 euid=0 nnp=1"; got != want {
				t.Errorf("%s after ApplySelf: %s, want %s", k, got, want)
			}
		}
	})
}

// The control: without no_new_privs, a root process whose permitted,
// effective, inheritable and ambient sets are empty regains its bounding
// set by executing any program. It shows that the test above would see a
// gain, and why ApplySelf's no_new_privs is what makes the bounding set
// inert.
func TestExecGainsBoundingSetWithoutNoNewPrivs(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: only a root execve is granted the bounding set")
	}
	dir := capsPrograms(t, "plain")
	childtest.Run(t, func(t *testing.T) {
		// Empty the permitted, effective, inheritable (and so ambient)
		// sets of every thread, as ApplySelf does, but set no no_new_privs.
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var data [2]unix.CapUserData
		_, _, e := psx.Syscall3(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0)
		runtime.KeepAlive(&hdr)
		runtime.KeepAlive(&data)
		if e != 0 {
			t.Fatalf("capset: %v", e)
		}
		got := capsOf(t, filepath.Join(dir, "plain"))
		if !strings.Contains(got, "nnp=0") || strings.Contains(got, "prm=0 ") {
			t.Errorf("root execve without no_new_privs: %s, want the bounding set in prm", got)
		}
	})
}
