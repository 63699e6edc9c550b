package safefs

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// asNobody runs the calling test again in a copy of this test binary as
// nobody, and reports whether this is that run; the parent (root) forwards
// the child's verdict. Without root it skips, saying why: permission bits
// bind nobody where root's capabilities bypass them, which is what these
// runs are for.
func asNobody(t *testing.T) bool {
	t.Helper()
	const stage = "SAFEFS_NOBODY"
	if os.Getenv(stage) == t.Name() {
		return true
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to start the nobody run")
	}
	dir, err := os.MkdirTemp("", "safefs-test-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "safefs.test")
	in, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.OpenFile(exe, os.O_CREATE|os.O_WRONLY, 0o755)
	if err == nil {
		_, err = io.Copy(out, in)
		out.Close()
	}
	in.Close()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1", "-test.timeout=60s")
	cmd.Env = []string{stage + "=" + t.Name(), "PATH=/usr/bin:/bin", "HOME=/", "TMPDIR=/tmp"}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	b, err := cmd.CombinedOutput()
	text := string(b)
	switch {
	case strings.Contains(text, "--- SKIP"):
		t.Skipf("as nobody:\n%s", text)
	case err != nil || !strings.Contains(text, "--- PASS"):
		t.Fatalf("as nobody (%v):\n%s", err, text)
	}
	t.Logf("as nobody:\n%s", text)
	return false
}

// TestRemoveAllAsNobody removes, as nobody, a tree whose directories the
// program left unlistable and unwritable to their owner: RemoveAll makes
// each accessible through its own descriptor (never following a link)
// before it lists it.
func TestRemoveAllAsNobody(t *testing.T) {
	if !asNobody(t) {
		return
	}
	TestRemoveAllNeverFollows(t)
}
