//go:build windows

package sandbox_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/windows"

	"github.com/openparallax/sandbox"
	"github.com/openparallax/sandbox/internal/winjob"
)

// TestWriteCanaryResultOverOpenFile: a new result replaces the status file
// while another process holds the old one open with FILE_SHARE_DELETE, as
// indexers and antivirus scanners do, for longer than any retry.
func TestWriteCanaryResultOverOpenFile(t *testing.T) {
	ws := t.TempDir()
	old := sandbox.NewCanaryResult(sandbox.ModeJobObject, []sandbox.ProbeResult{{Name: "process_spawn", Status: sandbox.ProbeFailed}})
	if err := sandbox.WriteCanaryResult(ws, old); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(ws, sandbox.StatusDir, sandbox.StatusFile)
	p, err := windows.UTF16PtrFromString(path)
	if err != nil {
		t.Fatal(err)
	}
	h, err := windows.CreateFile(p, windows.GENERIC_READ, windows.FILE_SHARE_READ|windows.FILE_SHARE_WRITE|windows.FILE_SHARE_DELETE,
		nil, windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Closed once: a second CloseHandle of the same value can close a
	// handle opened since (t.TempDir's cleanup failed with "Invalid
	// handle" when this closed h twice).
	defer func() {
		if h != windows.InvalidHandle {
			windows.CloseHandle(h)
		}
	}()
	want := sandbox.NewCanaryResult(sandbox.ModeJobObject, []sandbox.ProbeResult{{Name: "process_spawn", Status: sandbox.ProbeBlocked}})
	start := time.Now()
	err = sandbox.WriteCanaryResult(ws, want)
	if err != nil && winjob.UnderWine() {
		windows.CloseHandle(h)
		h = windows.InvalidHandle
		os.RemoveAll(filepath.Join(ws, sandbox.StatusDir))
		t.Skipf("Wine 8.0 has no POSIX-semantics rename, so a file held open cannot be replaced (%v): "+
			"only Windows proves that the status file is replaced while a reader holds it", err)
	}
	if err != nil {
		t.Fatalf("WriteCanaryResult with the old file held open: %v (after %v)", err, time.Since(start))
	}
	if got := sandbox.ReadCanaryResult(ws); got.Status != want.Status {
		t.Fatalf("read back %q, want %q", got.Status, want.Status)
	}
}

// readerPause is how long TestStatusFileConcurrentWriters's reader waits
// between reads. Wine 8.0 has no POSIX-semantics rename: it refuses to
// replace a file any reader holds open, so a reader that never pauses
// starves every writer past its retry bound. Windows replaces the file
// under an open reader; there the reader does not pause.
func readerPause(t *testing.T) time.Duration {
	if winjob.UnderWine() {
		t.Log("Wine: the reader pauses 2 ms between reads (Wine cannot rename over an open file; only Windows shows a reader that never pauses)")
		return 2 * time.Millisecond
	}
	return 0
}
