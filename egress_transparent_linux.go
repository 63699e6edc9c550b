//go:build linux

package sandbox

// The transparent path of egress by host name under WrapCommand and Run
// (issue 28): beside the proxy, every TCP client reaches an allowed
// host:port as it dials it, with no proxy awareness.
//
//  1. transparentPorts decides, from the Config, the ports (those of the
//     host entries) and whether the path can be used here (the network
//     step's transparent half works: transparentAvailable, a probe once
//     per process; no port is also one the program may bind).
//  2. The child half's network step (NetStep.Transparent) makes every
//     address local in the namespace, one listener per port and the
//     resolver's UDP socket on port 53, and hands them over before the
//     target starts.
//  3. serveHandoff serves them: egress.Proxy.ServeTransparent decides each
//     connection by the address dialled, ServeDNS answers the program's
//     resolver (allowed names only; see internal/egress's package doc).
//  4. withTransparent adjusts the child's rules: Landlock lets the program
//     connect to the ports of the host entries (and the proxy's), and
//     seccomp lets it make UDP sockets, which reach nothing but the
//     resolver socket: the namespace has no other interface than lo and
//     every route in it is local.
//
// A connection to a port that is not on the list never reaches the caller:
// Landlock refuses it in the kernel (EACCES), and nothing records it.

import (
	"net"
	"slices"
	"strconv"
	"strings"
	"sync"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"github.com/openparallax/sandbox/internal/egress"
	"github.com/openparallax/sandbox/internal/trampoline"
)

// transparentPorts returns the ports of rc's host entries, sorted, when
// the transparent path can serve them here, or why not.
func transparentPorts(rc *resolvedConfig) ([]uint16, string) {
	var ports []uint16
	for _, ep := range rc.connect {
		if !slices.Contains(ports, ep.Port) {
			ports = append(ports, ep.Port)
		}
	}
	slices.Sort(ports)
	for _, p := range ports {
		if slices.Contains(rc.bind, p) {
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

var (
	transparentOnce   sync.Once
	transparentProbed nsState
	// transparentAvailable is transparentProbe; tests replace it.
	transparentAvailable = transparentProbe
)

// transparentProbe runs the network step with a transparent port once per
// process (after netNamespaces succeeded): local routes need rtnetlink and
// IPv6 in the namespace, which a kernel or a container can lack where the
// proxy's listener alone works.
func transparentProbe() (bool, string) {
	transparentOnce.Do(func() { transparentProbed = probeNetStep([]uint16{egressPortBase + 1}) })
	if !transparentProbed.ok {
		return false, "the transparent path is unavailable here: " + transparentProbed.reason
	}
	return true, ""
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

// serveHandoff serves what the child half handed over until p is closed,
// and closes every socket of h.
func serveHandoff(p *egress.Proxy, h *egress.Handoff) {
	var wg sync.WaitGroup
	for _, l := range h.Transparent {
		wg.Go(func() { p.ServeTransparent(l) })
	}
	if uc, ok := h.Resolver.(*net.UDPConn); ok {
		wg.Go(func() { p.ServeDNS(uc) })
	} else if h.Resolver != nil {
		h.Resolver.Close() // egress.ReceiveSockets makes a *net.UDPConn: unreachable
	}
	p.Serve(h.Proxy)
	wg.Wait()
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
		"Proxy-aware clients may also use the proxy at " + e.addr().String() + " (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY)"
}

// transparentClients is EgressPlan.Clients with the transparent path.
const transparentClients = "every TCP client, as it dials (no proxy awareness needed); UDP: DNS queries only (to port 53 of any address), answered by the caller for the listed names"
