//go:build linux

package sandbox_test

import (
	"debug/elf"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/openparallax/sandbox"
	"github.com/openparallax/sandbox/internal/childtest"
)

// loaderOf returns the ELF interpreter of a program, or skips.
func loaderOf(t *testing.T, prog string) string {
	t.Helper()
	f, err := elf.Open(prog)
	if err != nil {
		t.Skipf("%s is not a readable ELF file here: %v", prog, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			b := make([]byte, p.Filesz)
			if _, err := p.ReadAt(b, 0); err == nil {
				return strings.TrimRight(string(b), "\x00")
			}
		}
	}
	t.Skipf("%s is statically linked here: it brings no loader onto the exec allowlist", prog)
	return ""
}

// TestExecLoaderChannelIsReal: an exec allowlist with a dynamically linked
// program puts its loader on the list, and the loader, run directly, runs
// an ELF file that is only readable. The plan says exec_loader is not
// enforced; this shows the report is true (and the test fails if the
// channel ever closes without the plan changing).
func TestExecLoaderChannelIsReal(t *testing.T) {
	loader := loaderOf(t, "/bin/true")
	dir := childtest.Dir(t)
	echo := filepath.Join(dir, "echo")
	if !childtest.InChild(t) {
		b, err := os.ReadFile("/bin/echo")
		if err != nil {
			t.Skip("no /bin/echo to copy:", err)
		}
		if err := os.WriteFile(echo, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cfg := sandbox.Config{AllowedExecPaths: []string{"/bin/true"}, AllowedReadPaths: []string{dir}, AllowProcessSpawn: true}
	plan, err := sandbox.PlanFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var report *sandbox.Enforcement
	for _, f := range plan.NotEnforced() {
		if f.Feature == sandbox.FeatureExecLoader {
			report = &f
		}
	}
	resolvedLoader, _ := filepath.EvalSymlinks(loader)
	if report == nil || !strings.Contains(report.Detail, resolvedLoader) {
		t.Fatalf("plan does not report the loader %s as a way around the exec allowlist: %+v", resolvedLoader, plan.NotEnforced())
	}
	if !plan.Available {
		t.Skipf("sandbox unavailable here (%s): the channel itself is not tried", plan.Reason)
	}
	childtest.Run(t, func(t *testing.T) {
		if err := sandbox.New().ApplySelf(cfg); err != nil {
			t.Fatal(err)
		}
		// Direct: Landlock refuses to execute a file off the list.
		if err := exec.Command(echo, "x").Run(); !errors.Is(err, syscall.EACCES) {
			t.Fatalf("exec of a read-only file: %v, want EACCES (otherwise this test shows nothing)", err)
		}
		// Through the loader: it runs.
		out, err := exec.Command(loader, echo, "through the loader").Output()
		if err != nil || string(out) != "through the loader\n" {
			t.Fatalf("loader %s %s: %q %v: the channel the plan reports is not there", loader, echo, out, err)
		}
		t.Logf("as the plan says: %s ran %s, which the exec allowlist does not grant", loader, echo)
	})
}
