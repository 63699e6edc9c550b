package darwin

// Any-port entries ("host:*") and "*:*" as data, on every OS: what the macOS
// plan and profile make of them.

import (
	"strings"
	"testing"

	"github.com/openparallax/sandbox/internal/spec"
)

func TestDarwinPlanAnyPort(t *testing.T) {
	rcFor := func(eps ...string) *spec.Resolved {
		rc := &spec.Resolved{Config: spec.Config{AllowedTCPConnect: eps}}
		for _, s := range eps {
			ep, err := spec.ParseEndpoint(s)
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
		prof, err := profile(rc, nil)
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
		plan := Plan(rc, true)
		if f := features(plan, spec.FeatureTCPConnect); len(f) != 1 || !f[0].Enforced || !strings.Contains(f[0].Detail, c.connect) {
			t.Errorf("%q: tcp_connect %+v, want %q", c.eps, f, c.connect)
		}
		hostNE := false
		for _, f := range features(plan, spec.FeatureTCPHost) {
			hostNE = hostNE || !f.Enforced
		}
		if hostNE != (c.notEnforced != "") {
			t.Errorf("%q: tcp_connect_host %+v, want not enforced: %v", c.eps, features(plan, spec.FeatureTCPHost), c.notEnforced != "")
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
