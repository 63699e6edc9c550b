package linux

// The transparent path's plan, pure: its ports, the child's rules for it,
// the inbound ports and what the plan reports (see
// egress_transparent_linux.go for the whole path).

import (
	"slices"
	"strconv"
	"strings"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"github.com/openparallax/sandbox/internal/spec"
	"github.com/openparallax/sandbox/internal/trampoline"
)

// transparentPorts returns the ports of rc's host entries, sorted, when
// the transparent path can serve them here, or why not. Any-port entries
// ("host:*") add no port: one listener per port cannot hold them all.
func transparentPorts(rc *spec.Resolved) ([]uint16, string) {
	var ports []uint16
	for _, ep := range rc.Connect {
		if !ep.AnyPort && !slices.Contains(ports, ep.Port) {
			ports = append(ports, ep.Port)
		}
	}
	if len(ports) == 0 {
		return nil, "every host entry allows any port (\"host:*\"), and the transparent path needs one listener per port: the proxy alone serves them"
	}
	slices.Sort(ports)
	for _, p := range ports {
		if slices.Contains(rc.Bind, p) {
			// The caller's listener would hold the port the program
			// binds, and a connect to localhost:P would mean either.
			return nil, "port " + strconv.Itoa(int(p)) + " is both an allowed destination and a port the program may bind"
		}
	}
	if len(ports) > trampoline.MaxTransparentPorts {
		return nil, "more than " + strconv.Itoa(trampoline.MaxTransparentPorts) + " ports"
	}
	if ok, reason := transparentAvailable(); !ok {
		return nil, reason
	}
	return ports, ""
}

// withTransparent adds the transparent path to the child's policy and
// network step: Landlock's connect ports, UDP in seccomp, and Landlock's
// UDP rights left unhandled (UDP cannot leave the namespace; the resolver
// socket is the only thing there that receives it).
func (e egressPlan) withTransparent(pol *linuxPolicy) {
	if len(e.transparent) == 0 {
		return
	}
	for _, p := range e.transparent {
		if !slices.Contains(pol.Connect, p) {
			pol.Connect = append(pol.Connect, p)
		}
	}
	pol.Seccomp.AllowUDP = true
	pol.HandledNet &^= ll.AccessNetBindUDP | ll.AccessNetConnectSendUDP
}

// inboundConcurrent is internal/egress's bound on the inbound connections
// relayed at once per port (its maxInbound), as the plan states it.
const inboundConcurrent = 64

// inboundPoolPerPort is the size of a port's inbound pool for a non-root
// caller (see inboundPorts); tests lower it.
var inboundPoolPerPort = 64

// inboundPorts returns the bind ports the caller makes reachable from its
// own loopback, the size of each one's inbound pool, and why other ports
// are not reachable (port 0: which port the system picks cannot be known
// in advance, so the caller cannot listen on it).
//
// A root caller makes a socket in the program's namespace per connection
// (setns on a locked thread, for socket() only): pool 0, no bound over the
// sandbox's life, at most 64 connections at once per port. A non-root
// caller cannot setns there (the kernel asks for CAP_SYS_ADMIN in the
// caller's own user namespace too), so the child half makes, before the
// program starts, pool sockets per port (inboundPoolPerPort, at most
// trampoline.MaxInboundPool in all): each serves one connection, so the
// pool bounds the connections over the sandbox's life. Root keeps setns
// rather than the pool: the same socket, made by the same caller, with no
// such bound and no start-up cost per port.
func inboundPorts(bind []uint16, root bool) (ports []uint16, pool int, why string) {
	for _, p := range bind {
		if p == 0 {
			why = "port 0 (a port the system picks) cannot be known in advance"
			continue
		}
		ports = append(ports, p)
	}
	if root || len(ports) == 0 {
		return ports, 0, why
	}
	if pool = min(inboundPoolPerPort, trampoline.MaxInboundPool/len(ports)); pool == 0 {
		return nil, 0, "more than " + strconv.Itoa(trampoline.MaxInboundPool) + " ports: a non-root caller's inbound pool holds at most " +
			strconv.Itoa(trampoline.MaxInboundPool) + " sockets"
	}
	return ports, pool, why
}

// poolSize is the number of inbound pool sockets the child half makes.
func (e egressPlan) poolSize() int { return e.poolPer * len(e.inbound) }

