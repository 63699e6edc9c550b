package windows

import (
	"errors"
	"strings"
	"testing"

	"github.com/openparallax/sandbox/internal/spec"
	"github.com/openparallax/sandbox/internal/winjob"
)

// The Windows plan as data, on every OS, for the host states it depends on.

func resolved(t *testing.T, cfg spec.Config) *spec.Resolved {
	t.Helper()
	rc, err := spec.Resolve(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rc
}

// byFeature indexes p's entries; a feature listed twice is an error.
func byFeature(t *testing.T, p spec.Plan) map[string]spec.Enforcement {
	t.Helper()
	m := map[string]spec.Enforcement{}
	for _, f := range p.Features {
		if _, dup := m[f.Feature]; dup {
			t.Errorf("feature %s listed twice", f.Feature)
		}
		m[f.Feature] = f
	}
	return m
}

func TestPlanForPlainHost(t *testing.T) {
	p := PlanFor(resolved(t, spec.Config{}), Host{})
	if !p.Available || p.Platform != "windows" || p.Mechanism != spec.ModeJobObject || p.Reason != windowsLimits {
		t.Fatalf("plan header %q %q available=%v reason %q", p.Platform, p.Mechanism, p.Available, p.Reason)
	}
	var names []string
	for _, f := range p.Features {
		names = append(names, f.Feature)
	}
	want := "filesystem exec tcp_connect tcp_bind udp unix_sockets scope_signal process_spawn ui_restrictions unelevated syscall_filter"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("features %q, want %q", got, want)
	}
	m := byFeature(t, p)
	for _, name := range []string{spec.FeatureFilesystem, spec.FeatureExec, spec.FeatureTCPConnect, spec.FeatureTCPBind,
		spec.FeatureUDP, spec.FeatureUnixSockets, spec.FeatureScopeSignal} {
		if f := m[name]; f.Enforced || f.Hint != tokenHint {
			t.Errorf("%s %+v, want not enforced with the token hint", name, f)
		}
	}
	if f := m[spec.FeatureSpawn]; f.Enforced || f.Hint != spawnHint ||
		!strings.Contains(f.Detail, "inside the job only") || !strings.Contains(f.Detail, "ERROR_NOT_ENOUGH_QUOTA") ||
		!strings.Contains(f.Detail, "PROC_THREAD_ATTRIBUTE_PARENT_PROCESS") {
		t.Errorf("process_spawn %+v, want not enforced: inside the job only, with the same-user routes", f)
	}
	if f := m[FeatureUI]; !f.Enforced || f.Hint != "" || !strings.Contains(f.Detail, "JOBOBJECT_BASIC_UI_RESTRICTIONS") {
		t.Errorf("ui_restrictions %+v, want enforced", f)
	}
	if f := m[FeatureUnelevated]; !f.Enforced || f.Hint != "" {
		t.Errorf("unelevated %+v, want enforced", f)
	}
	if f := m[spec.FeatureSyscalls]; f.Enforced || f.Hint != "" {
		t.Errorf("syscall_filter %+v, want not enforced, no hint", f)
	}
	// Strict refuses a job alone: files and network are not confined.
	err := p.StrictError(spec.ScopeCommand)
	if !errors.Is(err, spec.ErrNotEnforced) || !strings.Contains(err.Error(), spec.FeatureFilesystem) {
		t.Errorf("Strict: %v, want ErrNotEnforced naming filesystem", err)
	}
	if strings.Contains(err.Error(), FeatureUI) {
		t.Errorf("Strict: %v names ui_restrictions, which is enforced", err)
	}
}

func TestPlanForInJob(t *testing.T) {
	m := byFeature(t, PlanFor(resolved(t, spec.Config{}), Host{InJob: true}))
	f := m[FeatureUI]
	if f.Enforced || !strings.Contains(f.Detail, "in a job already") || !strings.Contains(f.Hint, "CREATE_BREAKAWAY_FROM_JOB") {
		t.Errorf("ui_restrictions %+v, want not enforced: in a job already, breakaway hint", f)
	}
	if !m[FeatureUnelevated].Enforced {
		t.Errorf("unelevated %+v, want enforced: the host is not elevated", m[FeatureUnelevated])
	}
}

func TestPlanForElevated(t *testing.T) {
	p := PlanFor(resolved(t, spec.Config{}), Host{Elevated: true})
	m := byFeature(t, p)
	f := m[FeatureUnelevated]
	if f.Enforced || f.Hint != "run the caller unelevated" || !strings.Contains(f.Detail, "a job does not confine an administrator") {
		t.Errorf("unelevated %+v, want not enforced with its hint", f)
	}
	if !m[FeatureUI].Enforced {
		t.Errorf("ui_restrictions %+v, want enforced: the host is in no job", m[FeatureUI])
	}
	if err := p.StrictError(spec.ScopeApplySelf); err == nil || !strings.Contains(err.Error(), FeatureUnelevated) {
		t.Errorf("Strict: %v, want unelevated refused", err)
	}
}

