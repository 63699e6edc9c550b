package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openparallax/sandbox"
)

// buildCLI builds the command once per test binary run.
func buildCLI(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("no go toolchain here to build the command with (%v); the host run covers it", err)
	}
	bin := filepath.Join(t.TempDir(), "sandbox")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func runCLI(t *testing.T, bin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code
}

func TestDoctor(t *testing.T) {
	bin := buildCLI(t)
	st := sandbox.Probe()
	plan, err := sandbox.PlanFor(doctorConfig())
	if err != nil {
		t.Fatal(err)
	}
	wantCode := exitOK
	switch {
	case !st.Active:
		wantCode = exitUnavailable
	case len(plan.NotEnforced()) > 0:
		wantCode = exitDegraded
	}

	out, _, code := runCLI(t, bin, "doctor")
	if code != wantCode {
		t.Errorf("doctor exit %d, want %d\n%s", code, wantCode, out)
	}
	for _, want := range []string{"Sandbox:", st.Mode, "filesystem", "process_spawn", "tcp_connect"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
	for _, f := range plan.NotEnforced() {
		if !strings.Contains(out, f.Feature) || !strings.Contains(out, "NOT enforced") {
			t.Errorf("doctor does not report %s as not enforced:\n%s", f.Feature, out)
		}
	}

	out, _, code = runCLI(t, bin, "doctor", "--json")
	if code != wantCode {
		t.Errorf("doctor --json exit %d, want %d", code, wantCode)
	}
	var rep doctorReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("doctor --json is not JSON: %v\n%s", err, out)
	}
	if rep.Status != st || len(rep.Features) != len(plan.Features) {
		t.Errorf("doctor --json = %+v, want status %+v", rep, st)
	}
}

func TestUsageErrors(t *testing.T) {
	bin := buildCLI(t)
	for _, args := range [][]string{nil, {"frobnicate"}, {"doctor", "--nope"}, {"doctor", "extra"}} {
		_, stderr, code := runCLI(t, bin, args...)
		if code != exitUsage || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q; want %d and a message", args, code, stderr, exitUsage)
		}
	}
	if _, err := os.Stat(bin); err != nil {
		t.Fatal(err)
	}
}
