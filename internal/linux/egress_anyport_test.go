package linux

// Any-port entries under WrapCommand and Run with the egress namespace, as
// data: the mode, the transparent ports, the child's connect rules, and
// what the plan reports per entry point (see egress_anyport.go).

import (
	"slices"
	"strings"
	"testing"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"github.com/openparallax/sandbox/internal/spec"
)

func TestEgressPlanAnyPort(t *testing.T) {
	defer func(old func() (bool, string, string)) { netNamespacesAvailable = old }(netNamespacesAvailable)
	defer func(old func() (bool, string)) { transparentAvailable = old }(transparentAvailable)
	netNamespacesAvailable = func() (bool, string, string) { return true, "", "" }
	transparentAvailable = func() (bool, string) { return true, "" }

	for _, c := range []struct {
		name      string
		connect   []string
		mode      string   // "" for no Plan.Egress
		ports     []uint16 // the transparent path's
		connectTo []uint16 // the child's Landlock connect ports; nil: connect not handled
		direct    string   // in tcp_connect_any_port's detail; "" for no such entry
	}{
		{name: "localhost only", connect: []string{"localhost:*"}, mode: spec.EgressProxy,
			connectTo: []uint16{3128}, direct: "on no port"},
		{name: "beside a listed port", connect: []string{"api.example.com:*", "10.1.2.3:*", "other.example.com:443"}, mode: spec.EgressTransparent,
			ports: []uint16{443}, connectTo: []uint16{3128, 443}, direct: "only on ports 443"},
		{name: "mixed with a port rule", connect: []string{"api.example.com:*", "*:443"}, mode: spec.EgressPortOnly},
		{name: "unrestricted", connect: []string{"*:*"}},
		{name: "unrestricted beside a host", connect: []string{"*:*", "localhost:*"}, mode: spec.EgressPortOnly},
	} {
		t.Run(c.name, func(t *testing.T) {
			rc, err := resolve(Config{AllowedTCPConnect: c.connect})
			if err != nil {
				t.Fatal(err)
			}
			e := egressPlanFor(rc)
			pol := buildLinuxPolicy(rc, 7, inChild, []string{"/bin/true"})
			plan := linuxPlan(rc, pol, true, "")
			e.addTo(&plan)
			switch {
			case c.mode == "" && plan.Egress != nil, c.mode != "" && (plan.Egress == nil || plan.Egress.Mode != c.mode):
				t.Fatalf("Plan.Egress %+v, want mode %q", plan.Egress, c.mode)
			}
			if !slices.Equal(e.transparent, c.ports) {
				t.Errorf("transparent ports %v, want %v", e.transparent, c.ports)
			}
			// The child's rules, as wrapLinux makes them.
			if e.on {
				e.restrictConnect(&pol)
			}
			handled := pol.HandledNet&ll.AccessNetConnectTCP != 0
			if handled != (c.connectTo != nil) || !slices.Equal(pol.Connect, c.connectTo) {
				t.Errorf("child's connect: handled %v, ports %v; want %v", handled, pol.Connect, c.connectTo)
			}
			conn := features(plan, spec.FeatureTCPConnect)
			anyp := features(plan, spec.FeatureTCPAnyPort)
			if c.direct == "" {
				if len(anyp) != 0 || len(conn) != 1 || conn[0].Scope != "" {
					t.Errorf("no egress namespace: tcp_connect %+v, tcp_connect_any_port %+v; want one unscoped tcp_connect and no any-port entry", conn, anyp)
				}
				if conn[0].Enforced != slices.Contains(c.connect, "*:*") {
					t.Errorf("tcp_connect %+v: enforced only for *:*", conn[0])
				}
				return
			}
			// Under the namespace: WrapCommand's tcp_connect first
			// (Describe reads it), enforced; ApplySelf's after it, not.
			if len(conn) != 2 || conn[0].Scope != spec.ScopeCommand || !conn[0].Enforced || !strings.Contains(conn[0].Detail, "only to ports 3128 (the proxy)") ||
				conn[1].Scope != spec.ScopeApplySelf || conn[1].Enforced || !strings.HasPrefix(conn[1].Detail, "ApplySelf: ") {
				t.Errorf("tcp_connect entries %+v", conn)
			}
			if len(anyp) != 1 || anyp[0].Enforced || anyp[0].Scope != spec.ScopeCommand || anyp[0].Hint == "" ||
				!strings.Contains(anyp[0].Detail, "only through the proxy at 127.0.0.1:3128") || !strings.Contains(anyp[0].Detail, c.direct) ||
				!strings.Contains(anyp[0].Detail, "EACCES") {
				t.Errorf("tcp_connect_any_port %+v, want granted in part, direct %q", anyp, c.direct)
			}
			var wantAny []string
			for _, s := range c.connect {
				if strings.HasSuffix(s, ":*") {
					wantAny = append(wantAny, s)
				}
			}
			if !slices.Equal(plan.Egress.AnyPort, wantAny) {
				t.Errorf("Plan.Egress.AnyPort %v, want %v", plan.Egress.AnyPort, wantAny)
			}
			if host := features(plan, spec.FeatureTCPHost); len(host) == 0 || !host[0].Enforced || host[0].Scope != spec.ScopeCommand {
				t.Errorf("tcp_connect_host %+v: the host is enforced under the namespace", host)
			}
			// Strict refuses the partial grant under WrapCommand, and
			// ApplySelf's unhandled connect under ApplySelf.
			if err := plan.StrictError(spec.ScopeCommand); err == nil || !strings.Contains(err.Error(), spec.FeatureTCPAnyPort) ||
				strings.Contains(err.Error(), "ApplySelf:") {
				t.Errorf("Strict, WrapCommand: %v", err)
			}
			if err := plan.StrictError(spec.ScopeApplySelf); err == nil || !strings.Contains(err.Error(), spec.FeatureTCPConnect+" (ApplySelf: TCP connect is not restricted") {
				t.Errorf("Strict, ApplySelf: %v", err)
			}
		})
	}

	t.Run("transparent path unavailable", func(t *testing.T) {
		transparentAvailable = func() (bool, string) { return false, "the transparent path is unavailable here: no IPv6 (test)" }
		defer func() { transparentAvailable = func() (bool, string) { return true, "" } }()
		rc, err := resolve(Config{AllowedTCPConnect: []string{"localhost:*", "example.com:443"}})
		if err != nil {
			t.Fatal(err)
		}
		e := egressPlanFor(rc)
		plan := spec.Plan{Available: true}
		e.addTo(&plan)
		if anyp := features(plan, spec.FeatureTCPAnyPort); len(anyp) != 1 || !strings.Contains(anyp[0].Detail, "on no port (the transparent path is not used: ") ||
			!strings.Contains(anyp[0].Detail, "no IPv6 (test)") {
			t.Errorf("tcp_connect_any_port %+v, want direct clients on no port, with the reason", anyp)
		}
	})
}
