package mountns

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"
)

// TestHostCallbacksRefuse: what the program could have planted in a
// workspace before a spawn makes the host callbacks neither wait nor read
// without end nor walk links: a FIFO as .git (before: every later
// WrapCommand on the path blocked in open), a .git linked to /dev/zero,
// a huge .git, and links among the modules directories.
func TestHostCallbacksRefuse(t *testing.T) {
	ws := t.TempDir()
	fifo := filepath.Join(ws, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	zero := filepath.Join(ws, "zero")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(ws, "huge")
	if err := os.WriteFile(huge, make([]byte, MaxGitFile+1), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, zero, huge} {
		done := make(chan error, 1)
		go func() { _, err := HostReadFile(p); done <- err }()
		select {
		case err := <-done:
			if err == nil {
				t.Errorf("HostReadFile(%s) read it", p)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("HostReadFile(%s) did not return within 5s", p)
		}
	}
	// A .git that is a FIFO names no git directory, and protects nothing.
	repo := filepath.Join(ws, "repo")
	os.Mkdir(repo, 0o755)
	if err := syscall.Mkfifo(filepath.Join(repo, ".git"), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { GitProtected(repo, HostLookup, HostReadFile, HostReadDir); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("GitProtected of a repository whose .git is a FIFO did not return within 5s")
	}

	modules := filepath.Join(ws, "modules")
	for _, d := range []string{"real/sub", "other"} {
		os.MkdirAll(filepath.Join(modules, d), 0o755)
	}
	os.Symlink(".", filepath.Join(modules, "self"))
	os.Symlink(filepath.Join(modules, "real"), filepath.Join(modules, "alias"))
	os.WriteFile(filepath.Join(modules, "file"), nil, 0o644)
	got := HostReadDir(modules)
	slices.Sort(got)
	if !slices.Equal(got, []string{"other", "real"}) {
		t.Errorf("HostReadDir = %q, want the real directories [other real]", got)
	}
}
