package linux

// The Linux plan as data, on every OS: which features a policy reports,
// per Landlock ABI and entry point (linux_plan.go).

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/openparallax/sandbox/internal/execgrant"
	"github.com/openparallax/sandbox/internal/spec"
)

func TestLinuxPlanDegrades(t *testing.T) {
	rc := testResolved(t, Config{AllowedTCPConnect: []string{"*:443"}})
	cases := []struct {
		abi                            int
		tcp, scope, truncate, ioctlDev bool
	}{
		{1, false, false, false, false},
		{2, false, false, false, false},
		{3, false, false, true, false},
		{4, true, false, true, false},
		{5, true, false, true, true},
		{6, true, true, true, true},
		{7, true, true, true, true},
	}
	for _, c := range cases {
		plan := linuxPlan(rc, buildLinuxPolicy(rc, c.abi, "/proc/self", nil).forSelf(), true, "")
		check := func(name string, want bool) {
			f, ok := feature(plan, name)
			if !ok || f.Enforced != want || (!want && f.Detail == "") {
				t.Errorf("ABI %d: %s = %+v, want enforced=%v with a reason when not", c.abi, name, f, want)
			}
		}
		check(spec.FeatureFilesystem, true)
		check(spec.FeatureTCPConnect, c.tcp)
		check(spec.FeatureTCPBind, c.tcp)
		check(spec.FeatureScopeSignal, c.scope)
		check(spec.FeatureTruncate, c.truncate)
		check(spec.FeatureIoctlDev, c.ioctlDev)
		check(spec.FeatureSpawn, true)
		err := plan.StrictError(spec.ScopeCommand)
		if all := c.tcp && c.scope && c.truncate && c.ioctlDev; all != (err == nil) {
			t.Errorf("ABI %d: strict error %v", c.abi, err)
		}
		if err != nil && (!errors.Is(err, spec.ErrNotEnforced) || !strings.Contains(err.Error(), spec.FeatureScopeSignal) && !c.scope) {
			t.Errorf("ABI %d: strict error does not name the missing features: %v", c.abi, err)
		}
	}
}

func TestLinuxPlanWithoutNetworkGrantsUsesSeccomp(t *testing.T) {
	rc := testResolved(t, Config{})
	plan := linuxPlan(rc, buildLinuxPolicy(rc, 2, "/proc/self", nil), true, "")
	f, _ := feature(plan, spec.FeatureTCPConnect)
	if !f.Enforced || !strings.Contains(f.Detail, "seccomp") {
		t.Errorf("ABI 2 with no TCP granted: %+v, want enforced by seccomp", f)
	}
	if p := buildLinuxPolicy(rc, 2, "/proc/self", nil); p.Seccomp.AllowTCP || p.Seccomp.AllowUDP || p.Seccomp.AllowUnixSockets {
		t.Errorf("seccomp policy grants sockets nobody asked for: %+v", p.Seccomp)
	}
}

func TestLinuxPlanHostNotEnforced(t *testing.T) {
	rc := testResolved(t, Config{AllowedTCPConnect: []string{"example.com:443", "127.0.0.1:8080", "*:22"}})
	plan := linuxPlan(rc, buildLinuxPolicy(rc, 7, "/proc/self", nil), true, "")
	f, ok := feature(plan, spec.FeatureTCPHost)
	if !ok || f.Enforced || !strings.Contains(f.Detail, "example.com:443") || !strings.Contains(f.Detail, "127.0.0.1:8080") || strings.Contains(f.Detail, "22") {
		t.Errorf("host feature = %+v", f)
	}
	if p := buildLinuxPolicy(rc, 7, "/proc/self", nil); !slices.Equal(p.Connect, []uint16{443, 8080, 22}) {
		t.Errorf("connect ports %v", p.Connect)
	}
}

func TestLinuxPlanUnavailable(t *testing.T) {
	rc := testResolved(t, Config{})
	plan := linuxPlan(rc, buildLinuxPolicy(rc, 0, "/proc/self", nil), true, "not enabled at boot")
	if plan.Available || !strings.Contains(plan.Reason, "not enabled at boot") {
		t.Fatalf("plan without Landlock: %+v", plan)
	}
	for _, f := range plan.Features {
		if f.Enforced {
			t.Errorf("%s enforced without Landlock", f.Feature)
		}
	}
	if err := checkApplicable(plan, Config{}); !errors.Is(err, spec.ErrUnavailable) {
		t.Errorf("checkApplicable = %v", err)
	}
	plan = linuxPlan(rc, buildLinuxPolicy(rc, 7, "/proc/self", nil), false, "")
	if plan.Available || !strings.Contains(plan.Reason, "seccomp") {
		t.Errorf("plan without seccomp: %+v", plan)
	}
}

