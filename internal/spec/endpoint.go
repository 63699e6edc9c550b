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
	// Host is "*" for any host, "localhost", a canonical IP literal, or a
	// lower-cased DNS name.
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

// Loopback reports whether the host is "localhost" or a loopback address.
func (e Endpoint) Loopback() bool {
	if e.Host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(e.Host)
	return err == nil && a.IsLoopback()
}

// String is the endpoint as a Config writes it: "host:port", "host:*"
// for an any-port entry, IPv6 in brackets.
func (e Endpoint) String() string {
	if e.AnyPort {
		return net.JoinHostPort(e.Host, "*")
	}
	return net.JoinHostPort(e.Host, strconv.Itoa(int(e.Port)))
}

// ParseEndpoint parses "host:port" as Config.AllowedTCPConnect takes it.
// The port is decimal, 1 to 65535, or "*" for every port. The host is
// empty or "*" (any host), "localhost", an IP literal (IPv6 in brackets,
// no zone), or a DNS name.
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
// URLs, CIDR ranges, port ranges and wildcards such as "*.example.com"
// are refused: only the egress proxy of WrapCommand and Run could honour
// a wildcard (internal/egress matches them), and where it is not in force
// (ApplySelf, macOS, no network namespaces, a Config mixing "*:PORT") an
// entry falls back to its port, where a wildcard would read as narrower
// than it is.
func ParseEndpoint(s string) (Endpoint, error) {
	if err := CheckText(s); err != nil {
		return Endpoint{}, err
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return Endpoint{}, errors.New(`want "host:port"`)
	}
	var ep Endpoint
	if port == "*" {
		ep.AnyPort = true
	} else {
		p, err := parsePort(port)
		if err != nil {
			return Endpoint{}, err
		}
		if p == 0 {
			return Endpoint{}, errors.New("port 0 is not a destination")
		}
		ep.Port = p
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
