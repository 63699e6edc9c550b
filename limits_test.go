package sandbox_test

import (
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/openparallax/sandbox"
)

func TestLimitsJSON(t *testing.T) {
	l := sandbox.Limits{Processes: 64, MemoryBytes: 1 << 30, CPUTime: 90 * time.Second, FileSizeBytes: 1 << 20, OpenFiles: 256}
	b, err := json.Marshal(sandbox.Config{Limits: l})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"limits":{"processes":64,"memory_bytes":1073741824,"cpu_time":"1m30s","file_size_bytes":1048576,"open_files":256}`) {
		t.Errorf("marshalled: %s", b)
	}
	var back sandbox.Config
	if err := json.Unmarshal(b, &back); err != nil || back.Limits != l {
		t.Fatalf("round trip: %+v, %v", back.Limits, err)
	}
	for in, want := range map[string]time.Duration{
		`{"cpu_time":"2s"}`:       2 * time.Second,
		`{"cpu_time":2000000000}`: 2 * time.Second, // a bare time.Duration's encoding
		`{"cpu_time":null}`:       0,
		`{}`:                      0,
	} {
		var got sandbox.Limits
		if err := json.Unmarshal([]byte(in), &got); err != nil || got.CPUTime != want {
			t.Errorf("%s: %v, %v; want %v", in, got.CPUTime, err, want)
		}
	}
	for _, in := range []string{`{"cpu_time":"soon"}`, `{"cpu_time":true}`, `{"processes":"1"}`, `{"memory_byte":1}`} {
		var got sandbox.Limits
		if err := json.Unmarshal([]byte(in), &got); err == nil {
			t.Errorf("%s accepted: %+v", in, got)
		}
	}
	if b, _ := json.Marshal(sandbox.Limits{}); string(b) != "{}" {
		t.Errorf("zero Limits marshal to %s", b)
	}
}

func TestLimitsNegative(t *testing.T) {
	for field, l := range map[string]sandbox.Limits{
		"limits.processes":       {Processes: -1},
		"limits.memory_bytes":    {MemoryBytes: -1},
		"limits.cpu_time":        {CPUTime: -time.Second},
		"limits.file_size_bytes": {FileSizeBytes: -1},
		"limits.open_files":      {OpenFiles: -1},
	} {
		cfg := sandbox.Config{Limits: l}
		err := cfg.Validate()
		var ce *sandbox.ConfigError
		if !errors.As(err, &ce) || ce.Field != field || !errors.Is(err, sandbox.ErrInvalidConfig) {
			t.Errorf("%+v: %v, want a ConfigError for %s", l, err, field)
		}
		if _, err := sandbox.PlanFor(cfg); !errors.Is(err, sandbox.ErrInvalidConfig) {
			t.Errorf("PlanFor accepted %+v: %v", l, err)
		}
		if runtime.GOOS == "linux" { // refused before anything is applied
			if err := sandbox.New().ApplySelf(cfg); !errors.Is(err, sandbox.ErrInvalidConfig) {
				t.Errorf("ApplySelf accepted %+v: %v", l, err)
			}
		}
	}
}

// Every requested limit is in the plan, for each entry point it differs
// in; nothing is listed for limits not requested.
func TestPlanListsLimits(t *testing.T) {
	p, err := sandbox.PlanFor(sandbox.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range p.Features {
		if strings.HasPrefix(f.Feature, "limit_") {
			t.Errorf("a Config without limits lists %+v", f)
		}
	}
	p, err = sandbox.PlanFor(sandbox.Config{Limits: sandbox.Limits{FileSizeBytes: 1, CPUTime: time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, f := range p.Features {
		if strings.HasPrefix(f.Feature, "limit_") {
			seen[f.Feature]++
			if f.Detail == "" {
				t.Errorf("%+v has no detail", f)
			}
			// Only Linux enforces limits under WrapCommand and Run.
			if f.Scope == sandbox.ScopeCommand && f.Enforced && runtime.GOOS != "linux" {
				t.Errorf("WrapCommand/Run claim a limit: %+v", f)
			}
		}
	}
	if len(seen) != 2 || seen[sandbox.FeatureLimitFileSize] == 0 || seen[sandbox.FeatureLimitCPUTime] == 0 {
		t.Errorf("limits in the plan: %v", seen)
	}
}
