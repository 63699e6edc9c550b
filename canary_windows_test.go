//go:build windows

package sandbox_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/openparallax/sandbox"
	"github.com/openparallax/sandbox/internal/winjob"
)

// The canary in an unconfined process: process_spawn must fail (the spawn
// works), the rest is skipped with the reason, and nothing is verified.
func TestWindowsCanaryUnconfined(t *testing.T) {
	r := sandbox.VerifyCanary()
	if r.Verified || r.Mechanism != sandbox.ModeJobObject {
		t.Fatalf("unconfined process verified: %+v", r)
	}
	for _, p := range r.Probes {
		switch p.Name {
		case "process_spawn":
			if p.Status != sandbox.ProbeFailed {
				t.Errorf("process_spawn unconfined = %s (%s), want failed", p.Status, p.Error)
			}
		default:
			if p.Status != sandbox.ProbeSkipped || !strings.Contains(p.Error, "Job Objects do not restrict") {
				t.Errorf("%s = %s %q, want skipped with the reason", p.Name, p.Status, p.Error)
			}
		}
	}
}

// The canary in a process confined by ApplySelf (a re-executed child).
func TestWindowsCanaryConfined(t *testing.T) {
	if os.Getenv("SANDBOX_WINDOWS_CANARY_CHILD") == "1" {
		if err := sandbox.New().ApplySelf(sandbox.Config{}); err != nil {
			t.Fatalf("ApplySelf: %v", err)
		}
		r := sandbox.VerifyCanary()
		t.Logf("summary: %s", r.Summary)
		if !r.Verified {
			if winjob.UnderWine() {
				t.Skipf("Wine does not enforce the job's active-process limit, so the canary's spawn probe is not blocked: %s", r.Summary)
			}
			t.Fatalf("confined process not verified: %s", r.Summary)
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestWindowsCanaryConfined$", "-test.v")
	cmd.Env = append(os.Environ(), "SANDBOX_WINDOWS_CANARY_CHILD=1")
	out, err := cmd.CombinedOutput()
	text := string(out)
	switch {
	case err != nil:
		t.Fatalf("child failed: %v\n%s", err, text)
	case strings.Contains(text, "--- SKIP"):
		t.Skipf("child skipped:\n%s", text)
	case !strings.Contains(text, "--- PASS"):
		t.Fatalf("child did not run the test:\n%s", text)
	}
}
