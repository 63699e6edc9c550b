package sandbox

// Any-port entries ("host:*") and "*:*" as data, on every OS: the macOS
// plan and profile, and Describe. What the Linux policy and ApplySelf's
// plan make of them is tested in internal/linux's anyport_plan_test.go,
// the egress namespace's plan in its egress_anyport_linux_test.go,
// enforcement in egress_anyport_linux_test.go here.

import (
	"strings"
	"testing"

	"github.com/openparallax/sandbox/internal/spec"
)

func features(p Plan, name string) []Enforcement {
	var out []Enforcement
	for _, f := range p.Features {
		if f.Feature == name {
			out = append(out, f)
		}
	}
	return out
}

func TestDarwinPlanAnyPort(t *testing.T) {
	rcFor := func(eps ...string) *resolvedConfig {
		rc := &resolvedConfig{Config: spec.Config{AllowedTCPConnect: eps}}
		for _, s := range eps {
			ep, err := ParseEndpoint(s)
			if err != nil {
				t.Fatal(err)
			}
			rc.Connect = append(rc.Connect, ep)
		}
		return rc
	}
	for _, c := range []struct {
		eps         []string
		rule        string // the only connect rule in the profile
		notEnforced string // in the profile's NotEnforced, "" for none
		connect     string // in tcp_connect's detail
	}{
		{[]string{"localhost:*"}, `(remote tcp "localhost:*")`, "", "connect only to localhost:*"},
		{[]string{"[::1]:*"}, `(remote tcp "localhost:*")`, "", "connect only to localhost:*"},
		{[]string{"api.example.com:*"}, `(remote tcp "*:*")`, `host of "api.example.com:*" not enforced`, "connect only to *:*"},
		{[]string{"10.1.2.3:*"}, `(remote tcp "*:*")`, `host of "10.1.2.3:*" not enforced`, "connect only to *:*"},
		{[]string{"*:*"}, `(remote tcp "*:*")`, "", "any host on any port (outgoing TCP is unrestricted)"},
	} {
		rc := rcFor(c.eps...)
		prof, err := darwinProfile(rc, nil)
		if err != nil {
			t.Fatalf("%q: %v", c.eps, err)
		}
		if strings.Count(prof.Text, "(remote tcp ") != 1 || !strings.Contains(prof.Text, "(allow network-outbound "+c.rule+")") {
			t.Errorf("%q: profile's connect rules:\n%s\nwant only %s", c.eps, grepLines(prof.Text, "remote tcp"), c.rule)
		}
		ne := strings.Join(prof.NotEnforced, "\n")
		if (c.notEnforced == "") != (ne == "") || !strings.Contains(ne, c.notEnforced) {
			t.Errorf("%q: NotEnforced %q, want %q", c.eps, ne, c.notEnforced)
		}
		plan := darwinPlan(rc, true)
		if f := darwinFeatures(plan, FeatureTCPConnect); len(f) != 1 || !f[0].Enforced || !strings.Contains(f[0].Detail, c.connect) {
			t.Errorf("%q: tcp_connect %+v, want %q", c.eps, f, c.connect)
		}
		hostNE := false
		for _, f := range darwinFeatures(plan, FeatureTCPHost) {
			hostNE = hostNE || !f.Enforced
		}
		if hostNE != (c.notEnforced != "") {
			t.Errorf("%q: tcp_connect_host %+v, want not enforced: %v", c.eps, darwinFeatures(plan, FeatureTCPHost), c.notEnforced != "")
		}
	}
}

func grepLines(text, sub string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

func TestDescribeAnyPort(t *testing.T) {
	for _, c := range []struct {
		connect []string
		want    string
	}{
		{[]string{"*:*"}, "It can open TCP connections to any host on any port (outgoing TCP is not restricted)."},
		{[]string{"localhost:*", "*:443"}, `It can open TCP connections only to localhost:* and *:443 ("*" as host: any host; as port: any port)`},
	} {
		p := Plan{Available: true, Mechanism: "test", Platform: "test", Grants: Grants{Connect: c.connect}}
		if d := p.Describe(); !strings.Contains(d, c.want) {
			t.Errorf("%q: Describe\n%s\nwant %q", c.connect, d, c.want)
		}
	}
	p := Plan{Available: true, Grants: Grants{Connect: []string{"localhost:*"}},
		Features: []Enforcement{{Feature: FeatureTCPAnyPort, Scope: ScopeCommand, Detail: "granted in part: test"}}}
	if d := p.Describe(); !strings.Contains(d, "reachable on any port only through the proxy") || !strings.Contains(d, "granted only in part") ||
		!strings.Contains(d, "- "+FeatureTCPAnyPort+": granted in part: test") {
		t.Errorf("Describe with a partial any-port grant:\n%s", d)
	}
}
