//go:build windows

package sandbox_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/windows"

	"github.com/openparallax/sandbox"
	"github.com/openparallax/sandbox/internal/childtest"
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
// process's token (and the parent, opened for PROCESS_CREATE_PROCESS) leaves
// the route open, so the result is partial and its summary says "Sandbox not
// verified".
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
	childtest.Forward(t, "the child", out, err)
}

// envCanaryOut names the file the orphan-canary helper writes its result to.
const envCanaryOut = "SANDBOX_WINDOWS_CANARY_OUT"

// canaryHelper runs the helper modes of TestWindowsCanaryParentGone:
// orphan-start starts orphan-canary and exits at once; orphan-canary waits
// until its parent is gone, confines itself with ApplySelf, runs the canary
// and writes the result as JSON to $SANDBOX_WINDOWS_CANARY_OUT.
func canaryHelper(mode string) {
	switch mode {
	case "orphan-start":
		cmd := helperCmd("orphan-canary") // standard streams to NUL: nothing waits for it
		if err := cmd.Start(); err != nil {
			fmt.Printf("start: %v\n", err)
			return
		}
		fmt.Printf("orphan pid %d\n", cmd.Process.Pid)
	case "orphan-canary":
		// Wait until the parent has exited and its process object is gone
		// (the ID names no process once the last handle to it is closed:
		// the test's, after its Wait).
		ppid := os.Getppid()
		r := sandbox.CanaryResult{Summary: fmt.Sprintf("parent %d still there after a minute", ppid)}
		for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
			h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(ppid))
			if err != nil {
				r.Summary = ""
				break
			}
			windows.WaitForSingleObject(h, 1000)
			windows.CloseHandle(h)
		}
		if r.Summary != "" {
			writeJSON(r)
			return
		}
		if err := sandbox.New().ApplySelf(sandbox.Config{}); err != nil {
			r.Summary = "ApplySelf: " + err.Error()
		} else {
			r = sandbox.VerifyCanary()
		}
		writeJSON(r)
	}
}

// writeJSON writes r to $SANDBOX_WINDOWS_CANARY_OUT whole (a file renamed
// into place).
func writeJSON(r sandbox.CanaryResult) {
	out := os.Getenv(envCanaryOut)
	data, _ := json.Marshal(r)
	if os.WriteFile(out+".tmp", data, 0o600) == nil {
		os.Rename(out+".tmp", out)
	}
}

// TestWindowsCanaryParentGone: a Job Object alone must not be verified when
// the confined process's parent has exited. The old process_spawn_parent
// probe opened only the parent, and skipped itself when the parent was gone,
// so on Windows (where process_spawn is blocked) a job alone came out
// verified; under Wine it was skipped the same way. The probe now decides
// from the process's own token (not low integrity, not restricted, not an
// AppContainer here), so it fails whatever happened to the parent.
func TestWindowsCanaryParentGone(t *testing.T) {
	out := filepath.Join(t.TempDir(), "result.json")
	var text strings.Builder
	cmd := helperCmd("orphan-start", envCanaryOut+"="+out)
	cmd.Stdout, cmd.Stderr = &text, &text
	if err := cmd.Run(); err != nil {
		t.Fatalf("orphan-start: %v\n%s", err, text.String())
	}
	pid := field(text.String(), "orphan pid ")
	if pid < 0 {
		t.Fatalf("orphan-start did not start the orphan:\n%s", text.String())
	}
	t.Cleanup(func() { killPID(t, pid) })
	var data []byte
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		var err error
		if data, err = os.ReadFile(out); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no result from the orphan (pid %d) after a minute", pid)
		}
	}
	var r sandbox.CanaryResult
	if err := json.Unmarshal(data, &r); err != nil {
		t.Fatalf("%v: %s", err, data)
	}
	if len(r.Probes) == 0 {
		t.Fatalf("the orphan ran no canary: %s", r.Summary)
	}
	t.Logf("orphan's canary, its parent gone: %s", r.Summary)
	if r.Verified || r.Status == sandbox.CanarySandboxed {
		t.Errorf("a job alone verified with the parent gone: %s", r.Summary)
	}
	for _, p := range r.Probes {
		if p.Name != "process_spawn_parent" {
			continue
		}
		// Wine 8.0 cannot tell whether a token is restricted
		// (IsTokenRestricted fails): the probe then fails for want of the
		// facts, which TestSpawnParentProbe decides as data.
		byToken := strings.Contains(p.Error, "is not restricted and is not an AppContainer token") ||
			(winjob.UnderWine() && strings.Contains(p.Error, "token could not be read"))
		if p.Status != sandbox.ProbeFailed || !byToken || !strings.Contains(p.Error, "the parent process has exited") {
			t.Errorf("process_spawn_parent = %s %q, want failed for the token's sake, saying the parent has exited", p.Status, p.Error)
		}
		return
	}
	t.Errorf("no process_spawn_parent probe: %+v", r.Probes)
}
