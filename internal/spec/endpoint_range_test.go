package spec

import (
	"strings"
	"testing"
)

// Address ranges: the canonical forms ParseEndpoint returns, and every
// refusal with the message that says what to write.
func TestParseEndpointRange(t *testing.T) {
	for in, want := range map[string]Endpoint{
		"10.0.0.0/8:443":         {Host: "10.0.0.0/8", Port: 443},
		"10.0.0.0/8:*":           {Host: "10.0.0.0/8", AnyPort: true},
		"192.168.1.0/24:65535":   {Host: "192.168.1.0/24", Port: 65535},
		"127.0.0.4/31:80":        {Host: "127.0.0.4/31", Port: 80},
		"[fd00::/8]:443":         {Host: "fd00::/8", Port: 443},
		"[FD00:0::/16]:*":        {Host: "fd00::/16", AnyPort: true},
		"[2001:db8::/32]:22":     {Host: "2001:db8::/32", Port: 22},
		"10.1.2.3/32:443":        {Host: "10.1.2.3", Port: 443}, // one address: the literal
		"[::1/128]:443":          {Host: "::1", Port: 443},
		"[2001:db8::1/128]:*":    {Host: "2001:db8::1", AnyPort: true},
		"128.0.0.0/1:1":          {Host: "128.0.0.0/1", Port: 1},
		"[::fffe:0:0/95]:443":    {Host: "::fffe:0:0/95", Port: 443}, // wider than the mapped block: an IPv6 range
		"[8000::/1]:443":         {Host: "8000::/1", Port: 443},
		"[2001:db8:0:0::/64]:80": {Host: "2001:db8::/64", Port: 80},
	} {
		got, err := ParseEndpoint(in)
		if err != nil || got != want {
			t.Errorf("ParseEndpoint(%q) = %+v, %v; want %+v", in, got, err, want)
			continue
		}
		// String is the canonical spelling, and it parses back to itself.
		again, err := ParseEndpoint(got.String())
		if err != nil || again != got {
			t.Errorf("ParseEndpoint(%q) (String of %q) = %+v, %v; want %+v", got.String(), in, again, err, got)
		}
		_, isRange := got.Range()
		if isRange != strings.Contains(want.Host, "/") {
			t.Errorf("%q: Range ok = %v", in, isRange)
		}
	}
	if got := (Endpoint{Host: "fd00::/8", Port: 443}).String(); got != "[fd00::/8]:443" {
		t.Errorf("String of an IPv6 range = %q, want [fd00::/8]:443", got)
	}

	for in, want := range map[string]string{
		// the other spellings, each with the one to write
		"[fd00::]/8:443":   `write the prefix length inside the brackets: "[fd00::/8]:443"`,
		"[fd00::]/8":       `write the prefix length inside the brackets: "[fd00::/8]:PORT"`,
		"fd00::/8:443":     `write an IPv6 range in brackets: "[fd00::/8]:443"`,
		"fd00::/8":         `write an IPv6 range in brackets, with a port: "[fd00::/8]:PORT"`,
		"[10.0.0.0/8]:443": `an IPv4 range takes no brackets: write "10.0.0.0/8:443"`,
		"[fd00::/8":        `want "[IPv6 range]:port"`,
		"[fd00::/8]443":    `want "[IPv6 range]:port"`,
		"10.0.0.0/8":       `want "host:port"`,
		// canonical only, with both readings offered
		"10.1.2.3/8:443":       `range 10.1.2.3/8 has bits set past its prefix length: write "10.0.0.0/8:443" for the range it lies in, or "10.1.2.3:443" for that one address`,
		"[fd00::1/8]:*":        `write "[fd00::/8]:*" for the range it lies in, or "[fd00::1]:*" for that one address`,
		"0.0.0.0/0:443":        `0.0.0.0/0 is every IPv4 address: write "*:443" for any host`,
		"[::/0]:*":             `::/0 is every IPv6 address: write "*:*" for any host`,
		"10.0.0.0/0:443":       `write "0.0.0.0/0:443" for the range`, // not canonical comes first
		"10.0.0.0/33:443":      `range "10.0.0.0/33" is not an IP address and a prefix length`,
		"[fd00::/129]:443":     `range "fd00::/129" is not an IP address and a prefix length`,
		"10.0.0.0/08:443":      `is not an IP address and a prefix length`,
		"010.0.0.0/8:443":      `is not an IP address and a prefix length`,
		"10.0.0/8:443":         `is not an IP address and a prefix length`,
		"example.com/8:80":     `is not an IP address and a prefix length`,
		"10.0.0.0/:443":        `is not an IP address and a prefix length`,
		"[fe80::%eth0/64]:443": "IPv6 zones are not supported",
		// IPv4-mapped: the IPv4 range, spelled as such
		"[::ffff:10.0.0.0/104]:443":  `::ffff:10.0.0.0/104 is an IPv4-mapped IPv6 range: write the IPv4 range "10.0.0.0/8:443"`,
		"[::ffff:0:0/96]:*":          `write the IPv4 range "0.0.0.0/0:*"`,
		"[::ffff:10.1.2.3/128]:443":  `write the IPv4 range "10.1.2.3:443"`,
		"[::ffff:127.0.0.0/104]:443": `write the IPv4 range "127.0.0.0/8:443"`,
		// the port, as in every entry
		"10.0.0.0/8:0":     "port 0 is not a destination",
		"10.0.0.0/8:65536": "out of range",
		"10.0.0.0/8:":      "is not a decimal number",
		"10.0.0.0/8:1-2":   "is not a decimal number",
		"[fd00::/8]:http":  "is not a decimal number",
		// not ranges
		"http://10.0.0.0:80":              "not a URL",
		"example.com:80/path":             "is not a decimal number",
		"10.0.0.0/8/8:443":                "is not an IP address and a prefix length",
		"10.0.0.0/8:443\x00":              "control character",
		"*.example.com/8:443":             "is not an IP address and a prefix length",
		"localhost/8:443":                 "is not an IP address and a prefix length",
		"10.0.0.0 /8:443":                 "is not an IP address and a prefix length",
		"[10.0.0.0/8]/8:443":              "write the prefix length inside the brackets",
		"[fd00::/8]:443:443":              "is not a decimal number",
		"[fd00::/8]:*:*":                  "is not a decimal number",
		"[fd00::/8]::443":                 "is not a decimal number",
		"[fd00::/8]:443]":                 "is not a decimal number",
		"[[fd00::/8]]:443":                `want "[IPv6 range]:port"`,
		"[fd00::/8]:+443":                 "is not a decimal number",
		"[fd00::/8]:0443":                 "", // leading zeros in a port: as elsewhere, decimal
		"[fd00::/8]:00000443":             "",
		"10.0.0.0/8:99999999999999999999": "out of range",
	} {
		ep, err := ParseEndpoint(in)
		if want == "" {
			if err != nil || ep.Port != 443 {
				t.Errorf("ParseEndpoint(%q) = %+v, %v; want port 443", in, ep, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseEndpoint(%q) = %+v, %v; want an error containing %q", in, ep, err, want)
		}
	}
}

// Loopback: a range inside 127.0.0.0/8 is loopback; a range that merely
// holds loopback addresses is not.
func TestEndpointRangeLoopback(t *testing.T) {
	for in, want := range map[string]bool{
		"127.0.0.0/8:80":   true,
		"127.0.0.4/31:80":  true,
		"127.0.0.0/9:80":   true,
		"126.0.0.0/7:80":   false, // holds 127.0.0.0/8
		"0.0.0.0/1:80":     false,
		"10.0.0.0/8:80":    false,
		"[fd00::/8]:80":    false,
		"[::/127]:80":      false, // :: and ::1
		"127.0.0.1/32:80":  true,  // the literal
		"[::1/128]:80":     true,
		"128.0.0.0/1:80":   false,
		"127.255.0.0/16:*": true,
	} {
		ep, err := ParseEndpoint(in)
		if err != nil {
			t.Fatalf("ParseEndpoint(%q): %v", in, err)
		}
		if got := ep.Loopback(); got != want {
			t.Errorf("%q: Loopback() = %v, want %v", in, got, want)
		}
	}
}

// FuzzParseEndpoint: whatever ParseEndpoint accepts, its String parses
// back to the same Endpoint, and a range it returns is canonical: no bit
// past the prefix length, not /0, not one address, not IPv4-mapped.
func FuzzParseEndpoint(f *testing.F) {
	for _, s := range []string{"10.0.0.0/8:443", "[fd00::/8]:*", "10.1.2.3/32:1", "[::ffff:10.0.0.0/104]:443", "0.0.0.0/0:1",
		"example.com:443", "[::1]:80", "*:*", "localhost:*", "[fd00::]/8:443", "10.1.2.3/8:443", "[::fffe:0:0/95]:443"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ep, err := ParseEndpoint(s)
		if err != nil {
			return
		}
		again, err := ParseEndpoint(ep.String())
		if err != nil || again != ep {
			t.Fatalf("%q → %+v → %q → %+v, %v", s, ep, ep.String(), again, err)
		}
		if p, ok := ep.Range(); ok {
			if p.Masked() != p || p.Bits() == 0 || p.IsSingleIP() || p.Addr().Is4In6() && p.Bits() >= 96 || p.String() != ep.Host {
				t.Fatalf("%q → range %s, not canonical", s, p)
			}
		} else if strings.Contains(ep.Host, "/") {
			t.Fatalf("%q → host %q with a slash that is no range", s, ep.Host)
		}
	})
}

// Named: names are looked up, addresses and ranges never.
func TestEndpointNamed(t *testing.T) {
	for in, want := range map[string]bool{
		"example.com:443": true, "localhost:80": true, "*:443": true,
		"127.0.0.1:80": false, "[::1]:80": false, "10.0.0.0/8:443": false, "[fd00::/8]:*": false,
	} {
		ep, err := ParseEndpoint(in)
		if err != nil {
			t.Fatal(err)
		}
		if ep.Named() != want {
			t.Errorf("%s: Named() = %v, want %v", in, ep.Named(), want)
		}
	}
}
