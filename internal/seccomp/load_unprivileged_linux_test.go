//go:build linux

package seccomp

import (
	"os"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/net/bpf"
	"golang.org/x/sys/unix"
	"kernel.org/pub/linux/libs/security/libcap/psx"

	"github.com/openparallax/sandbox/internal/childtest"
)

// allowAll is a filter that allows every system call: what these tests
// check is where a filter and no_new_privs end up, not what a filter denies.
var allowAll = Filter{Name: "allow-all", Program: []bpf.RawInstruction{{Op: 0x06, K: 0x7fff0000}}}

// loadMissingFirstPrctl makes LoadUnprivileged(allowAll) with its first
// no_new_privs prctl missed (missFirstNoNewPrivs), and checks that it
// succeeds after wantCalls prctls and leaves every thread with the state
// want (" nnp=N seccomp=M": its NoNewPrivs and Seccomp fields).
func loadMissingFirstPrctl(t *testing.T, wantCalls int, want string) {
	t.Helper()
	calls := missFirstNoNewPrivs(t)
	if err := LoadUnprivileged(allowAll); err != nil {
		t.Fatalf("LoadUnprivileged: %v", err)
	}
	if *calls != wantCalls {
		t.Errorf("no_new_privs set %d times, want %d", *calls, wantCalls)
	}
	var states []string
	for tid, f := range childtest.ThreadStatus(t) {
		s := tid + " nnp=" + f["NoNewPrivs"] + " seccomp=" + f["Seccomp"]
		if !strings.HasSuffix(s, want) {
			t.Errorf("thread %s: want%s on every thread", s, want)
		}
		states = append(states, s)
	}
	t.Logf("%d threads: %s", len(states), strings.Join(states, "; "))
}

// missFirstNoNewPrivs makes the next setNoNewPrivs set nothing, as if the
// goroutine had moved to another thread right after it, and counts calls.
func missFirstNoNewPrivs(t *testing.T) *int {
	calls := new(int)
	real := setNoNewPrivs
	t.Cleanup(func() { setNoNewPrivs = real })
	setNoNewPrivs = func() error {
		*calls++
		if *calls == 1 {
			return nil
		}
		return real()
	}
	return calls
}

// TestLoadUnprivilegedMovedGoroutine: LoadUnprivileged whose goroutine is
// on a thread without no_new_privs at the seccomp call (the prctl missed,
// as if the goroutine had moved between the two calls), after every
// thread's capabilities were emptied as ApplySelf does first. The kernel
// refuses the filter (EACCES, nothing installed), LoadUnprivileged makes
// the pinned Load, and every thread ends with the filter and
// no_new_privs. As root, the capabilities are dropped in the child; as
// nobody there are none to drop.
func TestLoadUnprivilegedMovedGoroutine(t *testing.T) {
	if !Supported() {
		t.Skip("the kernel does not support seccomp filters with SECCOMP_RET_ERRNO")
	}
	childtest.Run(t, func(t *testing.T) {
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var none [2]unix.CapUserData
		if _, _, e := psx.Syscall3(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&none[0])), 0); e != 0 {
			t.Fatalf("capset: %v", e)
		}
		// 2 prctls: the first seccomp call was refused and the pinned
		// retry taken.
		loadMissingFirstPrctl(t, 2, " nnp=1 seccomp=2")
	})
}

// TestLoadUnprivilegedNeedsTheDrop is the control of the test above and
// the reason for LoadUnprivileged's precondition: with CAP_SYS_ADMIN kept
// (root), the same missed prctl does not stop the filter, and no thread
// gets no_new_privs (TSYNC copies it only from a calling thread that has
// it). That is why ApplySelf empties every thread's capabilities before
// it loads unpinned, and why Load pins.
func TestLoadUnprivilegedNeedsTheDrop(t *testing.T) {
	if !Supported() {
		t.Skip("the kernel does not support seccomp filters with SECCOMP_RET_ERRNO")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root: the case is a thread holding CAP_SYS_ADMIN")
	}
	childtest.Run(t, func(t *testing.T) {
		// 1 prctl: the filter was installed at once, without
		// no_new_privs anywhere (the kernel rule this test documents).
		loadMissingFirstPrctl(t, 1, " nnp=0 seccomp=2")
	})
}
