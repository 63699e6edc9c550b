//go:build linux

package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestRulesetFileNowDirectory: a path granted as a file that is a directory
// by the time the ruleset is built is refused, before anything is applied:
// its file rights would cover every file beneath the directory. Building a
// ruleset changes nothing in the process, so this runs in the test process.
func TestRulesetFileNowDirectory(t *testing.T) {
	k := kernel()
	if k.abi == 0 {
		t.Skipf("Landlock unavailable: %s", k.abiReason)
	}
	dir := t.TempDir()
	granted := filepath.Join(dir, "granted")
	if err := os.WriteFile(granted, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	rc, err := resolve(Config{AllowedReadPaths: []string{granted}})
	if err != nil {
		t.Fatal(err)
	}
	pol := buildLinuxPolicy(rc, k.abi, "/proc/self", nil)

	fd, err := landlockRuleset(pol)
	if err != nil {
		t.Fatalf("ruleset with the file in place: %v", err)
	}
	unix.Close(fd)

	if err := os.Remove(granted); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(granted, 0o755); err != nil {
		t.Fatal(err)
	}
	if fd, err := landlockRuleset(pol); err == nil {
		unix.Close(fd)
		t.Fatal("a file grant was turned into a rule on a directory")
	} else if !strings.Contains(err.Error(), granted) || !strings.Contains(err.Error(), "directory") {
		t.Errorf("error does not name the path and the reason: %v", err)
	}
}

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
