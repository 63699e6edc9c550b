package sandbox

import (
	"errors"
	"strings"
	"testing"
	"time"
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
		{"user", selfCreds{}, false, want{FeatureLimitProcesses: true, FeatureLimitMemory: false, FeatureLimitCPUTime: true, FeatureLimitFileSize: true, FeatureLimitOpenFiles: true}},
		{"user-spawn", selfCreds{}, true, want{FeatureLimitProcesses: true, FeatureLimitMemory: false, FeatureLimitCPUTime: false, FeatureLimitFileSize: true, FeatureLimitOpenFiles: true}},
		{"root-no-caps", selfCreds{uid0: true}, false, want{FeatureLimitProcesses: false, FeatureLimitMemory: false, FeatureLimitCPUTime: true, FeatureLimitFileSize: true, FeatureLimitOpenFiles: true}},
		{"cap-sys-resource", selfCreds{capResource: true}, false, want{FeatureLimitProcesses: false, FeatureLimitMemory: false, FeatureLimitCPUTime: false, FeatureLimitFileSize: false, FeatureLimitOpenFiles: false}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rc, err := resolve(Config{Limits: all, AllowProcessSpawn: c.spawn})
			if err != nil {
				t.Fatal(err)
			}
			fs := linuxLimitFeatures(rc, c.creds, cgroupAvail{Why: "test: none"})
			if len(fs) != 10 {
				t.Fatalf("%d entries, want 5 per entry point: %+v", len(fs), fs)
			}
			p := Plan{Available: true, Features: fs}
			for _, f := range fs {
				switch f.Scope {
				case ScopeApplySelf:
					if f.Enforced != c.want[f.Feature] {
						t.Errorf("ApplySelf %s enforced=%v, want %v: %s", f.Feature, f.Enforced, c.want[f.Feature], f.Detail)
					}
				case ScopeCommand:
					// The child half's rlimits, without a cgroup: as
					// ApplySelf's, but it drops CAP_SYS_RESOURCE first.
					want := c.want[f.Feature]
					if c.creds.capResource {
						want = f.Feature != FeatureLimitMemory
					}
					if f.Enforced != want {
						t.Errorf("WrapCommand %s enforced=%v, want %v: %s", f.Feature, f.Enforced, want, f.Detail)
					}
				default:
					t.Errorf("unscoped %+v", f)
				}
			}
			strict := Config{Strict: true}
			if err := checkApplicable(p, strict); !errors.Is(err, ErrNotEnforced) || !strings.Contains(err.Error(), FeatureLimitMemory+" (") ||
				strings.Contains(err.Error(), FeatureLimitFileSize+" (") {
				t.Errorf("WrapCommand under Strict: %v", err)
			}
			err = checkApplicableIn(p, strict, ScopeApplySelf)
			if !errors.Is(err, ErrNotEnforced) {
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
	p := Plan{Available: true, Features: linuxLimitFeatures(rc, selfCreds{}, cgroupAvail{})}
	if err := checkApplicableIn(p, Config{Strict: true}, ScopeApplySelf); err != nil {
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
	full := cgroupAvail{Version: "cgroup v2", Pids: true, Memory: true, CPU: true, Where: "/sys/fs/cgroup/system.slice/openparallax-sandbox"}
	p := Plan{Available: true, Features: linuxLimitFeatures(rc, selfCreds{uid0: true}, full)}
	for _, f := range p.Features {
		if f.Scope == ScopeCommand && !f.Enforced {
			t.Errorf("WrapCommand with a full cgroup: %s not enforced: %s", f.Feature, f.Detail)
		}
		// The plan names the cgroup the trees' cgroups are made in.
		if tree := f.Feature == FeatureLimitProcesses || f.Feature == FeatureLimitMemory || f.Feature == FeatureLimitCPUTime; f.Scope == ScopeCommand && tree &&
			!strings.Contains(f.Detail, "cgroup v2 (a cgroup in /sys/fs/cgroup/system.slice/openparallax-sandbox)") {
			t.Errorf("WrapCommand %s does not say which cgroup: %s", f.Feature, f.Detail)
		}
	}
	if err := checkApplicable(p, Config{Strict: rc.Config.Strict}); err != nil {
		t.Errorf("Strict WrapCommand with a full cgroup: %v", err)
	}
	noMem := full
	noMem.Memory, noMem.Why = false, "memory: not mounted"
	p = Plan{Available: true, Features: linuxLimitFeatures(rc, selfCreds{uid0: true}, noMem)}
	err = checkApplicable(p, Config{Strict: rc.Config.Strict})
	if !errors.Is(err, ErrNotEnforced) || !strings.Contains(err.Error(), FeatureLimitMemory+" (") || !strings.Contains(err.Error(), "memory: not mounted") ||
		strings.Contains(err.Error(), FeatureLimitProcesses+" (") {
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
