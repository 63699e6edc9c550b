package seatbelt

import (
	"strings"
	"testing"
)

// Address ranges: Seatbelt names no range, so a range becomes "*:PORT"
// with the host reported, except one inside 127.0.0.0/8, which is a
// loopback host (localhost: narrower than asked); a range is no name and
// brings no resolver.
func TestRangeEndpoints(t *testing.T) {
	for _, c := range []struct {
		ep   Endpoint
		rule string
		ne   string
	}{
		{Endpoint{Host: "10.0.0.0/8", Port: 443}, `(remote tcp "*:443")`, `host of "10.0.0.0/8:443" not enforced`},
		{Endpoint{Host: "fd00::/8", Port: 443}, `(remote tcp "*:443")`, `host of "[fd00::/8]:443" not enforced`},
		{Endpoint{Host: "[fd00::/8]", AnyPort: true}, `(remote tcp "*:*")`, `host of "[fd00::/8]:*" not enforced`},
		{Endpoint{Host: "0.0.0.0/1", Port: 80}, `(remote tcp "*:80")`, `host of "0.0.0.0/1:80" not enforced`}, // holds loopback, is not
		{Endpoint{Host: "127.0.0.0/8", Port: 80}, `(remote tcp "localhost:80")`, ""},
		{Endpoint{Host: "127.0.0.4/31", AnyPort: true}, `(remote tcp "localhost:*")`, ""},
	} {
		prof, err := Generate(Policy{TCPConnect: []Endpoint{c.ep}})
		if err != nil {
			t.Fatalf("%+v: %v", c.ep, err)
		}
		if !strings.Contains(prof.Text, "(allow network-outbound "+c.rule+")") || strings.Count(prof.Text, "(remote tcp ") != 1 {
			t.Errorf("%+v: profile lacks %s", c.ep, c.rule)
		}
		if strings.Contains(prof.Text, "mDNSResponder") {
			t.Errorf("%+v: the resolver is granted for an address range", c.ep)
		}
		ne := strings.Join(prof.NotEnforced, "\n")
		if (c.ne == "") != (ne == "") || !strings.Contains(ne, c.ne) {
			t.Errorf("%+v: NotEnforced %q, want %q", c.ep, ne, c.ne)
		}
	}
}
