//go:build linux

package linux

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestWrapRuleSwappedBeforeRecord: a granted directory swapped for a
// symlink to a secret directory inside WrapCommand, after the policy
// resolved it and before its device and inode are recorded (the hook),
// grants nothing: the record is an lstat, and a rule path that is a
// symlink then is dropped. (With stat the secret's device and inode were
// recorded, the child found them behind the symlink, and cat printed the
// secret.) TestWrapRuleReplacedBySymlink covers the swap after
// WrapCommand.
func TestWrapRuleSwappedBeforeRecord(t *testing.T) {
	if k := kernel(); k.abi < 1 || !k.seccomp {
		t.Skipf("sandbox unavailable here: %s", k.abiReason)
	}
	cat := "/bin/cat"
	if _, err := os.Stat(cat); err != nil {
		t.Skipf("%s not installed (Debian package coreutils): %v", cat, err)
	}
	// Not in /tmp, which the mount layer (the default) makes private:
	// this is about Landlock's rule, which the child checks.
	base, err := os.MkdirTemp("/var/tmp", "sandbox-test-")
	if err != nil {
		t.Skipf("no /var/tmp to work in: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	granted, secret := filepath.Join(base, "granted"), filepath.Join(base, "secret")
	os.Mkdir(granted, 0o755)
	os.Mkdir(secret, 0o755)
	os.WriteFile(filepath.Join(granted, "f"), []byte("granted\n"), 0o644)
	os.WriteFile(filepath.Join(secret, "f"), []byte("secret\n"), 0o644)
	run := func(swap bool) (string, error) {
		if swap {
			testHookBeforeRuleIDs = func() {
				if err := os.Rename(granted, granted+".old"); err != nil {
					t.Error(err)
				}
				if err := os.Symlink(secret, granted); err != nil {
					t.Error(err)
				}
			}
			defer func() { testHookBeforeRuleIDs = nil }()
		}
		cmd := exec.Command(cat, filepath.Join(granted, "f"))
		if err := New().WrapCommand(cmd, Config{AllowedReadPaths: []string{granted}}); err != nil {
			t.Fatal(err)
		}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run(false); err != nil || out != "granted\n" {
		t.Fatalf("control: %v %q", err, out)
	}
	out, err := run(true)
	if err == nil || strings.Contains(out, "secret") || !strings.Contains(out, "Permission denied") {
		t.Errorf("swapped before the record: %v %q; want cat refused (EACCES), nothing of the secret", err, out)
	}
}
