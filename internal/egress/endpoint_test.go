package egress_test

import (
	"testing"

	"github.com/openparallax/sandbox"
	"github.com/openparallax/sandbox/internal/egress"
)

// TestRulesFromEndpoints locks the contract with config.go: every host
// sandbox.ParseEndpoint accepts makes a rule NewAllowlist takes as it is,
// and a request for the host as the Config wrote it matches that rule.
func TestRulesFromEndpoints(t *testing.T) {
	given := []string{"GitHub.com:443", "registry.npmjs.org.:443", "localhost:8080", "LOCALHOST:8081",
		"127.0.0.1:9000", "[::1]:9001", "[::ffff:10.0.0.1]:5432", "[2001:DB8::1]:443", "*:22", ":80",
		"API.example.com:*", "localhost:*", "[::ffff:10.1.2.3]:*", "[2001:db8::2]:*"}
	var rules []egress.Rule
	for _, s := range given {
		e, err := sandbox.ParseEndpoint(s)
		if err != nil {
			t.Fatalf("ParseEndpoint(%q): %v", s, err)
		}
		rules = append(rules, egress.Rule{Host: e.Host, Port: e.Port, AnyPort: e.AnyPort})
	}
	a, err := egress.NewAllowlist(rules)
	if err != nil {
		t.Fatalf("NewAllowlist refuses what ParseEndpoint made: %v", err)
	}
	for i, s := range given {
		if rules[i].Host == "*" {
			continue
		}
		host := s[:len(s)-len(":")-len(portOf(s))]
		ports := []uint16{rules[i].Port}
		if rules[i].AnyPort {
			ports = []uint16{1, 8443, 65535} // an any-port entry: every port
		}
		for _, port := range ports {
			if _, reason, detail := a.Match(host, port); reason != "" {
				t.Errorf("%q on port %d: %s (%s)", s, port, reason, detail)
			}
		}
	}
	// "*:*" is sandbox's (unrestricted TCP, Landlock's business), never
	// a proxy rule.
	if _, err := egress.NewAllowlist([]egress.Rule{{Host: "*", AnyPort: true}}); err == nil {
		t.Error("NewAllowlist accepts *:*")
	}
	if _, err := sandbox.ParseEndpoint("*.example.com:443"); err == nil {
		t.Error("ParseEndpoint now accepts wildcards: update the package doc (the proxy accepts them)")
	}
}

func portOf(s string) string {
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] == ':' {
			return s[i+1:]
		}
	}
	return ""
}