// The plan's exec_loader report: present exactly when a dynamic loader is
// on the exec allowlist and something can still be executed once the
// program runs.
func TestExecLoaderReport(t *testing.T) {
	interps, _ := execgrant.Chain("/bin/true", nil)
	if len(interps) == 0 {
		t.Skip("/bin/true is statically linked here")
	}
	reported := func(rc *spec.Resolved, exec []string) bool {
		p := buildLinuxPolicy(rc, 7, inChild, exec)
		for _, f := range linuxPlan(rc, p, true, "").NotEnforced() {
			if f.Feature == spec.FeatureExecLoader {
				return true
			}
		}
		return false
	}
	cases := []struct {
		name string
		cfg  Config
		wrap bool
		want bool
	}{
		{"ApplySelf, no exec", Config{}, false, false},
		{"ApplySelf, dynamic exec path", Config{AllowedExecPaths: []string{"/bin/true"}}, false, true},
		{"WrapCommand, nothing after start", Config{}, true, false},
		{"WrapCommand, spawn allowed", Config{AllowProcessSpawn: true}, true, true},
		{"WrapCommand, exec path", Config{AllowedExecPaths: []string{"/bin/true"}}, true, true},
	}
	for _, c := range cases {
		var exec []string
		if c.wrap {
			exec = []string{"/bin/true"}
		}
		if got := reported(testResolved(t, c.cfg), exec); got != c.want {
			t.Errorf("%s: exec_loader reported %v, want %v", c.name, got, c.want)
		}
	}
}

// metadataEntries returns plan's file_metadata entries, in order.
func metadataEntries(plan spec.Plan) []spec.Enforcement {
	var out []spec.Enforcement
	for _, f := range plan.Features {
		if f.Feature == spec.FeatureMetadata {
			out = append(out, f)
		}
	}
	return out
}

// file_metadata per entry point, as data: PlanFor's plan (ApplySelf's
// policy with the layer WrapCommand would use) has a WrapCommand/Run entry
// first, enforced exactly when the mount layer is used (its read-only
// mounts: EROFS), then ApplySelf's (seccomp refuses every by-path form);
// WrapCommand's own plan has only the first, ApplySelf's only the second.
// Strict judges each entry point by its own entry.
func TestMetadataPlanPerEntryPoint(t *testing.T) {
	notNeeded := &mountLayer{}
	used := &mountLayer{needs: []string{"strict"}, ns: nsState{ok: true}}
	unavailable := &mountLayer{needs: []string{"strict"}, ns: nsState{reason: "probe refused", hint: "the probe's remedy"}}
	for _, c := range []struct {
		name      string
		cfg       Config
		layer     *mountLayer
		enforced  bool   // the WrapCommand/Run entry
		detail    string // in that entry's detail
		hint      string // that entry's hint
		selfFixed bool   // ApplySelf's entry enforced
	}{
		// A layer that nothing asks for: no Config makes one any more
		// (file metadata always asks), but what the plan says of a
		// layer not in use must still be the truth.
		{"layer not used", Config{}, notNeeded, false, "chmod and utimes by path of files the user owns outside the grants are NOT restricted", "confine the program with ApplySelf", true},
		{"layer used", Config{}, used, true, "fail with EROFS", "", true},
		{"layer unavailable", Config{}, unavailable, false, "unavailable here: probe refused", "the probe's remedy", true},
		{"allow_chown, layer used", Config{AllowChown: true}, used, false, "allow_chown", "leave allow_chown off", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			rc := testResolved(t, c.cfg)
			self := buildLinuxPolicy(rc, 7, "/proc/self", nil).forSelf()
			self.Layer = c.layer
			got := metadataEntries(linuxPlan(rc, self, true, ""))
			if len(got) != 2 || got[0].Scope != spec.ScopeCommand || got[1].Scope != spec.ScopeApplySelf {
				t.Fatalf("PlanFor's file_metadata entries %+v; want WrapCommand/Run's, then ApplySelf's", got)
			}
			cmd, as := got[0], got[1]
			if cmd.Enforced != c.enforced || !strings.Contains(cmd.Detail, c.detail) || !strings.HasPrefix(cmd.Detail, "WrapCommand/Run: ") ||
				(c.hint == "") != (cmd.Hint == "") || !strings.Contains(cmd.Hint, c.hint) {
				t.Errorf("WrapCommand/Run entry %+v; want enforced=%v, detail with %q, hint with %q", cmd, c.enforced, c.detail, c.hint)
			}
			if as.Enforced != c.selfFixed || !strings.HasPrefix(as.Detail, "ApplySelf: ") || strings.Contains(as.Detail, "WrapCommand") {
				t.Errorf("ApplySelf entry %+v; want enforced=%v, about ApplySelf only", as, c.selfFixed)
			}
			// What WrapCommand checks: its own policy (no
			// DenyPathMetadata) and layer.
			wrapPol := buildLinuxPolicy(rc, 7, inChild, []string{"/bin/true"})
			wrapPol.Layer = c.layer
			wrapPlan := linuxPlan(rc, wrapPol, true, "")
			if w := metadataEntries(wrapPlan); len(w) != 1 || w[0] != cmd {
				t.Errorf("WrapCommand's plan: %+v; want exactly PlanFor's WrapCommand/Run entry %+v", w, cmd)
			}
			strict := c.cfg
			strict.Strict = true
			err := checkApplicable(wrapPlan, strict)
			if names := err != nil && strings.Contains(err.Error(), spec.FeatureMetadata); names == c.enforced {
				t.Errorf("Strict WrapCommand: %v; want file_metadata named exactly when not enforced (%v)", err, !c.enforced)
			}
			// What ApplySelf checks: its own, without a layer.
			selfOnly := buildLinuxPolicy(rc, 7, "/proc/self", nil).forSelf()
			sp := linuxPlan(rc, selfOnly, true, "")
			if s := metadataEntries(sp); len(s) != 1 || s[0] != as {
				t.Errorf("ApplySelf's plan: %+v; want exactly PlanFor's ApplySelf entry %+v", s, as)
			}
			err = checkApplicableIn(sp, strict, spec.ScopeApplySelf)
			if names := err != nil && strings.Contains(err.Error(), spec.FeatureMetadata); names == c.selfFixed {
				t.Errorf("Strict ApplySelf: %v; want file_metadata named exactly when not enforced (%v)", err, !c.selfFixed)
			}
			// Describe (written for Run) lists the WrapCommand/Run gap:
			// the root package's TestDescribeMetadataGap.
		})
	}
	// Unavailable sandbox: both entries say so.
	rc := testResolved(t, Config{})
	p := buildLinuxPolicy(rc, 0, "/proc/self", nil).forSelf()
	p.Layer = used
	for _, e := range metadataEntries(linuxPlan(rc, p, true, "no landlock")) {
		if e.Enforced || !strings.Contains(e.Detail, "sandbox unavailable") {
			t.Errorf("without Landlock: %+v", e)
		}
	}
}

