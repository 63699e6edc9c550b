//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `sandbox run` says when a resource limit ended the program: dd writing
// past --max-file-size is ended by SIGXFSZ, the command exits 128+25 and
// prints the limit on its standard error.
func TestRunLimitExceededMessage(t *testing.T) {
	linuxSandbox(t)
	dd := "/bin/dd"
	if _, err := os.Stat(dd); err != nil {
		t.Skipf("no %s (coreutils): %v", dd, err)
	}
	dir := t.TempDir()
	big := filepath.Join(dir, "big")
	_, errOut, code := runCLI(t, "run", "--rw", dir, "--max-file-size", "16K", "--", dd, "if=/dev/zero", "of="+big, "bs=4096", "count=64")
	if want := "sandbox run: " + dd + " ended by a resource limit: limit_file_size\n"; code != 128+25 || !strings.Contains(errOut, want) {
		t.Errorf("dd past --max-file-size 16K: exit %d, stderr %q; want exit 153 and %q", code, errOut, want)
	}
	if fi, err := os.Stat(big); err != nil || fi.Size() != 16<<10 {
		t.Errorf("%s: %v, %v; want 16384 bytes", big, fi, err)
	}
}
