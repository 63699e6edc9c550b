//go:build !windows

package linux

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// Issue 13, item 8, on Linux: a file the sandbox can write chooses its
// interpreter, so an interpreter is granted only when it is a regular
// executable file outside every write path, and the host does not open it
// otherwise. Here end to end through the policy; execgrant's
// TestInterpreterChoiceRefused and TestGrantableInterpreter cover the
// shared rule alone.
func TestInterpreterChoiceRefusedByPolicy(t *testing.T) {
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

	// End to end through the policy: an exec-granted script in the write
	// path naming each candidate.
	for _, interp := range []string{secret, link, execInside, fifo} {
		script := filepath.Join(ws, "s")
		os.WriteFile(script, []byte("#!"+interp+"\n"), 0o755)
		rc := testResolved(t, Config{AllowedWritePaths: []string{ws}, AllowedExecPaths: []string{script}})
		for _, procSelf := range []string{"/proc/self", inChild} {
			p := buildLinuxPolicy(rc, 7, procSelf, nil)
			for _, r := range p.Paths {
				if strings.HasPrefix(r.Source(), "interpreter of") {
					t.Errorf("#!%s: granted %s (%s)", interp, r.Path, r.Source())
				}
			}
		}
	}
	script := filepath.Join(ws, "ok")
	os.WriteFile(script, []byte("#!"+linkToExec+"\n"), 0o755)
	rc := testResolved(t, Config{AllowedWritePaths: []string{ws}, AllowedExecPaths: []string{script}})
	p := buildLinuxPolicy(rc, 7, inChild, nil)
	if !slices.ContainsFunc(p.Paths, func(r linuxRule) bool { return r.Path == execOutside }) {
		t.Errorf("an executable interpreter outside the write paths was not granted: %v", p.Paths)
	}
}
