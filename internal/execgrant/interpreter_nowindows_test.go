//go:build !windows

package execgrant

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// Issue 13, item 8, on Linux: a file the sandbox can write chooses its
// interpreter, so an interpreter is granted only when it is a regular
// executable file outside every write path, and the host does not open it
// otherwise. (TestGrantableInterpreter covers the shared rule alone; the
// root package's TestInterpreterChoiceRefusedByPolicy checks it end to end
// through the Linux policy.)
func TestInterpreterChoiceRefused(t *testing.T) {
	base := t.TempDir()
	ws := filepath.Join(base, "ws")
	os.Mkdir(ws, 0o755)
	secret := filepath.Join(base, "secret")
	os.WriteFile(secret, []byte("#!/bin/sh\nkey\n"), 0o600)
	execOutside := filepath.Join(base, "interp")
	os.WriteFile(execOutside, []byte("#!/bin/sh\n"), 0o755)
	execInside := filepath.Join(ws, "interp")
	os.WriteFile(execInside, []byte("#!/bin/sh\n"), 0o755)
	link := filepath.Join(base, "link")
	os.Symlink(secret, link)
	linkToExec := filepath.Join(base, "link-exec")
	os.Symlink(execOutside, linkToExec)
	fifo := filepath.Join(base, "fifo")
	syscall.Mkfifo(fifo, 0o600)

	for _, tc := range []struct {
		interp string
		want   string // "" = refused
	}{
		{secret, ""},         // not executable
		{link, ""},           // a link to it
		{execInside, ""},     // inside a write path
		{ws, ""},             // a directory
		{fifo, ""},           // a FIFO
		{"relative/sh", ""},  // not absolute
		{base + "/none", ""}, // missing
		{execOutside, execOutside},
		{linkToExec, execOutside}, // granted by its resolved path
	} {
		got, err := Grantable(tc.interp, []string{ws})
		if (err == nil) != (tc.want != "") || got != tc.want {
			t.Errorf("Grantable(%s) = %q, %v; want %q", tc.interp, got, err, tc.want)
		}
	}
}
