// Package endo_test runs the Endo plugin's own tests (test/*.test.js,
// node's test runner under real @endo/init lockdown) against a sandbox
// command built from this checkout: the README's test command reaches
// them through `go test ./...`.
package endo_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/openparallax/sandbox"
)

// registryDown are the words of npm's errors when the registry cannot be
// reached (no network, no DNS, a proxy refusing): then the test skips,
// printing npm's error; any other npm failure fails it.
var registryDown = []string{"ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "ENETUNREACH", "EHOSTUNREACH", "network request", "FetchError"}

// worldDir makes a directory every user can read and search (t.TempDir
// is its user's alone), removed when t ends.
func worldDir(t *testing.T, parent, pattern string) string {
	t.Helper()
	dir, err := os.MkdirTemp(parent, pattern)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// setup builds the sandbox command and installs a copy of the package
// (so that npm ci leaves the checkout as it was), both readable by every
// user; it skips, saying why, where the tests cannot run.
func setup(t *testing.T) (pkg, bin string) {
	t.Helper()
	if runtime.GOOS != "linux" && runtime.GOOS != "darwin" {
		t.Skipf("the plugin's backend runs on Linux and macOS; here %s", runtime.GOOS)
	}
	if st := sandbox.Probe(); !st.Active {
		t.Skipf("no sandbox in force here, so the plugin's tests of what it denies cannot hold: %+v", st)
	}
	for _, tool := range []string{"go", "node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("no %s here (%v): the plugin's tests need go to build the sandbox command, node and npm to run them (CI installs nodejs and npm)", tool, err)
		}
	}
	work := worldDir(t, "", "endo-plugin-test-")
	bin = filepath.Join(work, "sandbox")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/sandbox").CombinedOutput(); err != nil {
		t.Fatalf("go build ../../cmd/sandbox: %v\n%s", err, out)
	}
	pkg = filepath.Join(work, "plugin")
	tests, _ := filepath.Glob("test/*.js")
	for _, f := range append([]string{"package.json", "package-lock.json", "sandbox-plugin.js"}, tests...) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(pkg, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pkg, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ci := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
	ci.Dir = pkg
	if out, err := ci.CombinedOutput(); err != nil {
		for _, w := range registryDown {
			if strings.Contains(string(out), w) {
				t.Skipf("npm ci could not reach the registry, so @endo/init, @endo/exo and @endo/patterns are missing: %v\n%s", err, out)
			}
		}
		t.Fatalf("npm ci: %v\n%s", err, out)
	}
	return pkg, bin
}

// nodeTest runs node --test in pkg and fails t unless every test passed
// or skipped, printing node's report.
func nodeTest(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	out, err := cmd.CombinedOutput()
	t.Logf("node --test:\n%s", out)
	if err != nil {
		t.Fatalf("node --test: %v", err)
	}
	if !strings.Contains(string(out), "# fail 0") || strings.Contains(string(out), "# pass 0") {
		t.Fatalf("node --test passed without running the tests")
	}
}

func TestPlugin(t *testing.T) {
	pkg, bin := setup(t)
	test := exec.Command("node", "--test")
	test.Dir = pkg
	test.Env = append(os.Environ(), "SANDBOX_BIN="+bin)
	nodeTest(t, test)
}
