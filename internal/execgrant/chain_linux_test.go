package execgrant

import (
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestInterpreterOfFIFO: a FIFO on the exec allowlist has no interpreter,
// and looking for one must not wait for a writer.
func TestInterpreterOfFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("cannot make a FIFO here:", err)
	}
	done := make(chan []string, 1)
	go func() { done <- interpretersOf(fifo, 0, nil) }()
	select {
	case got := <-done:
		if len(got) != 0 {
			t.Errorf("interpreters of a FIFO: %v", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("interpretersOf blocked on a FIFO")
	}
}
