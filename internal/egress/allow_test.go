package egress

import (
	"net/netip"
	"slices"
	"strings"
	"testing"
)

func mustAllow(t *testing.T, rules ...Rule) *Allowlist {
	t.Helper()
	a, err := NewAllowlist(rules)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestNewAllowlistRefuses(t *testing.T) {
	for _, r := range []Rule{
		{Host: "example.com", Port: 0},
		{Host: "Example.com", Port: 443},     // not canonical: ParseEndpoint lower-cases
		{Host: "example.com.", Port: 443},    // not canonical: ParseEndpoint trims the dot
		{Host: "::ffff:1.2.3.4", Port: 443},  // not canonical: ParseEndpoint unmaps
		{Host: "[::1]", Port: 443},           // brackets belong to host:port, not the host
		{Host: "fe80::1%eth0", Port: 443},    // zones
		{Host: "*.com", Port: 443},           // one-label wildcard suffix
		{Host: "*", Port: 0},                 // port 0
		{Host: "a.*.example.com", Port: 443}, // "*" only as the whole first label
		{Host: "*example.com", Port: 443},
		{Host: "*.*.example.com", Port: 443},
		{Host: "*.Example.com", Port: 443},
		{Host: "exa mple.com", Port: 443},
		{Host: "-a.example.com", Port: 443},
		{Host: "127.1", Port: 443},      // numeric forms resolvers read as addresses
		{Host: "0x7f000001", Port: 443}, //
		{Host: "2130706433", Port: 443}, //
		{Host: "a.b.c.123", Port: 443},  //
		{Host: "", Port: 0},
	} {
		if _, err := NewAllowlist([]Rule{r}); err == nil {
			t.Errorf("NewAllowlist(%+v) = nil error, want a refusal", r)
		}
	}
}

func TestAllowlistMatch(t *testing.T) {
	a := mustAllow(t,
		Rule{Host: "github.com", Port: 443},
		Rule{Host: "*.githubusercontent.com", Port: 443},
		Rule{Host: "localhost", Port: 8080},
		Rule{Host: "127.0.0.2", Port: 9000},
		Rule{Host: "2001:db8::1", Port: 443},
		Rule{Host: "10.1.2.3", Port: 5432},
		Rule{Host: "*", Port: 22},
		Rule{Host: "", Port: 80},
	)
	if got := a.PortOnly(); !slices.Equal(got, []uint16{22, 80}) {
		t.Errorf("PortOnly = %v, want [22 80]", got)
	}
	type want struct {
		reason string
		rule   string   // matched rule host, when allowed
		addrs  []string // pinned addresses, when allowed
	}
	ok := func(rule string, addrs ...string) want { return want{rule: rule, addrs: addrs} }
	for _, c := range []struct {
		host string
		port uint16
		want want
	}{
		{"github.com", 443, ok("github.com")},
		{"GitHub.COM.", 443, ok("github.com")},
		{"github.com", 80, want{reason: ReasonNotAllowed}},
		{"api.github.com", 443, want{reason: ReasonNotAllowed}}, // exact names only
		{"github.com.evil.net", 443, want{reason: ReasonNotAllowed}},
		{"raw.githubusercontent.com", 443, ok("*.githubusercontent.com")},
		{"a.b.githubusercontent.com", 443, ok("*.githubusercontent.com")},
		{"githubusercontent.com", 443, want{reason: ReasonNotAllowed}}, // the apex is not a subdomain
		{"evilgithubusercontent.com", 443, want{reason: ReasonNotAllowed}},
		{"raw.githubusercontent.com", 80, want{reason: ReasonNotAllowed}},
		{"localhost", 8080, ok("localhost", "127.0.0.1", "::1")},
		{"LOCALHOST", 8080, ok("localhost", "127.0.0.1", "::1")},
		{"127.0.0.1", 8080, ok("localhost", "127.0.0.1")},
		{"::1", 8080, ok("localhost", "::1")},
		{"[::1]", 8080, ok("localhost", "::1")},
		{"[127.0.0.1]", 8080, want{reason: ReasonMalformed}},
		{"[github.com]", 443, want{reason: ReasonMalformed}},
		{"127.0.0.3", 8080, want{reason: ReasonNotAllowed}}, // localhost names 127.0.0.1 and ::1 only
		{"localhost", 8081, want{reason: ReasonNotAllowed}},
		{"127.0.0.2", 9000, ok("127.0.0.2", "127.0.0.2")},
		{"::ffff:127.0.0.2", 9000, ok("127.0.0.2", "127.0.0.2")},
		{"2001:db8::1", 443, ok("2001:db8::1", "2001:db8::1")},
		{"2001:DB8:0::1", 443, ok("2001:db8::1", "2001:db8::1")},
		{"10.1.2.3", 5432, ok("10.1.2.3", "10.1.2.3")},
		{"example.org", 22, want{reason: ReasonNotAllowed}}, // port rules are Landlock's, not the proxy's
		{"example.org", 80, want{reason: ReasonNotAllowed}},
		{"127.1", 8080, want{reason: ReasonMalformed}},
		{"0x7f.1", 8080, want{reason: ReasonMalformed}},
		{"github.com\r\nX: y", 443, want{reason: ReasonMalformed}},
		{"", 443, want{reason: ReasonMalformed}},
		{"fe80::1%lo", 443, want{reason: ReasonMalformed}},
		{"github.com", 0, want{reason: ReasonMalformed}},
	} {
		m, reason, detail := a.Match(c.host, c.port)
		if reason != c.want.reason {
			t.Errorf("Match(%q, %d) reason %q (%s), want %q", c.host, c.port, reason, detail, c.want.reason)
			continue
		}
		if reason != "" {
			if detail == "" {
				t.Errorf("Match(%q, %d): refusal without detail", c.host, c.port)
			}
			continue
		}
		var addrs []string
		for _, x := range m.Addrs {
			addrs = append(addrs, x.String())
		}
		if m.Rule.Host != c.want.rule || !slices.Equal(addrs, c.want.addrs) || m.Port != c.port {
			t.Errorf("Match(%q, %d) = rule %q addrs %v port %d, want rule %q addrs %v", c.host, c.port, m.Rule.Host, addrs, m.Port, c.want.rule, c.want.addrs)
		}
	}
}

func TestAllowlistEmpty(t *testing.T) {
	if !mustAllow(t, Rule{Host: "*", Port: 443}).Empty() {
		t.Error("a list of port rules only is not Empty")
	}
	if mustAllow(t, Rule{Host: "localhost", Port: 443}).Empty() {
		t.Error("a list with localhost is Empty")
	}
}

// TestAddrAllowed is the DNS rebinding rule as data: a name may resolve to
// any public address, and to a non-public one only if a rule names it.
func TestAddrAllowed(t *testing.T) {
	a := mustAllow(t, Rule{Host: "example.com", Port: 443}, Rule{Host: "localhost", Port: 8080}, Rule{Host: "10.0.0.5", Port: 443}, Rule{Host: "fd00::5", Port: 443})
	for _, c := range []struct {
		addr string
		port uint16
		ok   bool
	}{
		{"93.184.215.14", 443, true},
		{"2606:2800:21f:cb07:6820:80da:af6b:8b2c", 443, true},
		{"203.0.113.7", 443, true}, // documentation ranges reach nothing internal
		{"127.0.0.1", 443, false},
		{"127.0.0.1", 8080, true}, // named by "localhost" on 8080
		{"::1", 8080, true},
		{"127.0.0.2", 8080, false},
		{"::1", 443, false},
		{"::ffff:127.0.0.1", 443, false},
		{"::ffff:127.0.0.1", 8080, true},
		{"10.0.0.5", 443, true}, // named by an IP rule
		{"10.0.0.5", 8080, false},
		{"10.0.0.6", 443, false},
		{"fd00::5", 443, true},
		{"fd00::6", 443, false},
		{"0.0.0.0", 443, false},
		{"::", 443, false},
		{"169.254.169.254", 443, false},
		{"192.168.1.1", 443, false},
		{"172.16.0.1", 443, false},
		{"100.64.0.1", 443, false},
		{"fe80::1", 443, false},
		{"64:ff9b::7f00:1", 443, false},   // NAT64 of 127.0.0.1
		{"64:ff9b::5db8:d70e", 443, true}, // NAT64 of a public address
		{"2002:7f00:1::1", 443, false},    // 6to4 of 127.0.0.1
		{"2002:5db8:d70e::1", 443, true},
		{"::127.0.0.1", 443, false},
		{"255.255.255.255", 443, false},
		{"224.0.0.1", 443, false},
		{"198.18.0.1", 443, false},
	} {
		got, why := a.AddrAllowed(netip.MustParseAddr(c.addr), c.port)
		if got != c.ok {
			t.Errorf("AddrAllowed(%s, %d) = %v (%s), want %v", c.addr, c.port, got, why, c.ok)
		}
		if !got && !strings.Contains(why, "address") {
			t.Errorf("AddrAllowed(%s, %d): reason %q does not explain", c.addr, c.port, why)
		}
	}
}

func TestClass(t *testing.T) {
	for addr, want := range map[string]string{
		"8.8.8.8":            "",
		"127.0.0.1":          "loopback",
		"127.255.0.1":        "loopback",
		"::1":                "loopback",
		"10.0.0.1":           "private",
		"172.31.255.255":     "private",
		"172.32.0.1":         "",
		"192.168.0.1":        "private",
		"100.64.0.1":         "shared (CGNAT)",
		"100.128.0.1":        "",
		"169.254.169.254":    "link-local",
		"fe80::1":            "link-local",
		"fc00::1":            "private (ULA)",
		"fd12::1":            "private (ULA)",
		"0.0.0.0":            "unspecified",
		"0.1.2.3":            "unspecified",
		"::":                 "unspecified",
		"::ffff:10.0.0.1":    "private",
		"64:ff9b::a00:1":     "private (via NAT64)",
		"2002:a00:1::":       "private (via 6to4)",
		"2001:4860::8888":    "",
		"ff02::1":            "multicast",
		"240.0.0.1":          "reserved",
		"fe80::1%lo":         "zoned",
		"64:ff9b:1::1":       "local-use NAT64",
		"192.0.0.170":        "IETF protocol assignment",
		"198.51.100.1":       "",
		"2001:db8::1":        "",
		"::ffff:169.254.1.1": "link-local",
	} {
		if got := Class(netip.MustParseAddr(addr)); got != want {
			t.Errorf("Class(%s) = %q, want %q", addr, got, want)
		}
	}
	if Class(netip.Addr{}) == "" {
		t.Error("the zero Addr is public")
	}
}

// TestAddrAllowedHere: an address of the caller's own interfaces is
// refused to a name even when it is public, also carried in IPv6, unless
// an IP literal rule names it on that port.
func TestAddrAllowedHere(t *testing.T) {
	a, err := NewAllowlist([]Rule{{Host: "api.example.test", Port: 443}, {Host: "203.0.113.9", Port: 443}})
	if err != nil {
		t.Fatal(err)
	}
	own := []netip.Addr{netip.MustParseAddr("203.0.113.7"), netip.MustParseAddr("203.0.113.9"),
		netip.MustParseAddr("2001:db8::7"), netip.MustParseAddr("fe80::1%eth0")}
	for _, c := range []struct {
		addr string
		port uint16
		ok   bool
	}{
		{"203.0.113.8", 443, true},         // public, not ours
		{"203.0.113.7", 443, false},        // ours
		{"::ffff:203.0.113.7", 443, false}, // ours, IPv4-mapped
		{"64:ff9b::cb00:7107", 443, false}, // ours, through NAT64
		{"2002:cb00:7107::1", 443, false},  // ours, through 6to4
		{"2001:db8::7", 443, false},        // ours, IPv6
		{"2001:db8::8", 443, true},
		{"203.0.113.9", 443, true},   // ours, but an IP literal rule names it
		{"203.0.113.9", 8443, false}, // the rule names another port
		{"127.0.0.1", 443, false},    // non-public, as before
	} {
		got, why := a.AddrAllowedHere(netip.MustParseAddr(c.addr), c.port, own)
		if got != c.ok || (!got && why == "") {
			t.Errorf("AddrAllowedHere(%s, %d) = %v (%q), want %v", c.addr, c.port, got, why, c.ok)
		}
	}
}
