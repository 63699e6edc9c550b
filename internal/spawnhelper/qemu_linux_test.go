//go:build linux

package spawnhelper

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openparallax/sandbox/internal/trampoline"
)

// TestArm64UnderQemu runs the arm64 helper under qemu-user, where the
// machine is not arm64 (CI installs qemu-user for it): it must refuse a
// missing or corrupt payload as the amd64 one does, and with a payload
// go through its steps up to the first one qemu-user cannot emulate
// (seccomp) or through to the target. It proves the arm64 bytes start,
// parse, and make their system calls with arm64 numbers; the full
// enforcement tests need an arm64 kernel.
func TestArm64UnderQemu(t *testing.T) {
	qemu, err := exec.LookPath("qemu-aarch64")
	if err != nil {
		t.Skip("qemu-aarch64 not installed (Debian package qemu-user): the arm64 helper is not run")
	}
	bin := filepath.Join(t.TempDir(), "helper")
	b, err := os.ReadFile("helper_linux_arm64.bin")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(env []string, args ...string) (string, int) {
		cmd := exec.Command(qemu, append([]string{"-0", trampoline.Arg0, bin}, args...)...)
		cmd.Env = env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		cmd.Run()
		return out.String(), cmd.ProcessState.ExitCode()
	}
	if out, code := run(nil, "x"); code != 125 || !strings.Contains(out, "without its environment") {
		t.Errorf("no payload: exit %d, %q", code, out)
	}
	bad := []string{trampoline.EnvMarker + "=2 1", "OPENPARALLAX_SANDBOX_P0=AAAA"}
	if out, code := run(bad, "x"); code != 125 || !strings.Contains(out, "bad payload magic") {
		t.Errorf("corrupt payload: exit %d, %q", code, out)
	}
	p := &trampoline.Payload{
		Path: "/nonexistent/target", Env: []string{"A=1"}, FirstFD: 3, ErrFD: -1, CgroupFDs: nil,
		HandledFS: 1 << 2, // LANDLOCK_ACCESS_FS_READ_FILE
		Rules:     []trampoline.PathRule{{Path: "/", Dir: 1 << 2}, {Path: "/nonexistent", Dir: 1 << 2}},
	}
	out, code := run(p.Environ(), "target-argv0")
	switch {
	case code == 127 && strings.Contains(out, "execve /nonexistent/target: no such file or directory"):
		// Every step ran, through execve.
	case code == 125 && strings.Contains(out, "landlock_create_ruleset") && strings.Contains(out, "function not implemented"):
		t.Logf("qemu-user does not emulate Landlock; the helper parsed its payload and stopped there: %q", out)
	default:
		t.Errorf("payload: exit %d, %q", code, out)
	}
}
