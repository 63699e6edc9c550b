package sandbox

// Any-port entries ("host:*") and "*:*" as data, on every OS: Describe.
// What the Linux policy and ApplySelf's plan make of them is tested in
// internal/linux's anyport_plan_test.go, the egress namespace's plan in its
// egress_anyport_test.go, the macOS plan and profile in
// internal/darwin's anyport_test.go, enforcement in
// egress_anyport_linux_test.go here.

import (
	"strings"
	"testing"
)

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
