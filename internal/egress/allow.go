package egress

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"
)

// Rule is one allowlist entry: the Host and Port of a sandbox.Endpoint, as
// sandbox.ParseEndpoint makes it from Config.AllowedTCPConnect ("*" for any
// host, "localhost", a canonical IP literal, a canonical address range
// "10.0.0.0/8" or "fd00::/8", or a lower-cased DNS name), or a wildcard
// "*.example.com" (see [NewAllowlist]). AnyPort is set for
// "host:*", every port of Host; Port is then 0.
type Rule struct {
	Host    string
	Port    uint16
	AnyPort bool
}

// Match is what [Allowlist.Match] found for a requested host and port.
type Match struct {
	Host string // the requested host, canonical: lower case, no final dot, IP literals unmapped
	Port uint16
	// Addrs are the only addresses the proxy may connect to when the rule
	// pins them: the literal for an IP rule, 127.0.0.1 and ::1 for
	// "localhost". Nil for a DNS name: the caller resolves Host and filters
	// the answer through [Allowlist.AddrAllowed].
	Addrs []netip.Addr
	Rule  Rule // the rule that matched
}

// Allowlist decides which host:port requests the proxy serves. It is
// immutable once made and safe for concurrent use.
type Allowlist struct {
	names     map[Rule]bool           // exact DNS names
	wild      []Rule                  // Host is the suffix after "*", e.g. ".example.com"
	addrs     map[netip.AddrPort]bool // IP literal rules
	localhost map[uint16]bool         // ports of "localhost" rules
	portOnly  []uint16                // ports of "*" rules, sorted
	// Any-port rules ("host:*"), kept apart from the per-port ones so
	// that no lookup can read port 0 as a port.
	namesAny     map[string]bool     // exact DNS names on every port
	addrsAny     map[netip.Addr]bool // IP literals on every port
	localhostAny bool                // "localhost:*"
	// Address ranges ("10.0.0.0/8"), per port or any port: few, scanned
	// in order (see addrRule).
	ranges []rangeRule
}

