//go:build linux

package sandbox_test

// Issue 13, item 8, end to end: a file the sandbox can write names its own
// interpreter, and the sandbox grants an interpreter only when it is a
// regular executable file outside every write path (grantableInterpreter;
// TestInterpreterChoiceRefused tests the rule as data). Here the file is
// an exec-granted script in a write path whose "#!" names a secret, and a
// copy of a dynamic ELF program there whose PT_INTERP names one.

import (
	"bytes"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/openparallax/sandbox"
)

// interpFixture makes a write path ws holding a script whose "#!" names
// secret, and a copy of a dynamically linked ELF program whose PT_INTERP
// names secret, patched in place (the secret's path has the length of the
// loader's); secret (mode 0600, outside every grant) holds a key.
func interpFixture(t *testing.T) (ws, script, elfFile, secret string) {
	t.Helper()
	src := "/bin/true"
	ef, err := elf.Open(src)
	if err != nil {
		t.Skipf("%s: %v", src, err)
	}
	var interp *elf.Prog
	for _, p := range ef.Progs {
		if p.Type == elf.PT_INTERP {
			interp = p
		}
	}
	ef.Close()
	if interp == nil || interp.Filesz < 2 {
		t.Skipf("%s is statically linked here: no PT_INTERP to patch", src)
	}
	n := int(interp.Filesz) - 1 // without the NUL
	// A short directory, so that a secret path of exactly n bytes fits;
	// not in /tmp, which the mount layer makes private (the secret would
	// be absent, not refused).
	dir, err := os.MkdirTemp(pick(dirExists("/var/tmp"), "/var/tmp", "/"), "i")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	pad := n - len(dir) - 1
	if pad < 1 {
		t.Skipf("the loader's path (%d bytes) is too short for a secret under %s", n, dir)
	}
	secret = filepath.Join(dir, strings.Repeat("k", pad))
	if err := os.WriteFile(secret, []byte("the key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ws = filepath.Join(dir, "ws")
	os.Mkdir(ws, 0o755)
	script = filepath.Join(ws, "script")
	if err := os.WriteFile(script, []byte("#!"+secret+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	old := b[interp.Off : interp.Off+interp.Filesz]
	if i := bytes.IndexByte(old, 0); i != n {
		t.Fatalf("PT_INTERP of %s is %q, not NUL-terminated at %d", src, old, n)
	}
	copy(old, secret) // the same length: the NUL stays
	elfFile = filepath.Join(ws, "prog")
	if err := os.WriteFile(elfFile, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if ef, err := elf.Open(elfFile); err != nil {
		t.Fatal(err)
	} else {
		defer ef.Close()
		for _, p := range ef.Progs {
			if p.Type == elf.PT_INTERP {
				got := make([]byte, p.Filesz)
				p.ReadAt(got, 0)
				if string(bytes.TrimRight(got, "\x00")) != secret {
					t.Fatalf("patched PT_INTERP %q, want %q", got, secret)
				}
			}
		}
	}
	return ws, script, elfFile, secret
}

// TestWrapInterpreterNamesSecret: under WrapCommand, (1) the script or the
// patched ELF as the target does not start: the kernel must execute the
// secret as its interpreter and is refused (exit 126, "execve: permission
// denied", nothing of the secret printed; a secret has no execute bit, so
// the kernel's mode check refuses as well as Landlock: this half shows the
// outcome, not which refused); (2) with the script or the ELF on the exec
// allowlist, a program (this test binary) that reads the secret is
// refused with EACCES, as it is with no exec grant at all: the grant
// brought no read right with it (it did before the rule: the interpreter
// was granted read and execute, and this read returned the key).
// Unconfined, the read works (the control).
func TestWrapInterpreterNamesSecret(t *testing.T) {
	requireSandbox(t)
	ws, script, elfFile, secret := interpFixture(t)
	if out, err := exec.Command(self(t), helperArg, "read", secret).Output(); err != nil || string(out) != secret+" 0\n" {
		t.Fatalf("unconfined control: reading the secret: %v %q", err, out)
	}
	cfg := sandbox.Config{AllowedWritePaths: []string{ws}}
	for _, target := range []string{script, elfFile} {
		t.Run(filepath.Base(target)+" as the target", func(t *testing.T) {
			cmd := exec.Command(target)
			var stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stderr, &stderr
			wrap(t, cmd, cfg)
			err := cmd.Run()
			ee, ok := err.(*exec.ExitError)
			got := stderr.String()
			t.Logf("%v: %s", err, got)
			want := fmt.Sprintf("sandbox: cannot start %s: ", target)
			if !ok || ee.ExitCode() != 126 || !strings.HasPrefix(got, want) || !strings.Contains(got, syscall.EACCES.Error()) ||
				strings.Contains(got, "the key") {
				t.Errorf("exit %v, stderr %q; want exit 126 and %q... %v", err, got, want, syscall.EACCES)
			}
		})
		t.Run(filepath.Base(target)+" on the exec allowlist", func(t *testing.T) {
			out, err := wrapped(t, sandbox.Config{AllowedWritePaths: []string{ws}, AllowedExecPaths: []string{target}},
				self(t), helperArg, "read", secret)
			if want := fmt.Sprintf("%s %d\n", secret, int(syscall.EACCES)); err != nil || out != want {
				t.Errorf("reading the secret: %v %q, want %q", err, out, want)
			}
		})
	}
}
