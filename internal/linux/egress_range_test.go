package linux

// Address range entries ("10.0.0.0/8:443", "[fd00::/8]:*") as data, on
// every OS: what ApplySelf's plan, the egress namespace's plan (with and
// without namespaces) and the child's rules make of them.

import (
	"errors"
	"slices"
	"strings"
	"testing"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"github.com/openparallax/sandbox/internal/spec"
)

func TestEgressPlanRange(t *testing.T) {
	defer func(old func() (bool, string, string)) { netNamespacesAvailable = old }(netNamespacesAvailable)
	defer func(old func() (bool, string)) { transparentAvailable = old }(transparentAvailable)
	netNamespacesAvailable = func() (bool, string, string) { return true, "", "" }
	transparentAvailable = func() (bool, string) { return true, "" }

	connect := []string{"10.0.0.0/8:443", "[fd00::/8]:8443", "192.168.4.0/22:*"}
	rc := testResolved(t, Config{AllowedTCPConnect: connect})
	pol := buildLinuxPolicy(rc, 7, inChild, []string{"/bin/true"})

	// ApplySelf: Landlock filters ports; the ranges are reported as not
	// enforced, and Strict refuses them (the any-port range leaves
	// connect unhandled, as every "host:*" does).
	self := linuxPlan(rc, pol, true, "")
	hs := features(self, spec.FeatureTCPHost)
	if len(hs) != 1 || hs[0].Enforced || hs[0].Scope != spec.ScopeApplySelf ||
		!strings.Contains(hs[0].Detail, "10.0.0.0/8:443, [fd00::/8]:8443, 192.168.4.0/22:*") || hs[0].Hint == "" {
		t.Errorf("ApplySelf's tcp_connect_host %+v: want the ranges not enforced, with a remedy", hs)
	}
	if err := self.StrictError(spec.ScopeApplySelf); !errors.Is(err, spec.ErrNotEnforced) || !strings.Contains(err.Error(), spec.FeatureTCPHost+" (") {
		t.Errorf("Strict under ApplySelf: %v, want tcp_connect_host refused", err)
	}
	// Per-port ranges alone: the ports are Landlock's rules.
	rcPorts := testResolved(t, Config{AllowedTCPConnect: connect[:2]})
	polPorts := buildLinuxPolicy(rcPorts, 7, inChild, []string{"/bin/true"})
	if polPorts.HandledNet&ll.AccessNetConnectTCP == 0 || !slices.Equal(polPorts.Connect, []uint16{443, 8443}) {
		t.Errorf("ApplySelf's policy for per-port ranges: handled %v, ports %v; want connect to 443 and 8443", polPorts.HandledNet, polPorts.Connect)
	}
	if fs := features(linuxPlan(rcPorts, polPorts, true, ""), spec.FeatureTCPConnect); len(fs) != 1 || !fs[0].Enforced {
		t.Errorf("ApplySelf's tcp_connect for per-port ranges %+v, want the port rule enforced", fs)
	}

	// WrapCommand and Run with the egress namespace: enforced, by
	// address; the any-port range as any other "host:*".
	e := egressPlanFor(rc)
	if !e.on || !slices.Equal(e.transparent, []uint16{443, 8443}) || !slices.Equal(e.anyPort, []string{"192.168.4.0/22:*"}) {
		t.Fatalf("egress plan: on %v, transparent %v, any-port %v (%s)", e.on, e.transparent, e.anyPort, e.reason)
	}
	for _, c := range []struct {
		host string
		port uint16
		ok   bool
	}{
		{"10.0.0.1", 443, true}, {"10.255.255.255", 443, true}, {"11.0.0.0", 443, false}, {"10.0.0.1", 8443, false},
		{"fd00::1", 8443, true}, {"fe00::1", 8443, false}, {"192.168.7.1", 22, true}, {"192.168.8.1", 22, false},
	} {
		if _, reason, _ := e.allow.Match(c.host, c.port); (reason == "") != c.ok {
			t.Errorf("the namespace's allowlist: %s:%d %q, want allowed %v", c.host, c.port, reason, c.ok)
		}
	}
	wrap := linuxPlan(rc, pol, true, "")
	e.addTo(&wrap)
	if wrap.Egress == nil || wrap.Egress.Mode != spec.EgressTransparent || !slices.Equal(wrap.Egress.Hosts, []string{"10.0.0.0/8:443", "[fd00::/8]:8443", "192.168.4.0/22:*"}) {
		t.Errorf("Plan.Egress %+v, want the transparent path for the three ranges", wrap.Egress)
	}
	var cmdHost, anyPort *spec.Enforcement
	for i, f := range wrap.Features {
		switch {
		case f.Feature == spec.FeatureTCPHost && f.Scope == spec.ScopeCommand:
			cmdHost = &wrap.Features[i]
		case f.Feature == spec.FeatureTCPAnyPort:
			anyPort = &wrap.Features[i]
		}
	}
	if !slices.ContainsFunc(wrap.Network, func(l string) bool {
		return strings.Contains(l, "answers DNS (UDP port 53, any address) for no name (every entry is an address or a range)")
	}) {
		t.Errorf("Plan.Network %q: want the resolver said to answer no name, the entries being ranges", wrap.Network)
	}
	mixed := egressPlanFor(testResolved(t, Config{AllowedTCPConnect: []string{"10.0.0.0/8:443", "Example.com:443", "example.com:8443", "127.0.0.1:80", "localhost:*"}}))
	if got := mixed.dnsScope(); got != "for example.com, localhost" {
		t.Errorf("the resolver's names with ranges, a literal and names among the entries: %q, want \"for example.com, localhost\"", got)
	}
	if cmdHost == nil || !cmdHost.Enforced || !strings.Contains(cmdHost.Detail, "Address ranges (10.0.0.0/8:443, [fd00::/8]:8443, 192.168.4.0/22:*) allow the addresses dialled in them, never a name") {
		t.Errorf("WrapCommand's tcp_connect_host %+v, want the ranges enforced", cmdHost)
	}
	if anyPort == nil || anyPort.Enforced || !strings.Contains(anyPort.Detail, "192.168.4.0/22:*") || !strings.Contains(anyPort.Detail, "only on ports 443, 8443") {
		t.Errorf("tcp_connect_any_port %+v, want the any-port range reached directly only on the listed ports, reported", anyPort)
	}
	if err := wrap.StrictError(spec.ScopeCommand); err == nil || !strings.Contains(err.Error(), spec.FeatureTCPAnyPort) || strings.Contains(err.Error(), spec.FeatureTCPHost) {
		t.Errorf("Strict under WrapCommand: %v, want only the any-port range refused", err)
	}
	e.restrictConnect(&pol)
	if pol.HandledNet&ll.AccessNetConnectTCP == 0 || !slices.Equal(pol.Connect, []uint16{3128, 443, 8443}) {
		t.Errorf("the child's connect rules: handled %v, ports %v; want the proxy's and the ranges' ports", pol.HandledNet, pol.Connect)
	}
	// Per-port ranges alone: nothing of WrapCommand's TCP is left
	// unenforced (file_metadata, not looked at by this plan, may be).
	ePorts := egressPlanFor(rcPorts)
	wrapPorts := linuxPlan(rcPorts, polPorts, true, "")
	ePorts.addTo(&wrapPorts)
	if err := wrapPorts.StrictError(spec.ScopeCommand); err != nil && strings.Contains(err.Error(), "tcp_") {
		t.Errorf("Strict under WrapCommand with per-port ranges: %v, want nothing of TCP refused", err)
	}

	// Without network namespaces: the ports only, reported.
	netNamespacesAvailable = func() (bool, string, string) { return false, "clone(CLONE_NEWNET) refused (test)", "a remedy" }
	e = egressPlanFor(rcPorts)
	f, _ := e.feature()
	if e.on || f.Enforced || !strings.Contains(f.Detail, "refused (test)") || e.out().Mode != spec.EgressPortOnly {
		t.Errorf("no namespaces: on %v, feature %+v, mode %s; want port-only, reported", e.on, f, e.out().Mode)
	}
}

// A range that holds the caller's loopback on a port the program binds is
// refused under the egress namespace, as "localhost:P" is.
func TestEgressRangeLoopbackBind(t *testing.T) {
	for connect, refused := range map[string]bool{
		"127.0.0.0/8:8080":  true,
		"127.0.0.4/31:8080": true,
		"64.0.0.0/2:8080":   true, // holds 127.0.0.0/8
		"[::/127]:8080":     true, // holds ::1
		"10.0.0.0/8:8080":   false,
		"127.0.0.0/8:8081":  false,
		"127.0.0.0/8:*":     false, // any port: P is then the program's own
	} {
		rc := testResolved(t, Config{AllowedTCPConnect: []string{connect}, AllowedTCPBind: []uint16{8080}})
		if got := loopbackBindConflict(rc.Connect, rc.Bind); (got != "") != refused {
			t.Errorf("%s with bind 8080: conflict %q, want refused %v", connect, got, refused)
		}
	}
}
