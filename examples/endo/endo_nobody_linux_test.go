package endo_test

import (
	"os"
	"os/exec"
	"syscall"
	"testing"
)

// TestPluginAsNobody runs the same tests as nobody: without root's
// capabilities the sandbox command takes the unprivileged paths (user
// namespaces, the inbound relay's socket pool), and permission bits bind.
func TestPluginAsNobody(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skipf("needs root to start the run as nobody; euid %d", os.Geteuid())
	}
	pkg, bin := setup(t)
	// The tests' own files, outside /tmp (a run's /tmp is private), in a
	// directory nobody owns: /var/tmp need not be writable by all.
	if _, err := os.Stat("/var/tmp"); err != nil {
		t.Skipf("no /var/tmp for the tests' files: %v", err)
	}
	dir := worldDir(t, "/var/tmp", "endo-plugin-nobody-")
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	test := exec.Command("node", "--test")
	test.Dir = pkg
	test.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/", "SANDBOX_BIN=" + bin, "ENDO_PLUGIN_TEST_DIR=" + dir}
	if p, err := exec.LookPath("node"); err == nil {
		test.Path = p
	}
	test.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	nodeTest(t, test)
}
