//go:build linux && (amd64 || arm64)

package spawnhelper

import (
	"bytes"
	"encoding/base64"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/openparallax/sandbox/internal/trampoline"
)

// TestHelperCorruptPayloads feeds the helper (run natively, from a file)
// a valid payload and hundreds of corrupted ones: flipped bytes, truncated
// and extended buffers. It must always end with exit status 125, 126 or
// 127 and a report, never by a signal (a parser overrun; SIGSYS from a
// mutated seccomp program that kills is the program obeyed) and never run
// anything: the target does not exist, and a payload whose mutation still
// parses must fail at execve.
func TestHelperCorruptPayloads(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "helper")
	if err := os.WriteFile(bin, image, 0o755); err != nil {
		t.Fatal(err)
	}
	p := &trampoline.Payload{
		Path: "/nonexistent/target", Env: []string{"A=1", "B=two words"}, FirstFD: 3, ErrFD: -1, CgroupFDs: nil,
		HandledFS: 1 << 2, HandledNet: 3, // TCP bind and connect (Landlock ABI 4)
		Rules:   []trampoline.PathRule{{Path: "/", Dir: 1 << 2}, {Path: "/nonexistent", Dir: 1 << 2, Dev: 1, Ino: 2}},
		Ports:   []trampoline.PortRule{{Port: 443, Access: 2}},
		Filters: [][]trampoline.SockFilter{{{Code: 6, K: 0x7fff0000}}},
		Rlimits: []trampoline.Rlimit{{Resource: 7, Cur: 1024, Max: 1024}},
	}
	env := p.Environ()
	name, raw := oneChunk(t, env)
	run := func(b []byte) (string, syscall.WaitStatus) {
		cmd := exec.Command(bin, "target-argv0")
		cmd.Args[0] = trampoline.Arg0
		cmd.Env = []string{env[0], name + "=" + base64.RawStdEncoding.EncodeToString(b)}
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("run: %v", err)
		}
		return out.String(), cmd.ProcessState.Sys().(syscall.WaitStatus)
	}
	if out, ws := run(raw); ws.ExitStatus() != 127 || !strings.Contains(out, "execve /nonexistent/target: no such file or directory") {
		// Landlock (or its ABI 4) may be missing here: then the valid
		// payload stops at Landlock, which is still a clean refusal.
		if ws.ExitStatus() != 125 || !strings.Contains(out, "landlock_") {
			t.Fatalf("valid payload: %v %q", ws, out)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 1000 {
		b := bytes.Clone(raw)
		switch i % 3 {
		case 0:
			for range 1 + rng.IntN(4) {
				b[rng.IntN(len(b))] ^= byte(1 + rng.IntN(255))
			}
		case 1:
			b = b[:rng.IntN(len(b))]
		case 2:
			b = append(b, make([]byte, 1+rng.IntN(64))...)
			b[4+rng.IntN(len(b)-4)] = byte(rng.IntN(256))
		}
		out, ws := run(b)
		if ws.Signaled() && ws.Signal() == syscall.SIGSYS {
			continue // a mutated seccomp program that kills or traps: obeyed, not a parser fault
		}
		if ws.Signaled() || ws.Exited() && ws.ExitStatus() != 125 && ws.ExitStatus() != 126 && ws.ExitStatus() != 127 || !strings.HasPrefix(out, "sandbox: ") {
			t.Fatalf("mutation %d (%x): %v, output %q", i, b, ws, out)
		}
	}
}
