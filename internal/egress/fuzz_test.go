package egress

import (
	"net/netip"
	"strings"
	"testing"
)

// FuzzMatch checks, for any requested host, that Match allows only what a
// rule names: the same canonical name, a subdomain of a wildcard's suffix,
// the same address, an address in the range, or localhost's two addresses; and that what it
// returns as the host is printable canonical text.
func FuzzMatch(f *testing.F) {
	for _, s := range []string{"github.com", "GitHub.com.", "a.githubusercontent.com", "githubusercontent.com",
		"localhost", "127.0.0.1", "::1", "[::1]", "::ffff:127.0.0.1", "10.0.0.5", "127.1", "0x7f.1", "",
		"a..b", "*.githubusercontent.com", "xn--nxasmq6b.com", "github.com\x00", "é.com", "fe80::1%lo",
		"10.1.0.0", "10.1.255.255", "10.2.0.0", "::ffff:10.1.2.3", "10.1.0.0/16", "fd00::1"} {
		f.Add(s, uint16(443))
	}
	a, err := NewAllowlist([]Rule{{Host: "github.com", Port: 443}, {Host: "*.githubusercontent.com", Port: 443}, {Host: "localhost", Port: 443}, {Host: "10.0.0.5", Port: 443},
		{Host: "10.1.0.0/16", Port: 443}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, host string, port uint16) {
		m, reason, _ := a.Match(host, port)
		if reason != "" {
			return
		}
		if port != 443 || m.Port != port {
			t.Fatalf("%q:%d allowed on a port no rule names", host, port)
		}
		for _, r := range m.Host {
			if !(r == '.' || r == '-' || r == ':' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z') {
				t.Fatalf("%q allowed as %q: not canonical", host, m.Host)
			}
		}
		switch m.Rule.Host {
		case "github.com":
			if m.Host != "github.com" || m.Addrs != nil {
				t.Fatalf("%q matched github.com as %q", host, m.Host)
			}
		case "*.githubusercontent.com":
			if !strings.HasSuffix(m.Host, ".githubusercontent.com") || m.Host == ".githubusercontent.com" || m.Addrs != nil {
				t.Fatalf("%q matched the wildcard as %q", host, m.Host)
			}
		case "localhost":
			for _, x := range m.Addrs {
				if x != netip.MustParseAddr("127.0.0.1") && x != netip.IPv6Loopback() {
					t.Fatalf("%q via localhost pins %v", host, m.Addrs)
				}
			}
		case "10.0.0.5":
			if len(m.Addrs) != 1 || m.Addrs[0] != netip.MustParseAddr("10.0.0.5") {
				t.Fatalf("%q via 10.0.0.5 pins %v", host, m.Addrs)
			}
		case "10.1.0.0/16":
			if len(m.Addrs) != 1 || !netip.MustParsePrefix("10.1.0.0/16").Contains(m.Addrs[0]) || m.Addrs[0].String() != m.Host {
				t.Fatalf("%q via 10.1.0.0/16 pins %v as %q", host, m.Addrs, m.Host)
			}
		default:
			t.Fatalf("%q matched unknown rule %+v", host, m.Rule)
		}
	})
}