// sysv_ipc with AllowSysVIPC, as data: WrapCommand/Run's entry first (only
// when the namespaces were looked at), enforced exactly where they can be
// made (a private IPC namespace), else the host's namespace with the
// probe's reason and remedy; ApplySelf's always the host's, not enforced.
// Without AllowSysVIPC one entry: seccomp refuses.
func TestSysVIPCPlan(t *testing.T) {
	entries := func(cfg Config, ns *nsState, abi int) []spec.Enforcement {
		rc := testResolved(t, cfg)
		p := buildLinuxPolicy(rc, abi, "/proc/self", nil)
		p.IPCNamespace = ns
		var out []spec.Enforcement
		for _, f := range linuxPlan(rc, p, true, "no landlock").Features {
			if f.Feature == spec.FeatureSysVIPC {
				out = append(out, f)
			}
		}
		return out
	}
	ok := &nsState{ok: true}
	refused := &nsState{reason: "clone refused", hint: "the probe's remedy"}
	if got := entries(Config{}, ok, 7); len(got) != 1 || !got[0].Enforced || got[0].Scope != "" || !strings.Contains(got[0].Detail, "seccomp") {
		t.Errorf("without AllowSysVIPC: %+v; want one entry, seccomp refuses", got)
	}
	allow := Config{AllowSysVIPC: true}
	got := entries(allow, ok, 7)
	if len(got) != 2 || got[0].Scope != spec.ScopeCommand || !got[0].Enforced || !strings.Contains(got[0].Detail, "private IPC namespace") ||
		got[1].Scope != spec.ScopeApplySelf || got[1].Enforced || !strings.Contains(got[1].Detail, "host's IPC namespace") || got[1].Hint == "" {
		t.Errorf("namespaces available: %+v", got)
	}
	got = entries(allow, refused, 7)
	if len(got) != 2 || got[0].Scope != spec.ScopeCommand || got[0].Enforced || !strings.Contains(got[0].Detail, "host's IPC namespace") ||
		!strings.Contains(got[0].Detail, "clone refused") || got[0].Hint != "the probe's remedy" {
		t.Errorf("namespaces refused: %+v", got)
	}
	if got = entries(allow, nil, 7); len(got) != 1 || got[0].Scope != spec.ScopeApplySelf || got[0].Enforced {
		t.Errorf("ApplySelf's own plan: %+v; want only its entry, the host's namespace", got)
	}
	for _, e := range entries(allow, ok, 0) {
		if e.Enforced || !strings.Contains(e.Detail, "sandbox unavailable") {
			t.Errorf("without Landlock: %+v", e)
		}
	}
}
