//go:build linux

package linux

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestRuleIDsJudgedAgreeWithLstat: with nothing changing, the identities
// ruleIDs records for the realistic Config (an exec grant of /usr/bin and
// /bin) are what an lstat of every rule path says, as before the judged
// targets' identities were reused: the child gets the same rules. Checked
// twice, so that the second build's identities come from the cached
// scan's validation, not the scan.
func TestRuleIDsJudgedAgreeWithLstat(t *testing.T) {
	ws := t.TempDir()
	rc := testResolved(t, Config{AllowedWritePaths: []string{ws}, AllowedExecPaths: []string{"/usr/bin", "/bin"},
		AllowProcessSpawn: true})
	for round := range 2 {
		pol := buildLinuxPolicy(rc, 7, inChild, []string{"/usr/bin/true"})
		judged := 0
		for _, r := range pol.Paths {
			if r.judged {
				judged++
			}
		}
		if judged == 0 {
			t.Skip("no symlink in /usr/bin leads out of it to a program here (a minimal guest): nothing reused to compare")
		}
		got := ruleIDs(pol, rc)
		for _, r := range pol.Paths {
			var st unix.Stat_t
			if err := unix.Lstat(r.Path, &st); err != nil {
				t.Fatalf("lstat %s: %v", r.Path, err)
			}
			want := RuleID{Dev: st.Dev, Ino: st.Ino, Dir: st.Mode&unix.S_IFMT == unix.S_IFDIR, Symlink: st.Mode&unix.S_IFMT == unix.S_IFLNK}
			if got[r.Path] != want {
				t.Errorf("round %d: %s (judged %v): %+v, lstat says %+v", round, r.Path, r.judged, got[r.Path], want)
			}
		}
		t.Logf("round %d: %d rules, %d identities reused from the scan", round, len(pol.Paths), judged)
	}
}

// TestWrapExtraSwappedBeforeRecord: an exec directory's symlink target,
// judged by the scan and then replaced inside WrapCommand before the
// rules' identities are recorded (the hook), grants nothing: neither a
// symlink to another program swapped in (which the lstat's Symlink flag
// refused before its identity was reused) nor another regular file moved
// there (which the lstat recorded, and the child granted): the rule names
// the object the scan judged, and the child finds another. The files
// are older than the scan's racy window when the control run caches its
// answer, so the identity is normally the cached scan's validation's (a
// fresh scan's when something else changed /var/tmp meanwhile: refused
// either way).
func TestWrapExtraSwappedBeforeRecord(t *testing.T) {
	if k := kernel(); k.abi < 1 || !k.seccomp {
		t.Skipf("sandbox unavailable here: %s", k.abiReason)
	}
	const sh = "/bin/sh"
	if _, err := os.Stat(sh); err != nil {
		t.Skipf("%s not installed: %v", sh, err)
	}
	// Not in /tmp, which the mount layer (the default) makes private:
	// this is about Landlock's rule, which the child checks.
	base, err := os.MkdirTemp("/var/tmp", "sandbox-test-")
	if err != nil {
		t.Skipf("no /var/tmp to work in: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	base, _ = filepath.EvalSymlinks(base)
	bin, lib, other := filepath.Join(base, "bin"), filepath.Join(base, "lib"), filepath.Join(base, "other")
	for _, d := range []string{bin, lib, other} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	tool := filepath.Join(lib, "tool")
	write := func(p, says string) {
		if err := os.WriteFile(p, []byte("#!/bin/sh\necho "+says+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(tool, "judged")
	write(filepath.Join(other, "tool"), "other")
	if err := os.Symlink(tool, filepath.Join(bin, "tool")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // past execgrant's racy window: the scan is kept
	run := func(swap func()) (string, error) {
		if swap != nil {
			testHookBeforeRuleIDs = swap
			defer func() { testHookBeforeRuleIDs = nil }()
		}
		cmd := exec.Command(sh, "-c", filepath.Join(bin, "tool"))
		if err := New().WrapCommand(cmd, Config{AllowedExecPaths: []string{bin}, AllowProcessSpawn: true}); err != nil {
			t.Fatal(err)
		}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := run(nil); err != nil || out != "judged\n" {
		t.Fatalf("control: %v %q", err, out)
	}
	moveAside := func() {
		if err := os.Rename(tool, tool+".old"); err != nil {
			t.Error(err)
		}
	}
	for _, c := range []struct {
		name string
		swap func()
	}{
		{"symlink to another program", func() {
			moveAside()
			if err := os.Symlink(filepath.Join(other, "tool"), tool); err != nil {
				t.Error(err)
			}
		}},
		{"another program moved there", func() {
			moveAside()
			if err := os.Rename(filepath.Join(other, "tool"), tool); err != nil {
				t.Error(err)
			}
		}},
	} {
		out, err := run(c.swap)
		if err == nil || strings.Contains(out, "other") || !strings.Contains(out, "Permission denied") {
			t.Errorf("%s, swapped before the record: %v %q; want the program refused (EACCES)", c.name, err, out)
		}
		// Back as it was, for the next case (the scan sees the change and
		// answers afresh).
		os.Remove(tool)
		os.Rename(tool+".old", tool)
		write(filepath.Join(other, "tool"), "other")
	}
}