// NewAllowlist compiles rules.
//
// Hosts are matched exactly, after canonicalisation (lower case, no final
// dot, IPv4-mapped IPv6 unmapped). A DNS name never matches an IP literal or
// another name, however they resolve.
//
// A wildcard "*.example.com" matches every name with at least one more
// label that ends in ".example.com" ("a.example.com", "a.b.example.com"),
// never "example.com" itself; the suffix needs at least two labels ("*.com"
// is refused), which guards against a typo, not against public suffixes such
// as "*.co.uk". The "*" may only stand as the whole first label.
// sandbox.ParseEndpoint refuses wildcards today, because no backend could
// honour them; only the proxy can, so letting them into a Config is a
// decision for the integration that routes host entries through the proxy
// (it must also keep refusing them, or report them not enforced, where the
// proxy is not in force).
//
// Rules whose host is "*" (any host, a port rule) are not the proxy's
// business: Landlock's port filter enforces them without a namespace. They
// are not matched; [Allowlist.PortOnly] lists their ports so that the caller
// can decide what a Config mixing both kinds means.
//
// An address range ("10.0.0.0/8", "fd00::/8": canonical, as
// sandbox.ParseEndpoint writes it; /0, a single address and IPv4-mapped
// ranges are refused) matches every IP literal in it, and a direct
// connection's destination in it, on its port. It never matches a DNS
// name, whatever the name resolves to: an answer is the name owner's (or
// an attacker's) to choose. Addresses are unmapped before they are
// matched, so an IPv4-mapped IPv6 address is its IPv4 address: it matches
// an IPv4 range exactly when that address does, and never an IPv6 range.
// The rebinding filter ([Allowlist.AddrAllowed]) treats a range as naming
// each of its addresses on its port, the caller's own included (a range
// that holds 127.0.0.1 or the caller's LAN address reaches what the
// caller serves there): a name allowed by its own rule may then resolve
// into the range, which the program could reach by address anyway.
//
// An any-port rule (AnyPort, Port 0: "host:*") matches its host on every
// port, 1 to 65535, with the same host rules as above; the rebinding
// filter ([Allowlist.AddrAllowed]) treats an any-port IP literal or
// "localhost:*" as naming that address on every port. "*:*" (any host on
// any port) is refused: it is no host rule, and no port rule either.
// Port 0 without AnyPort, and a port with it, are refused.
func NewAllowlist(rules []Rule) (*Allowlist, error) {
	a := &Allowlist{
		names:     map[Rule]bool{},
		addrs:     map[netip.AddrPort]bool{},
		localhost: map[uint16]bool{},
		namesAny:  map[string]bool{},
		addrsAny:  map[netip.Addr]bool{},
	}
	for _, r := range rules {
		switch {
		case r.AnyPort && r.Port != 0:
			return nil, fmt.Errorf("egress: rule %q: any port and port %d at once", r.Host, r.Port)
		case !r.AnyPort && r.Port == 0:
			return nil, fmt.Errorf("egress: rule %q: port 0 is not a destination", r.Host)
		case r.AnyPort && (r.Host == "*" || r.Host == ""):
			return nil, fmt.Errorf("egress: rule %q: any host on any port is not a rule the proxy can check", r.Host+":*")
		}
		switch h := r.Host; {
		case h == "*" || h == "":
			if !slices.Contains(a.portOnly, r.Port) {
				a.portOnly = append(a.portOnly, r.Port)
			}
		case strings.Contains(h, "/"):
			p, err := canonicalRange(h)
			if err != nil {
				return nil, fmt.Errorf("egress: rule %q: %w", h, err)
			}
			a.ranges = append(a.ranges, rangeRule{p: p, port: r.Port, anyPort: r.AnyPort})
		case strings.HasPrefix(h, "*."):
			suffix := h[1:]
			name, err := canonicalName(h[2:])
			if err != nil {
				return nil, fmt.Errorf("egress: rule %q: %w", h, err)
			}
			if !strings.Contains(name, ".") {
				return nil, fmt.Errorf("egress: rule %q: a wildcard needs at least two labels after \"*.\"", h)
			}
			if "."+name != suffix {
				return nil, fmt.Errorf("egress: rule %q: not canonical (want %q)", h, "*."+name)
			}
			a.wild = append(a.wild, Rule{Host: suffix, Port: r.Port, AnyPort: r.AnyPort})
		default:
			host, addr, err := canonicalHost(h)
			if err != nil {
				return nil, fmt.Errorf("egress: rule %q: %w", h, err)
			}
			switch {
			case host != h:
				return nil, fmt.Errorf("egress: rule %q: not canonical (want %q)", h, host)
			case r.AnyPort && addr.IsValid():
				a.addrsAny[addr] = true
			case r.AnyPort && host == "localhost":
				a.localhostAny = true
			case r.AnyPort:
				a.namesAny[host] = true
			case addr.IsValid():
				a.addrs[netip.AddrPortFrom(addr, r.Port)] = true
			case host == "localhost":
				a.localhost[r.Port] = true
			default:
				a.names[Rule{Host: host, Port: r.Port}] = true
			}
		}
	}
	slices.Sort(a.portOnly)
	return a, nil
}

// PortOnly returns the ports of the rules whose host is "*", sorted.
func (a *Allowlist) PortOnly() []uint16 { return slices.Clone(a.portOnly) }

// Empty reports whether no request can match: the list has no host rule.
func (a *Allowlist) Empty() bool {
	return len(a.names) == 0 && len(a.wild) == 0 && len(a.addrs) == 0 && len(a.localhost) == 0 &&
		len(a.namesAny) == 0 && len(a.addrsAny) == 0 && !a.localhostAny && len(a.ranges) == 0
}

// addrNamed reports whether an IP literal or address range rule names
// addr (unmapped) on port, or on every port.
func (a *Allowlist) addrNamed(addr netip.Addr, port uint16) bool {
	_, ok := a.addrRule(addr, port)
	return ok
}

// localhostOn reports whether a "localhost" rule allows port (or every port).
func (a *Allowlist) localhostOn(port uint16) bool { return a.localhost[port] || a.localhostAny }

