package sandbox

// Address range entries as data, on every OS: Describe says a range
// matches addresses, never names, where hosts are enforced; where they are
// not, it says only ports are. What each platform's plan makes of a range
// is tested in internal/linux's egress_range_test.go, internal/darwin's
// range_test.go and internal/windows's plan_range_test.go, enforcement in
// egress_range_linux_test.go here.

import (
	"strings"
	"testing"
)

func TestDescribeRange(t *testing.T) {
	const byAddress = "An address range (such as 10.0.0.0/8) allows the addresses in it, dialled as addresses: a host name is never allowed by a range"
	for _, c := range []struct {
		connect  []string
		enforced bool // tcp_connect_host
		want     string
		not      string
	}{
		{[]string{"10.0.0.0/8:443", "[fd00::/8]:443"}, true, byAddress, "Only the ports are enforced"},
		{[]string{"10.0.0.0/8:443"}, false, "Only the ports are enforced, not the hosts", byAddress},
		{[]string{"example.com:443"}, true, "only to example.com:443", byAddress},
	} {
		p := Plan{Available: true, Grants: Grants{Connect: c.connect},
			Features: []Enforcement{{Feature: FeatureTCPHost, Enforced: c.enforced, Detail: "test"}}}
		d := p.Describe()
		if !strings.Contains(d, c.want) || strings.Contains(d, c.not) {
			t.Errorf("%q (hosts enforced %v): Describe\n%s\nwant %q, not %q", c.connect, c.enforced, d, c.want, c.not)
		}
	}
}
