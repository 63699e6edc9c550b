//go:build linux

package rawsys

import (
	"runtime"
	"syscall"
	"testing"
)

// The probes' success path: where nothing denies them, every helper must
// create a child, keep it from running Go code, reap it, and return 0 with
// the caller intact. A vfork child shares the caller's stack, so a helper
// that lets it touch that stack corrupts what the caller gets back.
func TestCreatesAndReaps(t *testing.T) {
	probes := map[string]func() syscall.Errno{
		"fork":       Fork,
		"clone":      func() syscall.Errno { return Clone(0) },
		"clone-high": CloneHighBits,
		"clone3":     Clone3,
	}
	if runtime.GOARCH == "amd64" {
		probes["vfork"] = Vfork
	}
	for name, probe := range probes {
		for range 50 {
			if e := probe(); e != 0 {
				t.Fatalf("%s: errno %d (%v), want 0: a child created and reaped", name, int(e), e)
			}
		}
	}
	var ws syscall.WaitStatus
	if pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil); err != syscall.ECHILD {
		t.Fatalf("a child is left behind (wait4: pid %d, %v)", pid, err)
	}
}
