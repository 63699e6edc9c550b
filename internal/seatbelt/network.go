package seatbelt

import (
	"fmt"
	"slices"
	"strconv"
)

// writeNetwork writes the Unix-socket and TCP rules, and what name
// resolution and TLS need; it adds the hosts Seatbelt cannot express to
// prof.NotEnforced.
func writeNetwork(b *builder, p Policy, g grants, prof *Profile) {
	needResolver, needHosts, needTLS := false, false, false
	for _, c := range g.conns {
		needResolver = needResolver || c.resolve
		needHosts = needHosts || c.hostsFile || c.resolve
		needTLS = needTLS || c.rule == "*" && !p.NoTrustd
	}
	writeUnixSockets(b, p, g, needResolver)

	b.section("network")
	if len(g.conns) == 0 && len(p.TCPBind) == 0 {
		b.comment("none: every TCP connect, bind and accept is denied")
	}
	emitted := make(map[string]bool)
	for _, c := range g.conns {
		if c.notEnforced != "" {
			prof.NotEnforced = append(prof.NotEnforced, c.notEnforced)
		}
		addr := c.rule + ":" + c.port
		if emitted[addr] {
			continue
		}
		emitted[addr] = true
		what := "loopback"
		if c.rule == "*" {
			what = "any host (Seatbelt cannot filter by host)"
		}
		port := "port " + c.port
		if c.port == "*" {
			port = "any port"
		}
		b.rule(fmt.Sprintf("TCPConnect[%d]: %s, %s", c.index, what, port),
			"(allow network-outbound (remote tcp "+b.quote(addr)+"))")
	}
	if needHosts {
		b.rule("TCPConnect names a host: the hosts file, where localhost is resolved",
			"(allow file-read* (literal "+b.quote("/private/etc/hosts")+"))")
	}
	if needResolver {
		writeResolver(b)
	}
	if needTLS {
		b.comment("trustd fetches AIA, OCSP and CRL URLs named in certificates the process supplies: a channel")
		b.comment("to hosts no rule names (Policy.NoTrustd leaves it out)")
		b.rule("TLS for non-loopback TCPConnect: certificate evaluation by trustd (Security.framework, Go's crypto/x509)",
			"(allow mach-lookup (global-name "+b.quote("com.apple.trustd.agent")+"))")
	}
	if slices.ContainsFunc(g.conns, func(c conn) bool { return c.rule == "*" }) {
		b.rule("TLS for non-loopback TCPConnect: the CA bundle of LibreSSL/OpenSSL clients such as curl",
			"(allow file-read* (subpath "+b.quote("/private/etc/ssl")+"))")
	}
	bound := make(map[uint16]bool)
	for i, port := range p.TCPBind {
		if bound[port] {
			continue
		}
		bound[port] = true
		addr := b.quote("*:" + strconv.FormatUint(uint64(port), 10))
		b.rule(fmt.Sprintf("TCPBind[%d]: listen on port %d on every local address", i, port), "(allow network-bind (local tcp "+addr+"))")
		b.rule(fmt.Sprintf("TCPBind[%d]: accept connections on port %d", i, port), "(allow network-inbound (local tcp "+addr+"))")
	}
}

// writeUnixSockets writes the AF_UNIX rules: socket files inside
// WritePaths with AllowUnixSockets, and the socket itself for the resolver.
func writeUnixSockets(b *builder, p Policy, g grants, needResolver bool) {
	b.section("Unix-domain sockets")
	if p.AllowUnixSockets || needResolver {
		why := "AllowUnixSockets"
		if !p.AllowUnixSockets {
			why = "name resolution"
		}
		b.rule(why+": create AF_UNIX sockets; connecting to one still needs a path rule", "(allow system-socket (socket-domain AF_UNIX))")
	}
	switch {
	case p.AllowUnixSockets:
		if len(g.writes) == 0 {
			b.comment("AllowUnixSockets: no WritePaths, so no socket file may be bound or connected to")
		}
		for _, w := range g.writes {
			b.rule("AllowUnixSockets: bind socket files inside "+w.describe(), "(allow network-bind (local unix-socket (subpath "+paramRef(w.param)+")))")
			b.rule("AllowUnixSockets: connect to socket files inside "+w.describe(), "(allow network-outbound (remote unix-socket (subpath "+paramRef(w.param)+")))")
		}
	case needResolver:
		b.comment("AllowUnixSockets is false: no socket file may be bound, and only the resolver below connected to")
	default:
		b.comment("AllowUnixSockets is false: no socket file may be bound or connected to")
	}
}

// writeResolver writes what getaddrinfo needs to reach mDNSResponder.
func writeResolver(b *builder) {
	b.comment("A TCPConnect host is a DNS name or any host: name resolution. mDNSResponder resolves")
	b.comment("any name, so queries reach any DNS server: a channel of its own (see the package doc).")
	b.rule("name resolution: getaddrinfo() asks mDNSResponder over this Unix socket",
		"(allow network-outbound (literal "+b.quote("/private/var/run/mDNSResponder")+"))")
	b.rule("name resolution: the resolver configuration (Go, Node, Rust and c-ares read it from configd)",
		"(allow mach-lookup (global-name "+b.quote("com.apple.SystemConfiguration.DNSConfiguration")+") (global-name "+
			b.quote("com.apple.SystemConfiguration.configd")+"))")
	b.rule("name resolution: the routing table, read to pick source addresses",
		"(allow sysctl-read (sysctl-name-prefix "+b.quote("net.routetable")+"))")
}
