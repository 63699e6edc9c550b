package childtest

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// envNobody names the test that a run as nobody (AsNobody) runs.
const envNobody = "SANDBOX_NS_NOBODY"

// envPassed are passed on from this run to the run as nobody, whose
// environment is otherwise fixed: SANDBOX_TEST_GO_TRAMPOLINE selects the
// Go trampoline for the root package's tests, and must select it in the
// rerun too.
var envPassed = []string{"SANDBOX_TEST_GO_TRAMPOLINE"}

// InNobodyRun reports whether this is the run as nobody that AsNobody
// started for t.
func InNobodyRun(t testing.TB) bool { return os.Getenv(envNobody) == t.Name() }

// SelfCopy copies this test binary into a directory of its own that every
// user can read and search (a test's own t.TempDir is its user's, mode
// 0700), for a rerun as another user, and returns the copy's path (mode
// 0755). The directory is removed when t ends.
func SelfCopy(t testing.TB) string {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "sandbox-test-copy-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	exe := filepath.Join(dir, filepath.Base(self))
	in, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(exe, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err == nil {
		_, err = io.Copy(out, in)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(exe, 0o755)
	return exe
}

// AsNobody runs the calling test again in a copy of this test binary
// (SelfCopy) started as nobody (uid and gid 65534), in /, with env added
// to a fixed environment (PATH=/usr/bin:/bin, HOME=/, TMPDIR=/tmp, and
// SANDBOX_TEST_GO_TRAMPOLINE when set here), and reports whether this is
// that run (InNobodyRun). The parent, which must be root, forwards the
// child's verdict: a skipping child skips t, a failing child (or one that
// did not pass) fails it; it then returns false. Not as root, t is
// skipped: permission bits bind nobody where root's capabilities bypass
// them, which is what these runs are for.
func AsNobody(t *testing.T, env ...string) bool {
	t.Helper()
	if InNobodyRun(t) {
		return true
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to start the run as nobody")
	}
	exe := SelfCopy(t)
	cmd := exec.Command(exe, "-test.run="+Pattern(t.Name()), "-test.v", "-test.count=1", "-test.timeout=120s")
	cmd.Env = []string{envNobody + "=" + t.Name(), "PATH=/usr/bin:/bin", "HOME=/", "TMPDIR=/tmp"}
	for _, k := range envPassed {
		if v, ok := os.LookupEnv(k); ok {
			cmd.Env = append(cmd.Env, k+"="+v)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	Forward(t, "the run as nobody", out, err)
	return false
}
