package childtest_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/openparallax/sandbox/internal/childtest"
)

// The helper's own verdicts are tested by running these children directly
// and checking what the parent would see.

func TestChildSeesSharedValues(t *testing.T) {
	dir := childtest.Dir(t)
	pid := childtest.Share(t, func() string { return "parent-value" })
	childtest.Run(t, func(t *testing.T) {
		if !childtest.InChild(t) {
			t.Fatal("body ran outside the child")
		}
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			t.Fatalf("shared dir %q: %v", dir, err)
		}
		if pid != "parent-value" {
			t.Fatalf("shared value = %q", pid)
		}
	})
}

func TestHelperFailing(t *testing.T) {
	if os.Getenv("CHILDTEST_SELFTEST") == "" {
		t.Skip("only run by TestVerdictsForwarded")
	}
	childtest.Run(t, func(t *testing.T) { t.Fatal("deliberate failure") })
}

func TestHelperSkipping(t *testing.T) {
	if os.Getenv("CHILDTEST_SELFTEST") == "" {
		t.Skip("only run by TestVerdictsForwarded")
	}
	childtest.Run(t, func(t *testing.T) { t.Skip("deliberate skip reason") })
}

// A child whose test passed with a subtest skipped passes: only the
// test's own line is its verdict.
func TestHelperPartlySkipped(t *testing.T) {
	if os.Getenv("CHILDTEST_SELFTEST") == "" {
		t.Skip("only run by TestVerdictsForwarded")
	}
	childtest.Run(t, func(t *testing.T) {
		t.Run("runs", func(t *testing.T) {})
		t.Run("skips", func(t *testing.T) { t.Skip("deliberate subtest skip") })
	})
}

// A child with a failing subtest and a skipped one fails: a skip line
// does not hide the failure.
func TestHelperFailingWithSkip(t *testing.T) {
	if os.Getenv("CHILDTEST_SELFTEST") == "" {
		t.Skip("only run by TestVerdictsForwarded")
	}
	childtest.Run(t, func(t *testing.T) {
		t.Run("skips", func(t *testing.T) { t.Skip("deliberate subtest skip") })
		t.Run("fails", func(t *testing.T) { t.Fatal("deliberate subtest failure") })
	})
}

func TestVerdictsForwarded(t *testing.T) {
	if childtest.InChild(t) {
		return
	}
	out, err := runSelfTest("TestHelperFailing")
	if err == nil || !strings.Contains(out, "deliberate failure") || !strings.Contains(out, "--- FAIL: TestHelperFailing") {
		t.Errorf("failing child not forwarded as failure (err=%v):\n%s", err, out)
	}
	out, err = runSelfTest("TestHelperSkipping")
	if err != nil || !strings.Contains(out, "--- SKIP: TestHelperSkipping") || !strings.Contains(out, "deliberate skip reason") {
		t.Errorf("skipping child not forwarded as skip with reason (err=%v):\n%s", err, out)
	}
	out, err = runSelfTest("TestHelperPartlySkipped")
	if err != nil || !strings.Contains("\n"+out, "\n--- PASS: TestHelperPartlySkipped (") {
		t.Errorf("a child that passed with a subtest skipped not forwarded as a pass (err=%v):\n%s", err, out)
	}
	out, err = runSelfTest("TestHelperFailingWithSkip")
	if err == nil || !strings.Contains("\n"+out, "\n--- FAIL: TestHelperFailingWithSkip (") || !strings.Contains(out, "deliberate subtest failure") {
		t.Errorf("a child with a failing and a skipped subtest not forwarded as a failure (err=%v):\n%s", err, out)
	}
}

// runSelfTest runs the test called name in a new process of this binary,
// with CHILDTEST_SELFTEST set (the helper tests skip without it), and
// returns what the parent go test would see of it.
func runSelfTest(name string) (string, error) {
	cmd := exec.Command(os.Args[0], "-test.run="+childtest.Pattern(name), "-test.v")
	cmd.Env = append(os.Environ(), "CHILDTEST_SELFTEST=1")
	out, err := cmd.CombinedOutput()
	return string(out), err
}