// nameOn reports whether an exact DNS name rule allows host on port (or
// every port).
func (a *Allowlist) nameOn(host string, port uint16) bool {
	return a.names[Rule{Host: host, Port: port}] || a.namesAny[host]
}

var (
	loopback4 = netip.MustParseAddr("127.0.0.1")
	loopback6 = netip.IPv6Loopback()
)

// Match checks a requested host and port by name. It returns a [Denial]
// reason ([ReasonNotAllowed] or [ReasonMalformed]) and a detail when the
// request is refused. An allowed DNS name still has to pass
// [Allowlist.AddrAllowed] for every address it resolves to.
func (a *Allowlist) Match(host string, port uint16) (m Match, reason, detail string) {
	h, addr, err := canonicalHost(host)
	if err != nil {
		return Match{}, ReasonMalformed, err.Error()
	}
	if port == 0 {
		return Match{}, ReasonMalformed, "port 0 is not a destination"
	}
	m = Match{Host: h, Port: port}
	switch {
	case addr.IsValid():
		if r, ok := a.addrRule(addr, port); ok {
			m.Addrs, m.Rule = []netip.Addr{addr}, r
			return m, "", ""
		}
		// "localhost" names the loopback addresses (RFC 6761): a client
		// that resolved it itself asks for 127.0.0.1 or ::1.
		if (addr == loopback4 || addr == loopback6) && a.localhostOn(port) {
			m.Addrs, m.Rule = []netip.Addr{addr}, rule("localhost", port, !a.localhost[port])
			return m, "", ""
		}
	case h == "localhost":
		if a.localhostOn(port) {
			m.Addrs, m.Rule = []netip.Addr{loopback4, loopback6}, rule(h, port, !a.localhost[port])
			return m, "", ""
		}
	default:
		if a.nameOn(h, port) {
			m.Rule = rule(h, port, !a.names[Rule{Host: h, Port: port}])
			return m, "", ""
		}
		for _, w := range a.wild {
			if (w.AnyPort || w.Port == port) && strings.HasSuffix(h, w.Host) {
				m.Rule = rule("*"+w.Host, port, w.AnyPort)
				return m, "", ""
			}
		}
	}
	return Match{}, ReasonNotAllowed, fmt.Sprintf("%s is not on this sandbox's allowlist", joinHostPort(h, port))
}

// rule is the Rule a match names: the port asked for, or AnyPort when an
// any-port rule matched.
func rule(host string, port uint16, anyPort bool) Rule {
	if anyPort {
		return Rule{Host: host, AnyPort: true}
	}
	return Rule{Host: host, Port: port}
}

// AddrAllowed reports whether the proxy may connect to addr on port. Every
// public address may be connected to (the name was checked by Match); an
// address for which [Public] is false (loopback, private, link-local...)
// only when a rule names it: an IP literal rule for exactly that address
// and port (or that address on any port), an address range rule that holds
// it on that port (or on any port), or a "localhost" rule on that
// port (or on any port) for 127.0.0.1 and ::1. So an allowed name that
// resolves to 127.0.0.1 or 10.0.0.1 (DNS rebinding) does not reach the
// caller's own or internal services.
func (a *Allowlist) AddrAllowed(addr netip.Addr, port uint16) (ok bool, why string) {
	addr = addr.Unmap()
	if class := Class(addr); class != "" {
		if a.addrNamed(addr, port) {
			return true, ""
		}
		if (addr == loopback4 || addr == loopback6) && a.localhostOn(port) {
			return true, ""
		}
		return false, fmt.Sprintf("%s is a %s address no rule names", addr, class)
	}
	return true, ""
}

// AddrAllowedHere is [Allowlist.AddrAllowed] that also refuses every
// address in own, the addresses of the caller's own network interfaces
// (see [LocalAddrs]), unless an IP literal rule names exactly that address
// and port or an address range rule holds it on that port. A public address of the caller's reaches whatever the caller
// serves on all interfaces (0.0.0.0), which an allowed name resolving to it
// must not. An IPv4 address carried in IPv6 (IPv4-mapped, NAT64
// 64:ff9b::/96, 6to4) is checked as the IPv4 address too.
//
// Not covered: other machines of the caller's network that have public
// addresses, and an address the caller acquires between the list and the
// connection.
func (a *Allowlist) AddrAllowedHere(addr netip.Addr, port uint16, own []netip.Addr) (ok bool, why string) {
	if ok, why := a.AddrAllowed(addr, port); !ok {
		return false, why
	}
	addr = addr.Unmap()
	if a.addrNamed(addr, port) {
		return true, ""
	}
	return notOwn(addr, own)
}

