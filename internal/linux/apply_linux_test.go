//go:build linux

package linux

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestRulesetFileNowDirectory: a path granted as a file that is a directory
// by the time the ruleset is built is refused, before anything is applied:
// its file rights would cover every file beneath the directory. Building a
// ruleset changes nothing in the process, so this runs in the test process.
func TestRulesetFileNowDirectory(t *testing.T) {
	k := kernel()
	if k.abi == 0 {
		t.Skipf("Landlock unavailable: %s", k.abiReason)
	}
	dir := t.TempDir()
	granted := filepath.Join(dir, "granted")
	if err := os.WriteFile(granted, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	rc, err := resolve(Config{AllowedReadPaths: []string{granted}})
	if err != nil {
		t.Fatal(err)
	}
	pol := buildLinuxPolicy(rc, k.abi, "/proc/self", nil)

	fd, err := landlockRuleset(pol)
	if err != nil {
		t.Fatalf("ruleset with the file in place: %v", err)
	}
	unix.Close(fd)

	if err := os.Remove(granted); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(granted, 0o755); err != nil {
		t.Fatal(err)
	}
	if fd, err := landlockRuleset(pol); err == nil {
		unix.Close(fd)
		t.Fatal("a file grant was turned into a rule on a directory")
	} else if !strings.Contains(err.Error(), granted) || !strings.Contains(err.Error(), "directory") {
		t.Errorf("error does not name the path and the reason: %v", err)
	}
}
