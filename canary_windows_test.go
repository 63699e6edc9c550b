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
	if !strings.HasPrefix(r.Summary, "Sandbox not verified: 0/") {
		t.Errorf("summary %q, want it to begin 'Sandbox not verified: 0/'", r.Summary)
	}
	for _, p := range r.Probes {
		switch p.Name {
		case "process_spawn":
			if p.Status != sandbox.ProbeFailed {
				t.Errorf("process_spawn unconfined = %s (%s), want failed", p.Status, p.Error)
			}
		case "process_spawn_parent":
			// The test process's parent may not be a Windows process
			// (under Wine it is the Unix launcher): skipped is then right.
			if p.Status != sandbox.ProbeFailed && p.Status != sandbox.ProbeSkipped {
				t.Errorf("process_spawn_parent unconfined = %s (%s), want failed or skipped", p.Status, p.Error)
			}
		default:
			if p.Status != sandbox.ProbeSkipped || !strings.Contains(p.Error, "Job Objects do not restrict") {
				t.Errorf("%s = %s %q, want skipped with the reason", p.Name, p.Status, p.Error)
			}
		}
	}
}

// The canary in a process confined by ApplySelf (a re-executed child, whose
// parent, the test process, is a process of the same user outside the
// job): process_spawn is blocked by the active-process limit (not under
// Wine, which does not enforce it), process_spawn_parent fails because the
// parent can be opened for PROCESS_CREATE_PROCESS, so the result is partial
// and its summary says "Sandbox not verified".
func TestWindowsCanaryConfined(t *testing.T) {
	if os.Getenv("SANDBOX_WINDOWS_CANARY_CHILD") == "1" {
		if err := sandbox.New().ApplySelf(sandbox.Config{}); err != nil {
			t.Fatalf("ApplySelf: %v", err)
		}
		r := sandbox.VerifyCanary()
		t.Logf("summary: %s", r.Summary)
		if r.Verified || !strings.HasPrefix(r.Summary, "Sandbox not verified: ") {
			t.Errorf("a job alone verified (%s): the parent-process route is open", r.Summary)
		}
		st := map[string]sandbox.ProbeResult{}
		for _, p := range r.Probes {
			st[p.Name] = p
		}
		if p := st["process_spawn_parent"]; p.Status != sandbox.ProbeFailed || !strings.Contains(p.Error, "PROC_THREAD_ATTRIBUTE_PARENT_PROCESS") {
			t.Errorf("process_spawn_parent = %+v, want failed naming the route", p)
		}
		if p := st["process_spawn"]; p.Status != sandbox.ProbeBlocked {
			if winjob.UnderWine() {
				t.Skipf("Wine does not enforce the job's active-process limit, so the canary's process_spawn probe is not blocked "+
					"(only Windows proves it is): %s", r.Summary)
			}
			t.Errorf("process_spawn = %+v, want blocked", p)
		}
		if r.Status != sandbox.CanaryPartial {
			t.Errorf("status %q, want %q", r.Status, sandbox.CanaryPartial)
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
