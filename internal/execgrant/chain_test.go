package execgrant

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestExecInterpreters(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("ELF and #! interpreters are Linux paths; Windows has neither")
	}
	if _, err := os.Stat("/bin/true"); err != nil {
		t.Skip("no /bin/true here")
	}
	interps := interpretersOf("/bin/true", 0, nil)
	if len(interps) == 0 {
		t.Skip("/bin/true is statically linked here: it has no ELF interpreter to find")
	}
	if len(interps) != 1 || !strings.Contains(interps[0], "ld-") {
		t.Errorf("interpreters of /bin/true = %v, want its ELF loader", interps)
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "s")
	os.WriteFile(script, []byte("#!/bin/sh -e\necho hi\n"), 0o755)
	got := interpretersOf(script, 0, nil)
	if sh, _ := filepath.EvalSymlinks("/bin/sh"); len(got) < 1 || got[0] != sh {
		t.Errorf("interpreters of a /bin/sh script = %v", got)
	}
}

// TestInterpreterCache: an answer is cached under the file's version, a
// rewritten file is read again, and the cache stays bounded.
func TestInterpreterCache(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("only Linux caches interpreters (versionOf)")
	}
	script := filepath.Join(t.TempDir(), "s")
	if err := os.WriteFile(script, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(script)
	if err != nil {
		t.Fatal(err)
	}
	v, ok := versionOf(fi)
	if !ok {
		t.Fatal("no version for a regular file")
	}
	if got, _ := InterpreterOf(script); got != "/bin/sh" {
		t.Fatalf("interpreter %q", got)
	}
	interpreters.Lock()
	cached, ok := interpreters.m[v]
	interpreters.Unlock()
	if !ok || cached != (interpreter{path: "/bin/sh", script: true}) {
		t.Fatalf("not cached under its version: %+v, %v", cached, ok)
	}
	// Another size is another version, whatever the clock's granularity.
	if err := os.WriteFile(script, []byte("#!/usr/bin/env\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, _ := InterpreterOf(script); got != "/usr/bin/env" {
		t.Errorf("after a rewrite: interpreter %q, want /usr/bin/env", got)
	}
	// A full cache is emptied before the next answer goes in.
	interpreters.Lock()
	for i := len(interpreters.m); i < maxCachedInterpreters; i++ {
		interpreters.m[fileVersion{ino: uint64(i), dev: 1 << 60}] = interpreter{}
	}
	interpreters.Unlock()
	if err := os.WriteFile(script, []byte("#!/bin/true\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	InterpreterOf(script)
	interpreters.Lock()
	n := len(interpreters.m)
	interpreters.Unlock()
	if n != 1 {
		t.Errorf("%d cached interpreters after one more answer to a full cache, want 1", n)
	}
}
