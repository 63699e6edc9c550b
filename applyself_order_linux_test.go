//go:build linux

package sandbox_test

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/net/bpf"

	"github.com/openparallax/sandbox"
	"github.com/openparallax/sandbox/internal/childtest"
	"github.com/openparallax/sandbox/internal/seccomp"
)

// TestApplySelfSeccompFailureAfterDrop: ApplySelf empties every thread's
// capabilities first, then loads the seccomp filter on every thread, then
// enforces Landlock (internal/linux's applyLinux). Here the filter's load
// fails: another thread carries a filter of its own, which TSYNC will not
// replace (the kernel's seccomp_can_sync_threads). The error must be
// ErrPartiallyApplied and say what was and was not applied; every thread
// holds no capability (as root: the drop came first), and Landlock is not
// in force (a file outside every grant can still be written).
func TestApplySelfSeccompFailureAfterDrop(t *testing.T) {
	requireSandbox(t)
	dir := childtest.Dir(t)
	childtest.Run(t, func(t *testing.T) {
		raw, err := bpf.Assemble([]bpf.Instruction{bpf.RetConstant{Val: 0x7fff0000}}) // SECCOMP_RET_ALLOW
		if err != nil {
			t.Fatal(err)
		}
		loaded := make(chan error)
		go func() {
			// This thread keeps its own filter, and no other goroutine
			// runs on it: it stays locked, parked, until the child exits.
			runtime.LockOSThread()
			loaded <- seccomp.LoadCallingThreadOnly(seccomp.Filter{Name: "allow-all", Program: raw})
			select {}
		}()
		if err := <-loaded; err != nil {
			t.Fatalf("a filter on one thread: %v", err)
		}
		err = sandbox.New().ApplySelf(sandbox.Config{})
		if !errors.Is(err, sandbox.ErrPartiallyApplied) || !strings.Contains(err.Error(), "capabilities emptied, seccomp failed, landlock not applied") {
			t.Fatalf("ApplySelf with a thread's own filter in the way: %v, want ErrPartiallyApplied naming what was applied", err)
		}
		t.Logf("ApplySelf: %v", err)
		threads := childtest.ThreadStatus(t)
		if len(threads) < 2 {
			t.Fatalf("%d threads read: the thread with its own filter is one more", len(threads))
		}
		for tid, f := range threads {
			for _, k := range []string{"CapPrm", "CapEff"} {
				if f[k] != "0000000000000000" {
					t.Errorf("thread %s: %s = %q: a capability kept after ApplySelf's drop", tid, k, f[k])
				}
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "outside"), []byte("x"), 0o600); err != nil {
			t.Errorf("writing outside every grant: %v; Landlock was not to be applied", err)
		}
	})
}
