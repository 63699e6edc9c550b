//go:build !windows

package sandbox_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openparallax/sandbox"
)

// TestStatusFileFIFOSwap: the Agent owns the workspace, and swaps the
// status file, in a loop, between a FIFO and a regular file (renamed over
// it, as an atomic writer does). Before, the Engine's read saw a regular
// file with lstat and then opened the FIFO that had replaced it, and
// waited for a writer forever, also after the Agent was gone. Now every
// read returns promptly, Status "unknown" (neither the FIFO nor "{}" is a
// result), and a FIFO, a link to /dev/zero, a huge file and a symlinked
// .openparallax are each refused with the reason.
func TestStatusFileFIFOSwap(t *testing.T) {
	ws := t.TempDir()
	dir := filepath.Join(ws, sandbox.StatusDir)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	final := filepath.Join(dir, sandbox.StatusFile)
	if err := os.WriteFile(final, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			tmp := filepath.Join(dir, "swap")
			if i%2 == 0 {
				syscall.Mkfifo(tmp, 0o644)
			} else {
				os.WriteFile(tmp, []byte("{}"), 0o644)
			}
			os.Rename(tmp, final)
		}
	})
	// Whatever the loop leaves a reader blocked on, release it at the end.
	defer func() {
		close(stop)
		wg.Wait()
		if fd, err := syscall.Open(final, syscall.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			syscall.Close(fd)
		}
	}()
	nonce := sandbox.NewCanaryNonce()
	// The swap must land between the old code's lstat and its open: read
	// for two seconds (tens of thousands of reads).
	end := time.Now().Add(2 * time.Second)
	for i := 0; time.Now().Before(end); i++ {
		var r sandbox.CanaryResult
		deadline(t, 5*time.Second, "a read of a status file swapped with a FIFO", func() {
			if i%2 == 0 {
				r = sandbox.ReadCanaryResult(ws)
			} else {
				r = sandbox.ReadFreshCanaryResult(ws, nonce, time.Minute)
			}
		})
		if r.Status != sandbox.CanaryUnknown || r.Verified {
			t.Fatalf("read %d: %+v, want unknown", i, r)
		}
	}
}

func TestStatusFileRefusesSpecial(t *testing.T) {
	for name, plant := range map[string]func(final string) error{
		"FIFO":        func(f string) error { return syscall.Mkfifo(f, 0o644) },
		"/dev/zero":   func(f string) error { return os.Symlink("/dev/zero", f) },
		"huge":        func(f string) error { return os.WriteFile(f, make([]byte, 1<<20+1), 0o644) },
		"a directory": func(f string) error { return os.Mkdir(f, 0o755) },
	} {
		ws := t.TempDir()
		os.Mkdir(filepath.Join(ws, sandbox.StatusDir), 0o700)
		final := filepath.Join(ws, sandbox.StatusDir, sandbox.StatusFile)
		if err := plant(final); err != nil {
			t.Fatal(err)
		}
		var r sandbox.CanaryResult
		deadline(t, 5*time.Second, "ReadCanaryResult of "+name, func() { r = sandbox.ReadCanaryResult(ws) })
		if r.Status != sandbox.CanaryUnknown || r.Summary == "" {
			t.Errorf("%s: %+v, want unknown with the reason", name, r)
		}
		t.Logf("%s: %s", name, r.Summary)
	}
	// A symlinked .openparallax holding a good result: not followed.
	ws, elsewhere := t.TempDir(), t.TempDir()
	if err := sandbox.WriteCanaryResult(elsewhere, sandbox.NewCanaryResult("landlock", []sandbox.ProbeResult{{Name: "a", Status: "blocked"}})); err != nil {
		t.Fatal(err)
	}
	os.Symlink(filepath.Join(elsewhere, sandbox.StatusDir), filepath.Join(ws, sandbox.StatusDir))
	if r := sandbox.ReadCanaryResult(ws); r.Status != sandbox.CanaryUnknown || !strings.Contains(r.Summary, "symbolic link") {
		t.Errorf("read through a symlinked %s: %+v", sandbox.StatusDir, r)
	}
}

// readerPause: see canary_status_windows_test.go. Elsewhere the reader never
// pauses.
func readerPause(*testing.T) time.Duration { return 0 }
