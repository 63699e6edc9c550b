package spec

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Endpoint is one parsed entry of Config.AllowedTCPConnect.
type Endpoint struct {
	// Host is "*" for any host, "localhost", a canonical IP literal, a
	// canonical address range in CIDR notation ("10.0.0.0/8",
	// "fd00::/8": see [Endpoint.Range]), or a lower-cased DNS name.
	Host string `json:"host"`
	// Port is the destination port, 1 to 65535; 0 exactly when AnyPort.
	Port uint16 `json:"port"`
	// AnyPort is set for "host:*": every port of Host. Port is then 0,
	// which no code may read as a port: check AnyPort first. ParseEndpoint
	// refuses port 0 in every other form, so an Endpoint it returns with
	// Port 0 is always an any-port entry.
	AnyPort bool `json:"any_port,omitempty"`
}

// AnyHost reports whether the endpoint allows every host.
func (e Endpoint) AnyHost() bool { return e.Host == "*" }

// Unrestricted reports whether the endpoint is "*:*": any host, any port,
// that is, outgoing TCP without restriction.
func (e Endpoint) Unrestricted() bool { return e.AnyHost() && e.AnyPort }

// Loopback reports whether the host is "localhost", a loopback address,
// or a range of loopback addresses only (inside 127.0.0.0/8; the only IPv6
// loopback address, ::1, is written as an address). A range that merely
// contains loopback addresses ("0.0.0.0/1") is not Loopback.
func (e Endpoint) Loopback() bool {
	if e.Host == "localhost" {
		return true
	}
	if p, ok := e.Range(); ok {
		return p.Bits() >= 8 && loopback4.Contains(p.Addr())
	}
	a, err := netip.ParseAddr(e.Host)
	return err == nil && a.IsLoopback()
}

// Named reports whether the host is a name rather than addresses: a DNS
// name, "localhost" or "*"; false for an IP literal or an address range.
// Only a name is ever looked up (by the egress resolver, or on macOS by
// getaddrinfo).
func (e Endpoint) Named() bool {
	if _, ok := e.Range(); ok {
		return false
	}
	_, err := netip.ParseAddr(e.Host)
	return err != nil
}

// String is the endpoint as a Config writes it: "host:port", "host:*"
// for an any-port entry, IPv6 (address or range) in brackets.
func (e Endpoint) String() string {
	if e.AnyPort {
		return net.JoinHostPort(e.Host, "*")
	}
	return net.JoinHostPort(e.Host, strconv.Itoa(int(e.Port)))
}

