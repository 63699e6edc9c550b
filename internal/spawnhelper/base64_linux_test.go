//go:build linux && (amd64 || arm64)

package spawnhelper

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/openparallax/sandbox/internal/trampoline"
)

// TestHelperBase64: the helper's base64 decoder (c/helper.c b64) takes
// exactly the unpadded standard base64 the parent writes, in one chunk and
// in several, whatever the last group's length (no remainder, two or three
// characters), and refuses everything else: a character outside the
// alphabet at any place of a full group or of a last group of two or three
// (padding, URL-safe, space, newline, a byte above 127), and a length that
// leaves one character over a whole group. A decoded payload shows by reaching its last
// step (execve of a target that does not exist, exit 127; or, where
// Landlock is missing, a refusal at landlock_create_ruleset); a refused one
// says "payload is not base64" (exit 125).
func TestHelperBase64(t *testing.T) {
	t.Run("native", func(t *testing.T) {
		bin := filepath.Join(t.TempDir(), "helper")
		if err := os.WriteFile(bin, image, 0o755); err != nil {
			t.Fatal(err)
		}
		helperBase64(t, func(argv ...string) *exec.Cmd {
			cmd := exec.Command(bin, argv[1:]...)
			cmd.Args[0] = argv[0]
			return cmd
		})
	})
	// The arm64 bytes under qemu-user, which stops them at Landlock (it
	// does not emulate it): everything before, the decoding included, runs.
	t.Run("arm64-qemu", func(t *testing.T) {
		qemu, err := exec.LookPath("qemu-aarch64")
		if err != nil {
			t.Skip("qemu-aarch64 not installed (Debian package qemu-user): the arm64 helper is not run")
		}
		b, err := os.ReadFile("helper_linux_arm64.bin")
		if err != nil {
			t.Fatal(err)
		}
		bin := filepath.Join(t.TempDir(), "helper-arm64")
		if err := os.WriteFile(bin, b, 0o755); err != nil {
			t.Fatal(err)
		}
		helperBase64(t, func(argv ...string) *exec.Cmd {
			return exec.Command(qemu, append([]string{"-0", argv[0], bin}, argv[1:]...)...)
		})
	})
}

// helperBase64 is TestHelperBase64 for the helper command makes (argv[0]
// as the helper's own argv[0]).
func helperBase64(t *testing.T, command func(argv ...string) *exec.Cmd) {
	run := func(env []string) (string, int) {
		cmd := command(trampoline.Arg0, "target-argv0")
		cmd.Env = env
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			t.Fatalf("run: %v", err)
		}
		if ws := cmd.ProcessState.Sys().(syscall.WaitStatus); ws.Signaled() {
			t.Fatalf("helper killed by %v, output %q", ws.Signal(), out.String())
		}
		return out.String(), cmd.ProcessState.ExitCode()
	}
	decoded := func(out string, code int) bool {
		return code == 127 && strings.Contains(out, "execve /nonexistent/target: no such file or directory") ||
			code == 125 && strings.Contains(out, "landlock_create_ruleset")
	}
	payload := func(envValue string) []string {
		p := &trampoline.Payload{
			Path: "/nonexistent/target", Env: []string{"A=" + envValue}, FirstFD: 3, ErrFD: -1,
			HandledFS: 1 << 2, Rules: []trampoline.PathRule{{Path: "/", Dir: 1 << 2}},
		}
		return p.Environ()
	}
	// One chunk, each length of the last group; then several chunks (one
	// holds 48 KiB of payload).
	tails := map[int]bool{}
	for n := range 3 {
		env := payload(strings.Repeat("x", n))
		_, chunk, _ := strings.Cut(env[1], "=")
		tails[len(chunk)%4] = true
		if out, code := run(env); !decoded(out, code) {
			t.Fatalf("valid payload, last group of %d: exit %d, %q", len(chunk)%4, code, out)
		}
		for _, bad := range []string{"=", "-", "_", " ", "\n", "\x80", "\xff", "*", "."} {
			for _, at := range []int{0, 1, 2, 3, len(chunk) - 3, len(chunk) - 2, len(chunk) - 1} {
				c := chunk[:at] + bad + chunk[at+1:]
				if out, code := run([]string{env[0], strings.SplitN(env[1], "=", 2)[0] + "=" + c}); code != 125 || !strings.Contains(out, "payload is not base64") {
					t.Errorf("%q at %d of %d characters: exit %d, %q; want it refused as not base64", bad, at, len(chunk), code, out)
				}
			}
		}
		over := env[1] + strings.Repeat("A", (5-len(chunk)%4)%4) // one character past a whole group
		if out, code := run([]string{env[0], over}); code != 125 || !strings.Contains(out, "payload is not base64") {
			t.Errorf("one character over a whole group (%d): exit %d, %q; want it refused as not base64", len(over)-len(env[1])+len(chunk), code, out)
		}
	}
	if len(tails) != 3 {
		t.Fatalf("last groups seen: %v; want 0, 2 and 3 characters", tails)
	}
	for _, n := range []int{48 << 10, 100 << 10} {
		env := payload(strings.Repeat("y", n))
		if len(env) < 3 {
			t.Fatalf("a payload with %d bytes of environment has %d chunks; want several", n, len(env)-1)
		}
		if out, code := run(env); !decoded(out, code) {
			t.Errorf("valid payload in %d chunks: exit %d, %q", len(env)-1, code, out)
		}
	}
}