// inboundFeature is tcp_bind's entry for WrapCommand and Run when the program
// runs in the egress layer's namespace with ports it may bind: they are
// that namespace's; those inboundPorts names are also reachable from the
// caller's loopback.
func (e egressPlan) inboundFeature() (spec.Enforcement, bool) {
	if !e.on || len(e.bind) == 0 {
		return spec.Enforcement{}, false
	}
	list := func(ps []uint16) string {
		s := make([]string, len(ps))
		for i, p := range ps {
			s[i] = strconv.Itoa(int(p))
		}
		return strings.Join(s, ", ")
	}
	f := spec.Enforcement{Feature: spec.FeatureTCPBind, Scope: spec.ScopeCommand, Enforced: true}
	if len(e.inbound) > 0 {
		f.Detail = "WrapCommand/Run: the program listens inside its own network namespace; the caller listens on 127.0.0.1 at ports " +
			list(e.inbound) + " and relays each connection to the program's port 127.0.0.1:PORT there (whoever can reach the caller's loopback reaches it; " +
			"a listener on [::1] only is not reached), at most " + strconv.Itoa(inboundConcurrent) + " at once per port"
		if e.poolPer > 0 {
			f.Detail += ", through sockets the sandbox makes in that namespace before the program starts (the caller is not root, so it cannot enter it): " +
				strconv.Itoa(e.poolPer) + " per port, one per connection, so at most " + strconv.Itoa(e.poolPer) +
				" connections per port over the program's life (a connection the program's port refuses gives its socket back); " +
				"further connections are reset and reported (inbound-pool-exhausted)"
		} else {
			f.Detail += ", through a socket the caller (root) makes in that namespace for each"
		}
	}
	if e.inNote != "" {
		if f.Detail != "" {
			f.Detail += "; "
		} else {
			f.Detail = "WrapCommand/Run: the program listens inside its own network namespace: "
		}
		f.Detail += "ports " + list(slices.DeleteFunc(slices.Clone(e.bind), func(p uint16) bool { return slices.Contains(e.inbound, p) })) +
			" are reachable only from inside it, not from the caller's loopback (" + e.inNote + ")"
		f.Hint = "to serve the caller (a dev server for a browser) from those, bind fixed ports (not 0; at most 256 for a non-root caller), or give port-only entries (\"*:PORT\"), which keep the host's network"
	}
	return f, true
}

// transparentDetail is tcp_connect_host's detail with the transparent path.
func (e egressPlan) transparentDetail() string {
	ports := make([]string, len(e.transparent))
	for i, p := range e.transparent {
		ports[i] = strconv.Itoa(int(p))
	}
	return "WrapCommand/Run: a network namespace with only loopback in which every address is local; a direct TCP connection " +
		"(any client, as dialled: connect(), Go net/http, Node fetch, curl, git) to " + strings.Join(e.hosts, ", ") +
		" is relayed by the caller, which resolves names itself and refuses names that resolve to loopback, private or link-local addresses; " +
		"every other connection to ports " + strings.Join(ports, ", ") + " is reset and reported, and connections to other ports are refused by Landlock (EACCES) " +
		"and never reach the caller, so they are not reported. DNS: UDP to port 53 of any address reaches the caller's resolver, " +
		"which answers only the listed names (others: NXDOMAIN, reported); other UDP reaches nothing. " +
		"Proxy-aware clients may also use the proxy at " + e.addr().String() + " (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY)" +
		pick(len(e.anyPort) > 0, ". Any-port entries ("+strings.Join(e.anyPort, ", ")+") are reached directly only on the ports above, on any port only through the proxy (see "+spec.FeatureTCPAnyPort+")", "") +
		e.rangeNote()
}

// rangeNote says, when e has address range entries, that they match the
// addresses dialled and never names (see spec.ParseEndpoint).
func (e egressPlan) rangeNote() string {
	var ranges []string
	for _, h := range e.hosts {
		if strings.Contains(h, "/") {
			ranges = append(ranges, h)
		}
	}
	if len(ranges) == 0 {
		return ""
	}
	return ". Address ranges (" + strings.Join(ranges, ", ") + ") allow the addresses dialled in them, never a name that resolves into them " +
		"(the resolver answers no name for a range)"
}

// dnsScope is what the namespace's resolver answers, for the network
// line: the names the entries list, or none when every entry is an
// address or a range.
func (e egressPlan) dnsScope() string {
	if len(e.names) == 0 {
		return "for no name (every entry is an address or a range)"
	}
	return "for " + strings.Join(e.names, ", ")
}

// transparentClients is EgressPlan.Clients with the transparent path.
const transparentClients = "every TCP client, as it dials (no proxy awareness needed); UDP: DNS queries only (to port 53 of any address), answered by the caller for the listed names"