// ParseEndpoint parses "host:port" as Config.AllowedTCPConnect takes it.
// The port is decimal, 1 to 65535, or "*" for every port. The host is
// empty or "*" (any host), "localhost", an IP literal (IPv6 in brackets,
// no zone), an address range in CIDR notation (below), or a DNS name.
//
// "host:*" (an any-port entry, e.g. "api.example.com:*", "10.1.2.3:*",
// "localhost:*") grants every port of that host. What each entry point
// can make of it, reported by [PlanFor]: under ApplySelf on Linux,
// Landlock cannot restrict connect to one host on any port, so TCP
// connect is not restricted at all (any host, any port: reported not
// enforced; Strict refuses). Under WrapCommand and Run with the egress
// namespace, the host is enforced exactly, but only proxy-aware clients
// reach it on any port; a direct connection reaches it only on ports
// other entries list (one listener per port cannot serve every port:
// reported, Strict refuses). On macOS "localhost:*" is enforced as
// Seatbelt's localhost:*; any other host becomes "*:*", host not enforced.
// "localhost:*" is every service on the caller's loopback (databases,
// admin ports): grant it only as that.
//
// "*:*" (or ":*") is accepted and means outgoing TCP without restriction:
// any host, any port. [PlanFor] says so in plain words; it is a grant,
// made exactly, so Strict does not refuse it. Seed 004's net.outbound
// without hosts maps to it.
//
// An address range in CIDR notation allows every address in it (seed
// 004's allowHosts): "10.0.0.0/8:443", "10.0.0.0/8:*", and for IPv6 the
// range inside the brackets, "[fd00::/8]:443" ("[fd00::]/8:443" and
// "fd00::/8:443" are refused with the form to write). The range must be
// canonical: "10.1.2.3/8" is refused with "10.0.0.0/8:443" and
// "10.1.2.3:443" in the message, not rounded (the writer may have meant
// the one address, and the range is 16 million). A /32 or /128 is that IP literal
// ("10.1.2.3/32:443" is "10.1.2.3:443"). "0.0.0.0/0" and "::/0" are
// refused: write "*:PORT" for any host. A range matches addresses only,
// never names, so a /0 would read as any host while the egress layer
// refused every name; one spelling for "any host" leaves no doubt. An
// IPv4-mapped range ("[::ffff:10.0.0.0/104]:443") is refused with its
// IPv4 form; destinations are matched unmapped, so an IPv6 range never
// matches an IPv4 destination (IPv4-mapped or not), nor an IPv4 range an
// IPv6 one.
//
// A range matches the address a program dials (an IP literal in a proxy
// request, the destination of a direct connection), never a DNS name
// whose addresses fall in it: names are matched exactly, and the
// namespace's resolver answers only listed names, because a DNS answer is
// whatever the name's owner (or an attacker on the path) makes it. What
// each entry point makes of a range, reported by [PlanFor]: under
// WrapCommand and Run with the egress namespace it is enforced, as an IP
// literal is ("10.0.0.0/8:*" as any "host:*": any port through the proxy
// only); under ApplySelf and without namespaces only its port is (the
// range is reported not enforced; Strict refuses; "10.0.0.0/8:*" leaves
// TCP connect unrestricted there, as any "host:*"); on macOS it becomes
// Seatbelt's "*:PORT",
// host reported not enforced, or "localhost:PORT" for a range inside
// 127.0.0.0/8 (Seatbelt's localhost is 127.0.0.1 and ::1: narrower than
// asked); on Windows nothing of TCP is enforced, as for every entry. A
// range that holds loopback addresses ("127.0.0.0/8") reaches the
// caller's loopback services on them under WrapCommand and Run, as
// "localhost" does.
//
// Brackets hold an IPv6 address or range and nothing else:
// "[127.0.0.1]:80" and "[localhost]:80" are refused with the form to
// write.
//
// URLs, port ranges and wildcards such as "*.example.com"
// are refused: only the egress proxy of WrapCommand and Run could honour
// a wildcard (internal/egress matches them), and where it is not in force
// (ApplySelf, macOS, no network namespaces, a Config mixing "*:PORT") an
// entry falls back to its port, where a wildcard would read as narrower
// than it is.
func ParseEndpoint(s string) (Endpoint, error) {
	if err := CheckText(s); err != nil {
		return Endpoint{}, err
	}
	if strings.Contains(s, "/") {
		return parseRange(s)
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return Endpoint{}, errors.New(`want "host:port"`)
	}
	var ep Endpoint
	if err := ep.setPort(port); err != nil {
		return Endpoint{}, err
	}
	// Brackets hold an IPv6 address and nothing else, as in a URL
	// (RFC 3986): net.SplitHostPort also takes "[127.0.0.1]:80" or
	// "[localhost]:80", and one entry has one spelling.
	if strings.HasPrefix(s, "[") {
		if a, err := netip.ParseAddr(host); err != nil || !a.Is6() {
			return Endpoint{}, fmt.Errorf("brackets hold an IPv6 address only: write %q", net.JoinHostPort(host, port))
		}
	}
	switch {
	case host == "" || host == "*":
		host = "*"
	case strings.EqualFold(host, "localhost"):
		host = "localhost"
	default:
		if a, err := netip.ParseAddr(host); err == nil {
			if a.Zone() != "" {
				return Endpoint{}, errors.New("IPv6 zones are not supported")
			}
			host = a.Unmap().String()
		} else if !validDNSName(host) {
			return Endpoint{}, fmt.Errorf("host %q is not \"*\", localhost, an IP address or a DNS name", host)
		} else {
			host = strings.ToLower(strings.TrimSuffix(host, "."))
		}
	}
	ep.Host = host
	return ep, nil
}

// setPort sets e's port from the port field of an entry: 1 to 65535, or
// "*" for every port.
func (e *Endpoint) setPort(port string) error {
	if port == "*" {
		e.AnyPort = true
		return nil
	}
	p, err := parsePort(port)
	if err != nil {
		return err
	}
	if p == 0 {
		return errors.New("port 0 is not a destination")
	}
	e.Port = p
	return nil
}

func parsePort(s string) (uint16, error) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("port %q is not a decimal number or \"*\"", s)
	}
	n, err := strconv.ParseUint(s, 10, 16)
	if err != nil {
		return 0, fmt.Errorf("port %q is out of range 0-65535", s)
	}
	return uint16(n), nil
}

func validDNSName(h string) bool {
	h = strings.TrimSuffix(h, ".")
	if h == "" || len(h) > 253 {
		return false
	}
	for label := range strings.SplitSeq(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
				return false
			}
		}
	}
	return true
}

// CheckText rejects NUL, control characters and invalid UTF-8: none of them
// belongs in a path or an endpoint, and each can confuse a log, a profile or
// a terminal.
func CheckText(s string) error {
	if !utf8.ValidString(s) {
		return errors.New("not valid UTF-8")
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return fmt.Errorf("contains control character %U", r)
		}
	}
	return nil
}
