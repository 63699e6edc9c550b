package childtest_test

import (
	"os"
	"strings"
	"testing"

	"github.com/openparallax/sandbox/internal/childtest"
)

// AsNobody forwards the run's own verdict on the test: a pass with a
// subtest skipped is a pass, and a failing subtest beside a skipped one
// is a failure (a SKIP line anywhere in the run's output made it skip
// both).

func TestHelperNobodyPartlySkipped(t *testing.T) {
	if os.Getenv("CHILDTEST_SELFTEST") == "" {
		t.Skip("only run by TestNobodyVerdictsForwarded")
	}
	if !childtest.AsNobody(t, "CHILDTEST_SELFTEST=1") {
		return
	}
	t.Run("runs", func(t *testing.T) {})
	t.Run("skips", func(t *testing.T) { t.Skip("deliberate subtest skip") })
}

func TestHelperNobodyFailingWithSkip(t *testing.T) {
	if os.Getenv("CHILDTEST_SELFTEST") == "" {
		t.Skip("only run by TestNobodyVerdictsForwarded")
	}
	if !childtest.AsNobody(t, "CHILDTEST_SELFTEST=1") {
		return
	}
	t.Run("skips", func(t *testing.T) { t.Skip("deliberate subtest skip") })
	t.Run("fails", func(t *testing.T) { t.Fatal("deliberate subtest failure") })
}

func TestNobodyVerdictsForwarded(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to start runs as nobody")
	}
	out, err := runSelfTest("TestHelperNobodyPartlySkipped")
	if err != nil || !strings.Contains("\n"+out, "\n--- PASS: TestHelperNobodyPartlySkipped (") {
		t.Errorf("a nobody run that passed with a subtest skipped not forwarded as a pass (err=%v):\n%s", err, out)
	}
	out, err = runSelfTest("TestHelperNobodyFailingWithSkip")
	if err == nil || !strings.Contains("\n"+out, "\n--- FAIL: TestHelperNobodyFailingWithSkip (") || !strings.Contains(out, "deliberate subtest failure") {
		t.Errorf("a nobody run with a failing and a skipped subtest not forwarded as a failure (err=%v):\n%s", err, out)
	}
}
