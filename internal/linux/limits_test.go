package linux

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/openparallax/sandbox/internal/spec"
)

// What ApplySelf's rlimits promise depends on who calls: root is exempt
// from RLIMIT_NPROC, CAP_SYS_RESOURCE lifts any hard limit, and RLIMIT_CPU
// and RLIMIT_DATA are per process.
func TestLinuxLimitFeatures(t *testing.T) {
	all := Limits{Processes: 10, MemoryBytes: 1 << 20, CPUTime: 1500 * time.Millisecond, FileSizeBytes: 4096, OpenFiles: 32}
	type want map[string]bool // feature → enforced under ApplySelf
	cases := []struct {
		name  string
		creds selfCreds
		spawn bool
		want  want
	}{
		{"user", selfCreds{}, false, want{spec.FeatureLimitProcesses: true, spec.FeatureLimitMemory: false, spec.FeatureLimitCPUTime: true, spec.FeatureLimitFileSize: true, spec.FeatureLimitOpenFiles: true}},
		{"user-spawn", selfCreds{}, true, want{spec.FeatureLimitProcesses: true, spec.FeatureLimitMemory: false, spec.FeatureLimitCPUTime: false, spec.FeatureLimitFileSize: true, spec.FeatureLimitOpenFiles: true}},
		{"root-no-caps", selfCreds{uid0: true}, false, want{spec.FeatureLimitProcesses: false, spec.FeatureLimitMemory: false, spec.FeatureLimitCPUTime: true, spec.FeatureLimitFileSize: true, spec.FeatureLimitOpenFiles: true}},
		{"cap-sys-resource", selfCreds{capResource: true}, false, want{spec.FeatureLimitProcesses: false, spec.FeatureLimitMemory: false, spec.FeatureLimitCPUTime: false, spec.FeatureLimitFileSize: false, spec.FeatureLimitOpenFiles: false}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rc, err := resolve(Config{Limits: all, AllowProcessSpawn: c.spawn})
			if err != nil {
				t.Fatal(err)
			}
			fs := linuxLimitFeatures(rc, c.creds, spec.Cgroup{Why: "test: none"})
			if len(fs) != 10 {
				t.Fatalf("%d entries, want 5 per entry point: %+v", len(fs), fs)
			}
			p := spec.Plan{Available: true, Features: fs}
			for _, f := range fs {
				switch f.Scope {
				case spec.ScopeApplySelf:
					if f.Enforced != c.want[f.Feature] {
						t.Errorf("ApplySelf %s enforced=%v, want %v: %s", f.Feature, f.Enforced, c.want[f.Feature], f.Detail)
					}
				case spec.ScopeCommand:
					// The child half's rlimits, without a cgroup: as
					// ApplySelf's, but it drops CAP_SYS_RESOURCE first.
					want := c.want[f.Feature]
					if c.creds.capResource {
						want = f.Feature != spec.FeatureLimitMemory
					}
					if f.Enforced != want {
						t.Errorf("WrapCommand %s enforced=%v, want %v: %s", f.Feature, f.Enforced, want, f.Detail)
					}
				default:
					t.Errorf("unscoped %+v", f)
				}
			}
			strict := Config{Strict: true}
			if err := checkApplicable(p, strict); !errors.Is(err, spec.ErrNotEnforced) || !strings.Contains(err.Error(), spec.FeatureLimitMemory+" (") ||
				strings.Contains(err.Error(), spec.FeatureLimitFileSize+" (") {
				t.Errorf("WrapCommand under Strict: %v", err)
			}
			err = checkApplicableIn(p, strict, spec.ScopeApplySelf)
			if !errors.Is(err, spec.ErrNotEnforced) {
				t.Fatalf("ApplySelf under Strict: %v (memory is never enforced there)", err)
			}
			for feature, enforced := range c.want {
				if named := strings.Contains(err.Error(), feature+" ("); named == enforced {
					t.Errorf("ApplySelf under Strict: %s named=%v, enforced=%v: %v", feature, named, enforced, err)
				}
			}
		})
	}
	// One limit that binds: Strict ApplySelf accepts it.
	rc, _ := resolve(Config{Limits: Limits{OpenFiles: 8}})
	p := spec.Plan{Available: true, Features: linuxLimitFeatures(rc, selfCreds{}, spec.Cgroup{})}
	if err := checkApplicableIn(p, Config{Strict: true}, spec.ScopeApplySelf); err != nil {
		t.Errorf("Strict ApplySelf refuses an enforced RLIMIT_NOFILE: %v", err)
	}
}

// With a cgroup holding every controller, WrapCommand and Run enforce
// every limit for the whole tree, as root too, and the child half sets
// only the per-process rlimits; a cgroup without the memory controller
// leaves memory to RLIMIT_DATA, reported as not enforced.
func TestCommandLimitsWithCgroup(t *testing.T) {
	all := Limits{Processes: 10, MemoryBytes: 1 << 20, CPUTime: 1500 * time.Millisecond, FileSizeBytes: 4096, OpenFiles: 32}
	rc, err := resolve(Config{Limits: all, AllowProcessSpawn: true, Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	full := spec.Cgroup{Version: "cgroup v2", Pids: true, Memory: true, CPU: true, Where: "/sys/fs/cgroup/system.slice/openparallax-sandbox"}
	p := spec.Plan{Available: true, Features: linuxLimitFeatures(rc, selfCreds{uid0: true}, full)}
	for _, f := range p.Features {
		if f.Scope == spec.ScopeCommand && !f.Enforced {
			t.Errorf("WrapCommand with a full cgroup: %s not enforced: %s", f.Feature, f.Detail)
		}
		// The plan names the cgroup the trees' cgroups are made in.
		if tree := f.Feature == spec.FeatureLimitProcesses || f.Feature == spec.FeatureLimitMemory || f.Feature == spec.FeatureLimitCPUTime; f.Scope == spec.ScopeCommand && tree &&
			!strings.Contains(f.Detail, "cgroup v2 (a cgroup in /sys/fs/cgroup/system.slice/openparallax-sandbox)") {
			t.Errorf("WrapCommand %s does not say which cgroup: %s", f.Feature, f.Detail)
		}
	}
	if err := checkApplicable(p, Config{Strict: rc.Config.Strict}); err != nil {
		t.Errorf("Strict WrapCommand with a full cgroup: %v", err)
	}
	noMem := full
	noMem.Memory, noMem.Why = false, "memory: not mounted"
	p = spec.Plan{Available: true, Features: linuxLimitFeatures(rc, selfCreds{uid0: true}, noMem)}
	err = checkApplicable(p, Config{Strict: rc.Config.Strict})
	if !errors.Is(err, spec.ErrNotEnforced) || !strings.Contains(err.Error(), spec.FeatureLimitMemory+" (") || !strings.Contains(err.Error(), "memory: not mounted") ||
		strings.Contains(err.Error(), spec.FeatureLimitProcesses+" (") {
		t.Errorf("Strict WrapCommand without the memory controller: %v", err)
	}
}

func TestRlimitSeconds(t *testing.T) {
	for d, want := range map[time.Duration]uint64{time.Nanosecond: 1, time.Second: 1, 1001 * time.Millisecond: 2, time.Minute: 60} {
		if got := rlimitSeconds(d); got != want {
			t.Errorf("rlimitSeconds(%v) = %d, want %d", d, got, want)
		}
	}
}
