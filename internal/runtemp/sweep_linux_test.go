package runtemp

import (
	"strings"
	"testing"
	"time"
)

func TestParseRunTemp(t *testing.T) {
	if o, ok := parseRunTemp("sandbox-run-4026531836-123-456-789"); !ok || o.PIDNS != 4026531836 || o.PID != 123 || o.Start != 456 {
		t.Errorf("a named directory: %+v, %v", o, ok)
	}
	for _, name := range []string{"sandbox-run-123456", "sandbox-run-1-2-3", "sandbox-run-1-0-3-4", "sandbox-run-a-2-3-4",
		"sandbox-run-1-2-3-", "other-1-2-3-4", "sandbox-run-1-2-3-4-5"} {
		if o, ok := parseRunTemp(name); ok {
			t.Errorf("%s parsed as %+v", name, o)
		}
	}
	if p := Pattern(); !strings.HasPrefix(p, "sandbox-run-") || !strings.HasSuffix(p, "-*") {
		t.Errorf("pattern %q", p)
	}
	if o, ok := parseRunTemp(strings.Replace(Pattern(), "*", "42", 1)); !ok {
		t.Errorf("this process's own pattern %q does not parse back", Pattern())
	} else if self, _ := runOwner(); o != self {
		t.Errorf("this process's own pattern names %+v, not %+v", o, self)
	}
}

// TestSweepDue: a process sweeps a temporary directory at its first Run
// there, then not again until sweepEvery has passed since (a Run just
// before is not due, one at it is); another temporary directory has its
// own first sweep.
func TestSweepDue(t *testing.T) {
	now := time.Now()
	a, b := t.TempDir(), t.TempDir()
	steps := []struct {
		tmp  string
		at   time.Duration
		want bool
	}{
		{a, 0, true},
		{a, 0, false},
		{a, time.Second, false},
		{b, time.Second, true},
		{a, sweepEvery - time.Nanosecond, false},
		{a, sweepEvery, true},
		{a, sweepEvery + time.Second, false},
		{b, sweepEvery + time.Second, true},
		{a, 2 * sweepEvery, true},
	}
	for i, s := range steps {
		if got := sweepDue(s.tmp, now.Add(s.at)); got != s.want {
			t.Errorf("step %d: sweepDue(%s, +%v) = %v, want %v", i, s.tmp, s.at, got, s.want)
		}
	}
}
