package linux

import (
	"errors"
	"testing"

	"github.com/openparallax/sandbox/internal/childtest"
	"github.com/openparallax/sandbox/internal/spawnhelper"
	"github.com/openparallax/sandbox/internal/trampoline"
)

// TestNamespaceProbeProvesHelper: in a fresh process, the namespace
// probe's child is the helper, and its report answers the helper's own
// probe, which is then not run: one process start fewer for every
// `sandbox run`. The helper is then the child half (the same answer the
// probe would have given here: the helper runs, as the probe proved).
func TestNamespaceProbeProvesHelper(t *testing.T) {
	childtest.Run(t, func(t *testing.T) {
		if spawnhelper.Decided() {
			t.Fatal("the helper was already probed before the namespace probe: this test cannot see the saving")
		}
		if f, why := spawnhelper.Unproven(); f == nil {
			t.Skip("no helper can be made here:", why)
		}
		ns := namespaces()
		if !ns.ok && !spawnhelper.Decided() {
			t.Skipf("the namespace probe's child could not start or sent no report here (%s): the two probes ran one after the other, as before", ns.reason)
		}
		if !spawnhelper.Decided() {
			t.Fatal("the namespace probe ran with the helper and answered, but the helper is still undecided")
		}
		if n := spawnhelper.ProbeRuns(); n != 0 {
			t.Errorf("the helper's own probe ran %d times after the namespace probe proved it; want 0", n)
		}
		f, why := childHalf()
		if f == nil {
			t.Fatalf("the proven helper is not the child half: %s", why)
		}
		if n := spawnhelper.ProbeRuns(); n != 0 {
			t.Errorf("childHalf ran the helper's probe (%d) after it was proven", n)
		}
	})
}

// TestHelperProbeWithoutNamespaceProbe: where nothing proved the helper,
// Executable runs its own probe, once.
func TestHelperProbeWithoutNamespaceProbe(t *testing.T) {
	childtest.Run(t, func(t *testing.T) {
		if spawnhelper.Decided() {
			t.Fatal("the helper was already decided in a fresh process")
		}
		f, why := spawnhelper.Executable()
		if f == nil {
			t.Skip("the helper cannot run here:", why)
		}
		spawnhelper.Executable()
		if n := spawnhelper.ProbeRuns(); n != 1 {
			t.Errorf("the helper's own probe ran %d times; want once", n)
		}
	})
}

// TestProvesHelper: only a child that reports its namespace step proves
// the helper; a start refused (which may be the helper's execution
// refused) or an exit without a report decides nothing, and the probes
// then run one after the other, as before.
func TestProvesHelper(t *testing.T) {
	failed := errors.New("exit status 1")
	for _, c := range []struct {
		name string
		pr   probeRun
		err  error
		want bool
	}{
		{"the namespace step done", probeRun{}, nil, true},
		{"the namespace step reported failing", probeRun{waitErr: failed, failure: &trampoline.Failure{}}, nil, true},
		{"not started (execve or clone refused)", probeRun{startErr: errors.New("fork/exec: permission denied")}, nil, false},
		{"exited without a report", probeRun{waitErr: failed}, nil, false},
		{"failed here, before the child", probeRun{}, errors.New("pipe: too many open files"), false},
	} {
		if got := provesHelper(c.pr, c.err); got != c.want {
			t.Errorf("%s: provesHelper = %v, want %v", c.name, got, c.want)
		}
	}
}
