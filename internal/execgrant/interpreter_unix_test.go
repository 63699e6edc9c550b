//go:build unix

package execgrant

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Grantable grants only an executable regular file outside every
// write path, and never waits.
func TestGrantableInterpreter(t *testing.T) {
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(dir, "ws")
	sys := filepath.Join(dir, "sys")
	for _, d := range []string{ws, sys} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(p string, mode os.FileMode) string {
		if err := os.WriteFile(p, []byte("x"), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write(filepath.Join(sys, "interp"), 0o755)
	secret := write(filepath.Join(sys, "secret"), 0o600)
	inWS := write(filepath.Join(ws, "interp"), 0o755)
	linkOut := filepath.Join(ws, "link-out") // in the write path, to a good file outside
	os.Symlink(good, linkOut)
	linkIn := filepath.Join(sys, "link-in") // outside, to a file inside the write path
	os.Symlink(inWS, linkIn)
	fifo := filepath.Join(sys, "fifo")
	if err := syscall.Mkfifo(fifo, 0o755); err != nil {
		t.Fatal(err)
	}
	roots := []string{ws}
	for _, tc := range []struct {
		name, interp, want, err string
	}{
		{"good", good, good, ""},
		{"relative", "interp", "", "not an absolute path"},
		{"missing", filepath.Join(sys, "nope"), "", "no such file"},
		{"not executable (a secret)", secret, "", "not an executable regular file"},
		{"inside a write path", inWS, "", "inside the write path"},
		{"symlink in a write path to a good file", linkOut, good, ""},
		{"symlink to a file in a write path", linkIn, "", "inside the write path"},
		{"directory", sys, "", "not an executable regular file"},
		{"fifo", fifo, "", "not an executable regular file"},
	} {
		done := make(chan struct{})
		var got string
		var err error
		go func() {
			got, err = Grantable(tc.interp, roots)
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: Grantable(%s) blocked", tc.name, tc.interp)
		}
		if tc.want != "" {
			if err != nil || got != tc.want {
				t.Errorf("%s: got %q, %v; want %q", tc.name, got, err, tc.want)
			}
			continue
		}
		if err == nil {
			t.Errorf("%s: granted %q, want a refusal", tc.name, got)
		} else if tc.err != "" && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: error %q, want it to say %q", tc.name, err, tc.err)
		}
	}
	// Write paths compare without regard to case (macOS file systems
	// usually ignore it): a write path given in other case still covers.
	if got, err := Grantable(inWS, []string{strings.ToUpper(ws)}); err == nil || !strings.Contains(err.Error(), "inside the write path") {
		t.Errorf("write path in upper case: got %q, %v; want a refusal", got, err)
	}
}