// notOwn refuses addr when it is one of own (the caller's interface
// addresses), directly or carried in IPv6.
func notOwn(addr netip.Addr, own []netip.Addr) (ok bool, why string) {
	inner, carried := embedded4(addr)
	for _, o := range own {
		o = o.Unmap()
		if o.WithZone("") == addr || carried && o == inner {
			return false, fmt.Sprintf("%s is an address of the caller's own interfaces, which no rule names", addr)
		}
	}
	return true, ""
}

// addrAllowedAnyPort is the resolver's filter for a name an any-port rule
// allows: addr may be answered when an any-port rule names it (an IP
// literal or a range that holds it, or 127.0.0.1 and ::1 with
// "localhost:*"), or when it is public
// and none of own. The relay still checks the port it dials with
// [Allowlist.AddrAllowedHere].
func (a *Allowlist) addrAllowedAnyPort(addr netip.Addr, own []netip.Addr) (ok bool, why string) {
	addr = addr.Unmap()
	if a.addrNamedAnyPort(addr) {
		return true, ""
	}
	if class := Class(addr); class != "" {
		if (addr == loopback4 || addr == loopback6) && a.localhostAny {
			return true, ""
		}
		return false, fmt.Sprintf("%s is a %s address no any-port rule names", addr, class)
	}
	return notOwn(addr, own)
}

// LocalAddrs returns the addresses of the caller's network interfaces
// (net.InterfaceAddrs, in the caller's network namespace), without zones.
func LocalAddrs() ([]netip.Addr, error) {
	as, err := net.InterfaceAddrs()
	if err != nil {
		return nil, fmt.Errorf("egress: listing the caller's interface addresses: %w", err)
	}
	out := make([]netip.Addr, 0, len(as))
	for _, a := range as {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok {
				out = append(out, ip.Unmap())
			}
		}
	}
	return out, nil
}

// canonicalHost returns the canonical form of a requested or configured
// host and, for an IP literal, the address. IPv6 literals may come in
// brackets; zones are refused.
func canonicalHost(h string) (string, netip.Addr, error) {
	if strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]") {
		addr, err := netip.ParseAddr(h[1 : len(h)-1])
		if err != nil || !addr.Is6() {
			return "", netip.Addr{}, fmt.Errorf("host %q: brackets hold an IPv6 address only", h)
		}
		h = h[1 : len(h)-1]
	}
	if addr, err := netip.ParseAddr(h); err == nil {
		if addr.Zone() != "" {
			return "", netip.Addr{}, errors.New("IPv6 zones are not supported")
		}
		addr = addr.Unmap()
		return addr.String(), addr, nil
	}
	name, err := canonicalName(h)
	return name, netip.Addr{}, err
}

// canonicalName checks a DNS name and returns it lower-cased without a
// final dot. A name whose last label starts with a digit is refused: no
// top-level domain does, and resolvers read "127.1" or "0x7f000001" as
// addresses.
func canonicalName(h string) (string, error) {
	n := strings.ToLower(strings.TrimSuffix(h, "."))
	if n == "" || len(n) > 253 {
		return "", fmt.Errorf("host %q is not a DNS name", h)
	}
	labels := strings.Split(n, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return "", fmt.Errorf("host %q is not a DNS name", h)
		}
		for _, c := range l {
			if !(c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z') {
				return "", fmt.Errorf("host %q is not a DNS name", h)
			}
		}
	}
	if last := labels[len(labels)-1]; last[0] >= '0' && last[0] <= '9' {
		return "", fmt.Errorf("host %q looks like a numeric address, not a DNS name", h)
	}
	return n, nil
}
