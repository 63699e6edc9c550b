package egress

// Address range rules ("10.0.0.0/8", "fd00::/8"; issue 32): see
// NewAllowlist for what they match, and docs/egress.md.

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
)

// rangeRule is an address range rule: p on port, or on every port.
type rangeRule struct {
	p       netip.Prefix
	port    uint16
	anyPort bool
}

// addrRule returns the rule that names addr (unmapped) on port, the most
// precise first: an IP literal on that port, on any port, then the first
// range on that port, the first range on any port.
func (a *Allowlist) addrRule(addr netip.Addr, port uint16) (Rule, bool) {
	switch {
	case a.addrs[netip.AddrPortFrom(addr, port)]:
		return Rule{Host: addr.String(), Port: port}, true
	case a.addrsAny[addr]:
		return Rule{Host: addr.String(), AnyPort: true}, true
	}
	for _, anyPort := range []bool{false, true} {
		for _, r := range a.ranges {
			if r.anyPort == anyPort && (anyPort || r.port == port) && r.p.Contains(addr) {
				return Rule{Host: r.p.String(), Port: r.port, AnyPort: r.anyPort}, true
			}
		}
	}
	return Rule{}, false
}

// addrNamedAnyPort reports whether an any-port IP literal or range rule
// names addr (unmapped).
func (a *Allowlist) addrNamedAnyPort(addr netip.Addr) bool {
	if a.addrsAny[addr] {
		return true
	}
	return slices.ContainsFunc(a.ranges, func(r rangeRule) bool { return r.anyPort && r.p.Contains(addr) })
}

// canonicalRange checks an address range rule: canonical as
// sandbox.ParseEndpoint writes it, and neither /0, one address nor an
// IPv4-mapped range (which would never match: destinations are unmapped).
func canonicalRange(h string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(h)
	switch {
	case err != nil:
		return netip.Prefix{}, errors.New("not an address range")
	case p.Masked().String() != h:
		return netip.Prefix{}, fmt.Errorf("not canonical (want %q)", p.Masked())
	case p.Bits() == 0:
		return netip.Prefix{}, errors.New(`a range of every address is no host rule (write "*")`)
	case p.IsSingleIP():
		return netip.Prefix{}, fmt.Errorf("one address: write it as %q", p.Addr())
	case p.Addr().Is4In6() && p.Bits() >= 96:
		return netip.Prefix{}, errors.New("an IPv4-mapped range: write it as IPv4")
	}
	return p, nil
}