func TestPlanForJobsUnsupported(t *testing.T) {
	h := Host{InJob: true, Elevated: true, Unsupported: errors.New("no nested jobs")}
	p := PlanFor(resolved(t, spec.Config{AllowProcessSpawn: true}), h)
	if p.Available || p.Mechanism != spec.ModeJobObject || p.Reason != "Job Objects unavailable: no nested jobs" {
		t.Fatalf("plan %+v, want unavailable with the reason", p)
	}
	var names []string
	for _, f := range p.Features {
		names = append(names, f.Feature)
		if f.Enforced || f.Detail != "sandbox unavailable: Job Objects unavailable: no nested jobs" {
			t.Errorf("%+v, want not enforced: sandbox unavailable", f)
		}
	}
	if got := strings.Join(names, " "); got != "filesystem exec tcp_connect tcp_bind process_spawn" {
		t.Errorf("features %q", got)
	}
	if err := spec.CheckApplicable(p, false, spec.ScopeCommand); !errors.Is(err, spec.ErrUnavailable) {
		t.Errorf("CheckApplicable: %v, want ErrUnavailable", err)
	}
}

func TestPlanForGrants(t *testing.T) {
	cfg := spec.Config{AllowUDP: true, AllowUnixSockets: true, AllowProcessSpawn: true,
		Limits: spec.Limits{Processes: 4, CPUTime: 1, OpenFiles: 8}}
	m := byFeature(t, PlanFor(resolved(t, cfg), Host{}))
	for _, name := range []string{spec.FeatureUDP, spec.FeatureUnixSockets, spec.FeatureSpawn} {
		if f := m[name]; !f.Enforced || f.Hint != "" || !strings.HasPrefix(f.Detail, "granted: ") {
			t.Errorf("%s %+v, want enforced as a grant", name, f)
		}
	}
	if f := m[spec.FeatureSpawn]; !strings.Contains(f.Detail, "breakaway denied") || !strings.Contains(f.Detail, "outlive the job") {
		t.Errorf("process_spawn %+v, want the job's children and the routes that outlive it", f)
	}
	for _, name := range []string{spec.FeatureLimitProcesses, spec.FeatureLimitCPUTime, spec.FeatureLimitOpenFiles} {
		f, ok := m[name]
		if !ok || f.Enforced || f.Scope != "" || !strings.Contains(f.Detail, "not enforced: Job Object limits") {
			t.Errorf("%s %+v (listed %v), want not enforced for every entry point", name, f, ok)
		}
	}
	for _, name := range []string{spec.FeatureLimitMemory, spec.FeatureLimitFileSize} {
		if _, ok := m[name]; ok {
			t.Errorf("%s listed, but not requested", name)
		}
	}
}

func TestStatus(t *testing.T) {
	for _, c := range []struct {
		name   string
		h      Host
		active bool
		has    []string
		hasNot []string
	}{
		{"plain", Host{}, true, []string{windowsLimits}, []string{"in a job already", "elevated"}},
		{"in a job", Host{InJob: true}, true, []string{windowsLimits, "in a job already"}, []string{"elevated"}},
		{"elevated", Host{Elevated: true}, true, []string{windowsLimits, "this process is elevated"}, []string{"in a job already"}},
		{"unsupported", Host{InJob: true, Unsupported: errors.New("old Windows")}, false,
			[]string{"Job Objects unavailable: old Windows"}, []string{windowsLimits, "in a job already"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			active, reason := Status(c.h)
			if active != c.active {
				t.Errorf("active %v, want %v", active, c.active)
			}
			for _, s := range c.has {
				if !strings.Contains(reason, s) {
					t.Errorf("reason %q lacks %q", reason, s)
				}
			}
			for _, s := range c.hasNot {
				if strings.Contains(reason, s) {
					t.Errorf("reason %q has %q", reason, s)
				}
			}
		})
	}
}

func TestJobOptions(t *testing.T) {
	for _, c := range []struct {
		spawn, nested bool
		want          winjob.Options
	}{
		{false, false, winjob.Options{ActiveProcessLimit: 1}},
		{false, true, winjob.Options{ActiveProcessLimit: 1, NoUIRestrictions: true}},
		{true, false, winjob.Options{}},
		{true, true, winjob.Options{NoUIRestrictions: true}},
	} {
		if got := JobOptions(spec.Config{AllowProcessSpawn: c.spawn}, c.nested); got != c.want {
			t.Errorf("JobOptions(spawn %v, nested %v) = %+v, want %+v", c.spawn, c.nested, got, c.want)
		}
	}
}

// TestPlanForNamesWindows: what Windows does not have is reported as
// Windows', wherever the plan is computed (the shared entries take the
// target OS, not the host's).
func TestPlanForNamesWindows(t *testing.T) {
	rc := &spec.Resolved{Config: spec.Config{AllowCamera: true, AllowExecWritePaths: true}, DenyRead: []string{"/secret"}}
	f := byFeature(t, PlanFor(rc, Host{}))
	for _, name := range []string{spec.FeatureDenyRead, spec.FeatureCamera, spec.FeatureExecWrites} {
		e, ok := f[name]
		if !ok || e.Enforced || !strings.Contains(e.Detail, "windows") || strings.Contains(e.Detail, "linux") {
			t.Errorf("%s: %+v, want not enforced, naming windows", name, e)
		}
	}
}
