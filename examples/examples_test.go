package examples_test

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/openparallax/sandbox"
)

func build(t *testing.T, pkg string) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("no go toolchain here to build the command with (%v); the host run covers it", err)
	}
	bin := filepath.Join(t.TempDir(), filepath.Base(pkg))
	if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	return bin
}

func TestEngineTrustsAVerifiedAgent(t *testing.T) {
	if !sandbox.Probe().Active || runtime.GOOS != "linux" {
		t.Skipf("needs an active sandbox that ApplySelf can use (Linux); here: %+v", sandbox.Probe())
	}
	engine, agent := build(t, "./engine"), build(t, "./agent")
	out, err := exec.Command(engine, "-agent", agent).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "engine: agent verified") {
		t.Fatalf("engine refused a sandboxed agent (%v):\n%s", err, out)
	}
	if !strings.Contains(string(out), "Sandbox verified: ") || strings.Contains(string(out), "Failed:") {
		t.Errorf("agent summary:\n%s", out)
	}
}

// The Engine confines the Agent itself: an Agent that skips its own
// ApplySelf is still verified, because WrapCommand already holds it.
func TestEngineConfinesAnAgentThatDoesNot(t *testing.T) {
	if !sandbox.Probe().Active || runtime.GOOS != "linux" {
		t.Skipf("needs an active sandbox with WrapCommand and a full canary (Linux); here: %+v", sandbox.Probe())
	}
	engine, agent := build(t, "./engine"), build(t, "./agent")
	out, err := exec.Command(engine, "-agent", agent, "--", "-skip-sandbox").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "engine: agent verified") {
		t.Fatalf("an Agent started with WrapCommand was not verified (%v):\n%s", err, out)
	}
}

func TestEngineRefusesAnUnsandboxedAgent(t *testing.T) {
	engine, agent := build(t, "./engine"), build(t, "./agent")
	out, err := exec.Command(engine, "-agent", agent, "-unconfined", "--", "-skip-sandbox").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "refusing the agent") {
		t.Fatalf("engine trusted an unsandboxed agent (%v):\n%s", err, out)
	}
}

// A result without the nonce the Engine handed out (an old result, or one
// another run left) is refused, whatever it says.
func TestEngineRefusesAResultWithoutItsNonce(t *testing.T) {
	engine, agent := build(t, "./engine"), build(t, "./agent")
	out, err := exec.Command(engine, "-agent", agent, "--", "-drop-nonce").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "refusing the agent") || !strings.Contains(string(out), "carries no nonce") {
		t.Fatalf("engine trusted a result without its nonce (%v):\n%s", err, out)
	}
}

func TestDoctorExample(t *testing.T) {
	out, err := exec.Command(build(t, "./doctor")).CombinedOutput()
	st := sandbox.Probe()
	if (err == nil) != st.Active || !strings.Contains(string(out), "mechanism "+st.Mode) {
		t.Errorf("doctor example (%v) disagrees with Probe %+v:\n%s", err, st, out)
	}
}
