//go:build unix

package main

import (
	"context"
	"encoding/json"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// A FIFO on the exec list must not hang plan: the "#!" line of every
// exec-listed file is read for the macOS profile, and opening a FIFO for
// reading without O_NONBLOCK waits for a writer for ever.
func TestPlanFIFOOnExecList(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, cli(t), "plan", "--exec", fifo, "--json")
	out, err := cmd.Output()
	if ctx.Err() != nil {
		t.Fatalf("sandbox plan --exec FIFO did not finish in 20s: it hangs on the FIFO")
	}
	if err != nil {
		t.Fatalf("plan: %v\n%s", err, out)
	}
	var rep planReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("plan --json: %v\n%s", err, out)
	}
}
