//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `sandbox run` warns on stderr, with the path, of each Finding: here an
// implicit bare repository the program made at the write path's top (git
// run there uses its config and hooks), which GitCreated does not list.
func TestRunWarnsFindings(t *testing.T) {
	linuxSandbox(t)
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	_, errOut, code := runCLI(t, "run", "--rw", ws, "--allow-spawn", "--exec", "/bin", "--exec", "/usr/bin", "--", "/bin/sh", "-c",
		"cd "+ws+" && mkdir objects refs && echo 'ref: refs/heads/main' > HEAD && echo '[core]' > config")
	want := "sandbox run: git_bare_repository_created: " + ws + ": "
	if code != 0 || !strings.Contains(errOut, want) {
		t.Errorf("exit %d, stderr %q; want %q", code, errOut, want)
	}
	if _, err := os.Stat(filepath.Join(ws, "HEAD")); err != nil {
		t.Errorf("the bare repository was not left in place: %v", err)
	}
}
