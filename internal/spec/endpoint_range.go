package spec

// Address ranges in Config.AllowedTCPConnect (issue 32): "10.0.0.0/8:443",
// "[fd00::/8]:*". See ParseEndpoint for what they mean and where.

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
)

var loopback4 = netip.MustParsePrefix("127.0.0.0/8")

// Range returns the address range of an entry written in CIDR notation
// ("10.0.0.0/8:443", "[fd00::/8]:*"); ok is false for every other host. A
// range [ParseEndpoint] returns is canonical: no bit set past the prefix
// length, never /0, never one address (a /32 or /128 is that address's
// literal, and Range reports false for it), never IPv4-mapped IPv6.
func (e Endpoint) Range() (p netip.Prefix, ok bool) {
	if !strings.Contains(e.Host, "/") {
		return netip.Prefix{}, false
	}
	p, err := netip.ParsePrefix(e.Host)
	return p, err == nil
}

// parseRange parses an entry whose host is an address range: s holds a
// "/". The forms are ADDR/BITS:PORT for IPv4 and [ADDR/BITS]:PORT for
// IPv6, PORT as in every entry (1-65535 or "*"); each other spelling is
// refused with the one to write.
func parseRange(s string) (Endpoint, error) {
	if strings.Contains(s, "://") {
		return Endpoint{}, errors.New(`want "host:port", not a URL`)
	}
	host, port, err := splitRange(s)
	if err != nil {
		return Endpoint{}, err
	}
	var ep Endpoint
	if err := ep.setPort(port); err != nil {
		return Endpoint{}, err
	}
	if strings.Contains(host, "%") {
		return Endpoint{}, errors.New("IPv6 zones are not supported")
	}
	p, err := netip.ParsePrefix(host)
	if err != nil {
		return Endpoint{}, fmt.Errorf("range %q is not an IP address and a prefix length (IPv4 /1 to /32, IPv6 /1 to /128, no leading zeros)", host)
	}
	if err := checkRange(p, port); err != nil {
		return Endpoint{}, err
	}
	ep.Host = p.String()
	if p.IsSingleIP() {
		ep.Host = p.Addr().String() // "10.1.2.3/32" is "10.1.2.3"
	}
	return ep, nil
}

// splitRange splits a range entry into the range and the port, refusing
// the spellings that are not the two forms with the form to write.
func splitRange(s string) (host, port string, err error) {
	if inner, ok := strings.CutPrefix(s, "["); ok {
		i := strings.IndexByte(inner, ']')
		if i < 0 {
			return "", "", errors.New(`want "[IPv6 range]:port", e.g. "[fd00::/8]:443"`)
		}
		host, rest := inner[:i], inner[i+1:]
		if after, ok := strings.CutPrefix(rest, "/"); ok { // "[fd00::]/8:443"
			bits, port, found := strings.Cut(after, ":")
			if !found {
				port = "PORT"
			}
			return "", "", fmt.Errorf("write the prefix length inside the brackets: %q", "["+host+"/"+bits+"]:"+port)
		}
		port, ok := strings.CutPrefix(rest, ":")
		if !ok {
			return "", "", errors.New(`want "[IPv6 range]:port", e.g. "[fd00::/8]:443"`)
		}
		if p, err := netip.ParsePrefix(host); err == nil && p.Addr().Is4() {
			return "", "", fmt.Errorf("an IPv4 range takes no brackets: write %q", host+":"+port)
		}
		return host, port, nil
	}
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return "", "", errors.New(`want "host:port"`)
	}
	host, port = s[:i], s[i+1:]
	slash := strings.IndexByte(s, '/')
	if a, err := netip.ParseAddr(s[:slash]); err == nil && a.Is6() {
		if i < slash { // "fd00::/8": the last colon is the address's
			return "", "", fmt.Errorf("write an IPv6 range in brackets, with a port: %q", "["+s+"]:PORT")
		}
		return "", "", fmt.Errorf("write an IPv6 range in brackets: %q", "["+host+"]:"+port) // "fd00::/8:443"
	}
	return host, port, nil
}

// checkRange refuses the ranges ParseEndpoint does not take, saying what
// to write instead.
func checkRange(p netip.Prefix, port string) error {
	entry := func(host string) string { return net.JoinHostPort(host, port) }
	if p.Addr().Is4In6() && p.Bits() >= 96 {
		// Destinations are matched unmapped (an IPv4-mapped address is
		// its IPv4 address), so this range is the IPv4 one: say so.
		v4 := netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96).Masked()
		want := v4.String()
		if v4.IsSingleIP() {
			want = v4.Addr().String()
		}
		return fmt.Errorf("%s is an IPv4-mapped IPv6 range: write the IPv4 range %q", p, entry(want))
	}
	if m := p.Masked(); m != p {
		// Refused, not rounded: "10.1.2.3/8" may mean the one address
		// as well as the range, and the range is 16 million times
		// wider.
		return fmt.Errorf("range %s has bits set past its prefix length: write %q for the range it lies in, or %q for that one address",
			p, entry(m.String()), entry(p.Addr().String()))
	}
	if p.Bits() == 0 {
		family := "IPv4"
		if p.Addr().Is6() {
			family = "IPv6"
		}
		return fmt.Errorf("%s is every %s address: write %q for any host (a range matches addresses only, never names, so it would not be any host where hosts are enforced, and only the port where they are not)",
			p, family, entry("*"))
	}
	return nil
}
