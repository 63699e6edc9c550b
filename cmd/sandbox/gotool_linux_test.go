//go:build linux

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// goForTest returns the go command and its GOROOT, or skips.
func goForTest(t *testing.T) (goBin, goroot string) {
	t.Helper()
	p, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command here: %v", err)
	}
	p, _ = filepath.EvalSymlinks(p)
	return filepath.Dir(p), filepath.Dir(filepath.Dir(p))
}

// TestRunGo: the real go command under `sandbox run` with the private
// HOME prints no "can't start telemetry child process" (the home holds
// Go's telemetry mode, off); with --go-cache DIR a second build compiles
// nothing (the cache was kept) and DIR holds it; the caller's own build
// cache is refused as DIR.
func TestRunGo(t *testing.T) {
	linuxSandbox(t)
	goBin, goroot := goForTest(t)
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	cache := filepath.Join(t.TempDir(), "go-build")
	os.WriteFile(filepath.Join(ws, "go.mod"), []byte("module example.invalid/m\n\ngo 1.22\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "main.go"), []byte("package main\n\nfunc main() { println(\"built\") }\n"), 0o644)
	build := func() string {
		t.Helper()
		_, errOut, code := runCLI(t, "run", "--cwd", ws, "--rw", ws, "--go-cache", cache, "--ro", goroot, "--exec", goBin,
			"--allow-spawn", "--env", "PATH="+goBin+":/usr/bin:/bin", "--env", "GOTOOLCHAIN=local", "--env", "GOFLAGS=-mod=mod",
			"--", "go", "build", "-x", "-o", "out", ".")
		if code != 0 {
			t.Fatalf("go build under sandbox run: exit %d\n%s", code, errOut)
		}
		if strings.Contains(errOut, "telemetry") {
			t.Errorf("go printed a telemetry message under the private HOME:\n%s", errOut)
		}
		return errOut
	}
	if first := build(); !strings.Contains(first, "/compile ") {
		t.Fatalf("the first build compiled nothing (a cache from elsewhere?):\n%s", first)
	}
	if ents, err := os.ReadDir(cache); err != nil || len(ents) == 0 {
		t.Fatalf("--go-cache %s after a build: %v, %d entries", cache, err, len(ents))
	}
	if second := build(); strings.Contains(second, "/compile ") {
		t.Errorf("the second build compiled again: the cache was not reused:\n%s", second)
	}

	home, err := os.UserCacheDir()
	if err != nil {
		t.Skipf("no user cache directory: %v", err)
	}
	_, errOut, code := runCLI(t, "run", "--go-cache", filepath.Join(home, "go-build"), "--", "/bin/true")
	if code != exitUsage || !strings.Contains(errOut, "your own Go build cache") {
		t.Errorf("--go-cache naming the caller's own cache: exit %d, %s", code, errOut)
	}
}
