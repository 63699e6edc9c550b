package darwin

// Address range entries ("10.0.0.0/8:443") as data, on every OS: Seatbelt
// names no range, so a range becomes "*:PORT" with the host reported as
// not enforced (a range inside 127.0.0.0/8: Seatbelt's localhost), and
// being no name it brings no resolver.

import (
	"strings"
	"testing"

	"github.com/openparallax/sandbox/internal/spec"
)

func TestDarwinPlanRange(t *testing.T) {
	for _, c := range []struct {
		ep          string
		rule        string // the only connect rule in the profile
		notEnforced string // in the profile's NotEnforced, "" for none
	}{
		{"10.0.0.0/8:443", `(remote tcp "*:443")`, `host of "10.0.0.0/8:443" not enforced`},
		{"[fd00::/8]:443", `(remote tcp "*:443")`, `host of "[fd00::/8]:443" not enforced`},
		{"10.0.0.0/8:*", `(remote tcp "*:*")`, `host of "10.0.0.0/8:*" not enforced`},
		{"127.0.0.0/8:8080", `(remote tcp "localhost:8080")`, ""},
		{"127.0.0.4/31:*", `(remote tcp "localhost:*")`, ""},
	} {
		ep, err := spec.ParseEndpoint(c.ep)
		if err != nil {
			t.Fatal(err)
		}
		rc := &spec.Resolved{Config: spec.Config{AllowedTCPConnect: []string{c.ep}}, Connect: []spec.Endpoint{ep}}
		prof, err := profile(rc, nil)
		if err != nil {
			t.Fatalf("%s: %v", c.ep, err)
		}
		if strings.Count(prof.Text, "(remote tcp ") != 1 || !strings.Contains(prof.Text, "(allow network-outbound "+c.rule+")") {
			t.Errorf("%s: profile's connect rules:\n%s\nwant only %s", c.ep, grepLines(prof.Text, "remote tcp"), c.rule)
		}
		if strings.Contains(prof.Text, "mDNSResponder") {
			t.Errorf("%s: the profile grants the resolver for an address range", c.ep)
		}
		ne := strings.Join(prof.NotEnforced, "\n")
		if (c.notEnforced == "") != (ne == "") || !strings.Contains(ne, c.notEnforced) {
			t.Errorf("%s: NotEnforced %q, want %q", c.ep, ne, c.notEnforced)
		}
		plan := Plan(rc, true)
		if r := features(plan, spec.FeatureResolver); len(r) != 1 || !r[0].Enforced {
			t.Errorf("%s: %s %+v, want mDNSResponder not reachable (a range is no name)", c.ep, spec.FeatureResolver, r)
		}
		hostNE := false
		for _, f := range features(plan, spec.FeatureTCPHost) {
			hostNE = hostNE || !f.Enforced
		}
		if hostNE != (c.notEnforced != "") {
			t.Errorf("%s: tcp_connect_host %+v, want not enforced: %v", c.ep, features(plan, spec.FeatureTCPHost), c.notEnforced != "")
		}
		if err := plan.StrictError(""); (err != nil && strings.Contains(err.Error(), spec.FeatureTCPHost+" (")) != (c.notEnforced != "") {
			t.Errorf("%s: Strict: %v, want tcp_connect_host refused: %v", c.ep, err, c.notEnforced != "")
		}
	}
}
