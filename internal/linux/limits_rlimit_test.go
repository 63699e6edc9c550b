package linux

import (
	"strings"
	"testing"
	"time"

	"github.com/openparallax/sandbox/internal/spec"
	"github.com/openparallax/sandbox/internal/trampoline"
)

// The child half never asks for a hard limit above the ceiling it can set
// (the caller's hard limit: it sets its limits without capabilities): a limit above it is
// set as the ceiling, soft and hard, which still holds the limit; a limit
// below it is set exactly; RLIMIT_CORE is 0 whatever the ceiling.
func TestLimitCommandRlimitsCeiling(t *testing.T) {
	l := Limits{Processes: 200000, CPUTime: 10 * time.Second, FileSizeBytes: 4096, OpenFiles: 30000}
	ceiling := map[int]uint64{rlimitNPROC: 4096, rlimitNOFILE: 20000, rlimitFSIZE: ^uint64(0), rlimitCPU: 5}
	got := map[uint32]trampoline.Rlimit{}
	for _, r := range commandRlimits(spec.Limits(l), spec.Cgroup{}, ceiling) {
		got[r.Resource] = r
	}
	for res, want := range map[int][2]uint64{
		rlimitNPROC:  {4096, 4096},   // above the ceiling: the ceiling
		rlimitNOFILE: {20000, 20000}, // the same
		rlimitFSIZE:  {4096, 4096},   // below: exactly
		rlimitCPU:    {5, 5},         // 10 s soft, 11 s hard, over a 5 s ceiling
		rlimitCORE:   {0, 0},         // always
	} {
		if r, ok := got[uint32(res)]; !ok || r.Cur != want[0] || r.Max != want[1] {
			t.Errorf("resource %d: %+v (set: %v), want soft %d, hard %d", res, r, ok, want[0], want[1])
		}
	}
	// Without a ceiling (a limit the caller could not read): the limits asked.
	for _, r := range commandRlimits(spec.Limits(l), spec.Cgroup{}, nil) {
		if r.Resource == rlimitNOFILE && (r.Cur != 30000 || r.Max != 30000) {
			t.Errorf("RLIMIT_NOFILE without a ceiling: %+v", r)
		}
	}
}

// The plan says what a hard limit lower than a limit makes of it, for
// each entry point, and that the limit holds.
func TestLimitHardNotes(t *testing.T) {
	rc, err := resolve(Config{Limits: Limits{OpenFiles: 30000, FileSizeBytes: 4096}})
	if err != nil {
		t.Fatal(err)
	}
	hard := map[string]uint64{spec.FeatureLimitOpenFiles: 20000, spec.FeatureLimitFileSize: 1 << 30}
	find := func(fs []spec.Enforcement, f, scope string) spec.Enforcement {
		for _, e := range fs {
			if e.Feature == f && e.Scope == scope {
				return e
			}
		}
		t.Fatalf("no %s for %s in %+v", f, scope, fs)
		return spec.Enforcement{}
	}
	contains := func(e spec.Enforcement, want string) {
		t.Helper()
		if !e.Enforced || !strings.Contains(e.Detail, want) {
			t.Errorf("%s %s: want enforced and %q in %q", e.Scope, e.Feature, want, e.Detail)
		}
	}
	fs := linuxLimitFeatures(rc, selfCreds{hard: hard}, spec.Cgroup{})
	contains(find(fs, spec.FeatureLimitOpenFiles, spec.ScopeApplySelf), "this process's hard limit is lower, 20000, and stays: the limit holds")
	contains(find(fs, spec.FeatureLimitOpenFiles, spec.ScopeCommand), "the caller's hard limit is lower, 20000, and the child half cannot raise it")
	for _, scope := range []string{spec.ScopeApplySelf, spec.ScopeCommand} {
		if e := find(fs, spec.FeatureLimitFileSize, scope); strings.Contains(e.Detail, "hard limit") {
			t.Errorf("a hard limit above the limit is mentioned: %+v", e)
		}
	}
}

// RLIMIT_CORE is 0 with any limit, also when the tree's cgroup holds every
// limit asked and the child half sets no other rlimit; with none, no
// rlimit at all.
func TestLimitCommandRlimitsCore(t *testing.T) {
	full := spec.Cgroup{Version: "cgroup v2", Pids: true, Memory: true, CPU: true}
	for _, l := range []Limits{{Processes: 8}, {MemoryBytes: 1 << 20, CPUTime: time.Second}, {OpenFiles: 8}} {
		rs := commandRlimits(spec.Limits(l), full, nil)
		if len(rs) == 0 || rs[len(rs)-1] != (trampoline.Rlimit{Resource: rlimitCORE}) {
			t.Errorf("%+v with every controller: %+v, want RLIMIT_CORE 0 last", l, rs)
		}
	}
	if rs := commandRlimits(spec.Limits{}, full, nil); len(rs) != 0 {
		t.Errorf("no limits: %+v", rs)
	}
}
