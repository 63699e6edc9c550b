package egress

import (
	"net/netip"
	"strconv"
)

// nonPublic are the ranges that reach the caller's own machine or its
// internal networks rather than the Internet. A DNS name on the allowlist
// is never connected to an address in them (see [Allowlist.AddrAllowed]).
//
// Documentation ranges (192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24,
// 2001:db8::/32) are not in the list: they reach nothing, internal or not.
var nonPublic = []struct {
	prefix netip.Prefix
	class  string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"}, // "this network": 0.0.0.0 connects to the local host on Linux
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared (CGNAT)"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local"}, // and cloud metadata services at 169.254.169.254
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignment"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"}, // also where fake-IP DNS proxies answer
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"}, // includes 255.255.255.255
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("::/96"), "IPv4-compatible"}, // deprecated ::a.b.c.d
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local-use NAT64"},
	{netip.MustParsePrefix("100::/64"), "discard-only"},
	{netip.MustParsePrefix("fc00::/7"), "private (ULA)"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("fec0::/10"), "site-local"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
}

var (
	nat64   = netip.MustParsePrefix("64:ff9b::/96")
	sixTo4  = netip.MustParsePrefix("2002::/16")
	mapped4 = netip.MustParsePrefix("::ffff:0.0.0.0/96")
)

// Class returns "" for a public address, else what kind of non-public
// address it is ("loopback", "private", "link-local", ...). IPv4 addresses
// embedded in IPv6 (IPv4-mapped, NAT64 64:ff9b::/96, 6to4 2002::/16) are
// classified by the IPv4 address they carry, since that is where a
// connection to them may end up.
func Class(a netip.Addr) string {
	if !a.IsValid() {
		return "invalid"
	}
	if a.Zone() != "" {
		return "zoned"
	}
	if mapped4.Contains(a) {
		a = a.Unmap()
	}
	if a.Is6() {
		b := a.As16()
		switch {
		case nat64.Contains(a):
			if c := Class(netip.AddrFrom4([4]byte(b[12:16]))); c != "" {
				return c + " (via NAT64)"
			}
			return ""
		case sixTo4.Contains(a):
			if c := Class(netip.AddrFrom4([4]byte(b[2:6]))); c != "" {
				return c + " (via 6to4)"
			}
			return ""
		}
	}
	for _, n := range nonPublic {
		if n.prefix.Contains(a) {
			return n.class
		}
	}
	return ""
}

// embedded4 returns the IPv4 address an IPv6 address carries to its
// destination (IPv4-mapped, NAT64 64:ff9b::/96, 6to4 2002::/16), if any.
func embedded4(a netip.Addr) (netip.Addr, bool) {
	if !a.Is6() {
		return netip.Addr{}, false
	}
	b := a.As16()
	switch {
	case mapped4.Contains(a), nat64.Contains(a):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixTo4.Contains(a):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}

// Public reports whether a is an address a DNS name on the allowlist may be
// connected to: not loopback, unspecified, private (RFC 1918, ULA), shared
// (CGNAT), link-local, multicast or reserved.
func Public(a netip.Addr) bool { return Class(a) == "" }

func joinHostPort(host string, port uint16) string {
	if a, err := netip.ParseAddr(host); err == nil && a.Is6() {
		return "[" + host + "]:" + strconv.Itoa(int(port))
	}
	return host + ":" + strconv.Itoa(int(port))
}
