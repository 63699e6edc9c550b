//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openparallax/sandbox/internal/cgroup"
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

// A limit reached, then --timeout: the command says both, the limit as
// reached before the program was stopped (not as what ended it), and
// exits as the kill by the timeout. Needs the tree's cgroup with pids,
// which counts a refused fork (root on a host with the controller).
func TestRunLimitThenTimeoutMessage(t *testing.T) {
	linuxSandbox(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root: the tree's cgroup counts the refused forks, and this host's hierarchies are root's")
	}
	if m, err := cgroup.Detect(cgroup.Options{}); err != nil || !m.Has(cgroup.Pids) {
		t.Skipf("no cgroup with the pids controller to manage here: %v", err)
	}
	_, errOut, code := runCLI(t, "run", "--allow-spawn", "--exec", "/bin", "--exec", "/usr/bin", "--max-procs", "16", "--timeout", "2s",
		"--", "sh", "-c", "(while :; do sleep 60 & done); echo loop ended; sleep 60")
	for _, want := range []string{
		"sandbox run: sh reached a resource limit before it was stopped: limit_processes\n",
		"sandbox run: sh killed after --timeout 2s\n",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("no %q in stderr %q", want, errOut)
		}
	}
	if code != 128+9 || strings.Contains(errOut, "ended by a resource limit") {
		t.Errorf("exit %d, stderr %q; want 137, and the limit not named as what ended it", code, errOut)
	}
}
