//go:build linux

package linux

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
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"github.com/openparallax/sandbox/internal/egress"
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
// and the caller's inbound listeners (for ports, into the namespace of h's
// sockets: through h.Pool, len(ports) shares of the same size in the order
// of ports, when there is one, else through sockets made there with
// setns), and closes every socket of h and every listener.
func serveHandoff(p *egress.Proxy, h *egress.Handoff, inbound []net.Listener, ports []uint16) {
	var wg sync.WaitGroup
	switch {
	case len(inbound) == 0:
	case len(h.Pool) > 0:
		per := len(h.Pool) / len(inbound) // ReceiveSockets received exactly poolSize()
		for i, l := range inbound {
			pool := egress.NewPool(h.Pool[i*per : (i+1)*per])
			wg.Go(func() { p.ServeInboundPool(l, pool, ports[i]) })
		}
		h.Pool = nil // the pools own them
	default:
		if ns, err := egress.NamespaceOf(h.Proxy); err != nil {
			closeAll(inbound) // connections to them are refused from now on
		} else {
			defer ns.Close()
			for i, l := range inbound {
				wg.Go(func() { p.ServeInbound(l, ns, ports[i]) })
			}
		}
	}
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

// resolvConf is the program's /etc/resolv.conf with the transparent path:
// the caller's resolver on a loopback address (the resolver socket
// receives a query to any address, but a program should never have to
// address one outside the machine to reach it), and no search domains, so
// that a name is asked for as it is written.
const resolvConf = "# Generated by the sandbox: the caller answers for the names the sandbox allows.\nnameserver 127.0.0.1\noptions ndots:1 attempts:2 timeout:2\n"

// withResolvConf writes resolvConf in a new directory of the caller's
// (mode 0700; the child half, the caller's own user, clones it before the
// program starts) and has the mount layer show it read-only over
// /etc/resolv.conf (resolved: a symlink there is followed to the file the
// resolver reads). It returns the directory, which the caller removes. A
// host without /etc/resolv.conf gets none: resolvers then ask 127.0.0.1
// anyway (glibc's, musl's and Go's default).
func withResolvConf(rc *spec.Resolved) (string, error) {
	at, err := filepath.EvalSymlinks("/etc/resolv.conf")
	if err != nil {
		return "", nil
	}
	if fi, err := os.Stat(at); err != nil || !fi.Mode().IsRegular() {
		return "", nil
	}
	// Named as a Run's temporary directory is (RunTempPattern): a caller
	// killed before it removed the directory leaves it for the next Run's
	// sweep of dead callers' directories.
	dir, err := os.MkdirTemp("", RunTempPattern())
	if err != nil {
		return "", fmt.Errorf("generated resolv.conf: %w", err)
	}
	f := filepath.Join(dir, "resolv.conf")
	if err := os.WriteFile(f, []byte(resolvConf), 0o644); err != nil {
		os.RemoveAll(dir)
		return "", fmt.Errorf("generated resolv.conf: %w", err)
	}
	rc.Resolver, rc.ResolverAt = f, at
	return dir, nil
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

// listenInbound listens on 127.0.0.1 at each port, for the program's
// listeners of the same port: all or none.
func listenInbound(ports []uint16) ([]net.Listener, error) {
	var ls []net.Listener
	for _, port := range ports {
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(int(port))))
		if err != nil {
			closeAll(ls)
			return nil, fmt.Errorf("inbound port %d on the caller's loopback (AllowedTCPBind under the egress namespace): %w", port, err)
		}
		ls = append(ls, l)
	}
	return ls, nil
}

func closeAll(ls []net.Listener) {
	for _, l := range ls {
		l.Close()
	}
}

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
		pick(len(e.anyPort) > 0, ". Any-port entries ("+strings.Join(e.anyPort, ", ")+") are reached directly only on the ports above, on any port only through the proxy (see "+spec.FeatureTCPAnyPort+")", "")
}

// transparentClients is EgressPlan.Clients with the transparent path.
const transparentClients = "every TCP client, as it dials (no proxy awareness needed); UDP: DNS queries only (to port 53 of any address), answered by the caller for the listed names"
