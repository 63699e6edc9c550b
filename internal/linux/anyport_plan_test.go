package linux

// Any-port entries ("host:*") and "*:*" as data, on every OS: what the
// Linux policy and ApplySelf's plan make of them. The egress namespace's
// plan is tested in egress_anyport_test.go; the macOS plan and
// Describe in the root's anyport_plan_test.go.

import (
	"strings"
	"testing"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"github.com/openparallax/sandbox/internal/spec"
)

func features(p spec.Plan, name string) []spec.Enforcement {
	var out []spec.Enforcement
	for _, f := range p.Features {
		if f.Feature == name {
			out = append(out, f)
		}
	}
	return out
}

func TestLinuxPlanAnyPort(t *testing.T) {
	for _, c := range []struct {
		name     string
		connect  []string
		enforced bool   // tcp_connect
		detail   string // in tcp_connect's detail
		host     bool   // a tcp_connect_host entry (ApplySelf's, not enforced)
	}{
		{"host any port", []string{"api.example.com:*", "127.0.0.1:8080"}, false, "api.example.com:* (any port) can be granted only by not handling TCP connect: the program can connect to any host on any port", true},
		{"localhost any port", []string{"localhost:*"}, false, "localhost:*", true},
		{"unrestricted", []string{"*:*"}, true, "*:* is TCP connect to any host on any port", false},
		{"unrestricted beside a host", []string{"*:*", "api.example.com:*"}, true, "unrestricted", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			rc := testResolved(t, Config{AllowedTCPConnect: c.connect, AllowedTCPBind: []uint16{9000}})
			pol := buildLinuxPolicy(rc, 7, "/proc/self", nil)
			// Landlock cannot name a host: connect is not handled at all
			// (no rule could be made for an unhandled access), bind still is.
			if pol.HandledNet&ll.AccessNetConnectTCP != 0 || pol.HandledNet&ll.AccessNetBindTCP == 0 || len(pol.Connect) != 0 {
				t.Errorf("HandledNet %v, Connect %v: want connect unhandled, bind handled, no connect rule", pol.HandledNet, pol.Connect)
			}
			if !pol.Seccomp.AllowTCP {
				t.Error("seccomp refuses TCP sockets")
			}
			plan := withArtefacts(linuxPlan(rc, pol, true, ""), pol)
			fs := features(plan, spec.FeatureTCPConnect)
			if len(fs) != 1 || fs[0].Enforced != c.enforced || fs[0].Scope != "" || !strings.Contains(fs[0].Detail, c.detail) {
				t.Errorf("tcp_connect %+v, want one entry, enforced %v, detail with %q", fs, c.enforced, c.detail)
			}
			if !c.enforced && fs[0].Hint == "" {
				t.Error("tcp_connect not enforced without a remedy")
			}
			hs := features(plan, spec.FeatureTCPHost)
			if (len(hs) == 1 && !hs[0].Enforced && hs[0].Scope == spec.ScopeApplySelf && strings.Contains(hs[0].Detail, "any port")) != c.host {
				t.Errorf("tcp_connect_host %+v, want an ApplySelf entry: %v", hs, c.host)
			}
			if b := features(plan, spec.FeatureTCPBind); len(b) != 1 || !b[0].Enforced || !strings.Contains(b[0].Detail, "9000") {
				t.Errorf("tcp_bind %+v: the bind rules must stay", b)
			}
			err := plan.StrictError(spec.ScopeApplySelf)
			if refused := err != nil && strings.Contains(err.Error(), spec.FeatureTCPConnect+" ("); refused == c.enforced {
				t.Errorf("Strict under ApplySelf: %v; want tcp_connect refused: %v", err, !c.enforced)
			}
			if !strings.Contains(strings.Join(plan.Network, "\n"), "tcp connect not handled by Landlock (any host, any port)") {
				t.Errorf("Network lines %q do not say connect is not handled", plan.Network)
			}
		})
	}
	// Before ABI 4 nothing filters ports anyway: as for any Config.
	rc := testResolved(t, Config{AllowedTCPConnect: []string{"api.example.com:*"}})
	if fs := features(linuxPlan(rc, buildLinuxPolicy(rc, 3, "/proc/self", nil), true, ""), spec.FeatureTCPConnect); len(fs) != 1 || fs[0].Enforced ||
		!strings.Contains(fs[0].Detail, "needs Landlock ABI 4") {
		t.Errorf("ABI 3: %+v", fs)
	}
	// A Config with no any-port entry keeps its port rules.
	rc = testResolved(t, Config{AllowedTCPConnect: []string{"api.example.com:443"}})
	if pol := buildLinuxPolicy(rc, 7, "/proc/self", nil); pol.HandledNet&ll.AccessNetConnectTCP == 0 || len(pol.Connect) != 1 || len(pol.ConnectAnyPort) != 0 {
		t.Errorf("a per-port Config: HandledNet %v, Connect %v, ConnectAnyPort %v", pol.HandledNet, pol.Connect, pol.ConnectAnyPort)
	}
}
