package seatbelt

import (
	"errors"
	"strings"
	"testing"
)

// Any-port endpoints: Seatbelt's own "HOST:*" form, with a loopback host
// kept as localhost and any other host widened to "*:*" and reported; an
// AnyPort with a port, or port 0 without AnyPort, is refused.
func TestAnyPortEndpoints(t *testing.T) {
	for _, c := range []struct {
		ep   Endpoint
		rule string
		ne   string
	}{
		{Endpoint{Host: "localhost", AnyPort: true}, `(remote tcp "localhost:*")`, ""},
		{Endpoint{Host: "127.0.0.1", AnyPort: true}, `(remote tcp "localhost:*")`, ""},
		{Endpoint{Host: "*", AnyPort: true}, `(remote tcp "*:*")`, ""},
		{Endpoint{Host: "api.example.com", AnyPort: true}, `(remote tcp "*:*")`, `host of "api.example.com:*" not enforced`},
	} {
		prof, err := Generate(Policy{TCPConnect: []Endpoint{c.ep}})
		if err != nil {
			t.Fatalf("%+v: %v", c.ep, err)
		}
		if !strings.Contains(prof.Text, "(allow network-outbound "+c.rule+")") || strings.Count(prof.Text, "(remote tcp ") != 1 {
			t.Errorf("%+v: profile lacks %s", c.ep, c.rule)
		}
		ne := strings.Join(prof.NotEnforced, "\n")
		if (c.ne == "") != (ne == "") || !strings.Contains(ne, c.ne) {
			t.Errorf("%+v: NotEnforced %q, want %q", c.ep, ne, c.ne)
		}
	}
	for _, ep := range []Endpoint{{Host: "localhost", Port: 80, AnyPort: true}, {Host: "localhost"}} {
		if _, err := Generate(Policy{TCPConnect: []Endpoint{ep}}); !errors.Is(err, ErrInvalidPolicy) {
			t.Errorf("%+v: %v, want ErrInvalidPolicy", ep, err)
		}
	}
}
