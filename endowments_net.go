package sandbox

// The descriptor's net rules.

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

func (e *Endowments) checkNet() error {
	n := e.Net
	switch {
	case len(n.AllowHosts) > 0 && !n.Outbound:
		return &EndowmentsError{Field: "net.allowHosts", Reason: "allowHosts narrows outbound connections: add \"outbound\": true, or remove allowHosts"}
	case len(n.AllowPorts) > 0 && !n.Outbound && !n.Inbound:
		return &EndowmentsError{Field: "net.allowPorts", Reason: "allowPorts narrows outbound connections and names the ports to listen on: add \"outbound\": true or \"inbound\": true, or remove allowPorts"}
	case n.Inbound && len(n.AllowPorts) == 0:
		return &EndowmentsError{Field: "net.inbound", Reason: "list the ports the program may listen on in allowPorts (listening on any port cannot be granted here)"}
	}
	for i, h := range n.AllowHosts {
		if err := checkHost(h); err != nil {
			return &EndowmentsError{Field: fmt.Sprintf("net.allowHosts[%d]", i), Value: h, Reason: err.Error()}
		}
		if n.Inbound && loopbackHost(h) {
			return &EndowmentsError{Field: fmt.Sprintf("net.allowHosts[%d]", i), Value: h,
				Reason: "with inbound, allowPorts are also the ports the program listens on, so this host on them would name the program's own listener and the caller's service at once " +
					"(under Run's network namespace the caller's loopback ports serve the relay to the program's listeners): this descriptor cannot grant both; drop inbound or this host"}
		}
	}
	for i, p := range n.AllowPorts {
		if p < 1 || p > 65535 {
			return &EndowmentsError{Field: fmt.Sprintf("net.allowPorts[%d]", i), Value: fmt.Sprint(p), Reason: "want a port from 1 to 65535"}
		}
	}
	return nil
}

// checkHost accepts a DNS name, "localhost", an IP address or a CIDR
// range, and refuses with what to write instead. The final word on a
// host is ParseEndpoint's, when the Config is validated.
func checkHost(h string) error {
	if _, err := netip.ParseAddr(h); err == nil {
		return nil
	}
	if _, err := netip.ParsePrefix(h); err == nil {
		return nil
	}
	switch {
	case h == "" || h == "*":
		return errors.New("omit allowHosts to allow any host")
	case strings.Contains(h, "://"):
		return errors.New("a URL: write the host name alone, e.g. \"api.example.com\"")
	case strings.HasPrefix(h, "["):
		return errors.New("write an IPv6 address without brackets, e.g. \"::1\" or \"fd00::/8\"")
	case strings.Contains(h, ":"):
		return errors.New("write the host alone and put the port in allowPorts")
	case strings.Contains(h, "*"):
		return errors.New("wildcards are not supported: list each host name")
	case strings.Contains(h, "/"):
		return errors.New("not a CIDR range: write e.g. \"10.0.0.0/8\"")
	}
	for _, label := range strings.Split(strings.TrimSuffix(h, "."), ".") {
		if label == "" || len(label) > 63 || strings.Trim(label, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_") != "" {
			return errors.New("not a host name, IP address or CIDR range")
		}
	}
	return nil
}

// loopbackHost reports whether h names the caller's loopback:
// "localhost", a loopback address, or a range inside one.
func loopbackHost(h string) bool {
	if strings.EqualFold(strings.TrimSuffix(h, "."), "localhost") {
		return true
	}
	if a, err := netip.ParseAddr(h); err == nil {
		return a.Unmap().IsLoopback()
	}
	p, err := netip.ParsePrefix(h)
	return err == nil && (p.Addr().Unmap().IsLoopback() || p.Contains(netip.MustParseAddr("127.0.0.1")) || p.Contains(netip.IPv6Loopback()))
}
