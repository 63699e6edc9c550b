//go:build linux

package linux

// The parent's half of egress by host name under WrapCommand and Run (the
// child's half is the Go trampoline's network step, internal/trampoline's
// net_linux.go; the proxy is internal/egress).
//
//  1. egressPlanFor decides, from the Config alone and the namespace probe,
//     whether host entries are enforced by a namespace and a proxy, and if
//     not, why not (PlanFor reports it, Strict refuses it).
//  2. startEgress (from wrapLinux) makes the socket pair whose child end the
//     child inherits, a Proxy with the Config's allowlist, and a goroutine
//     that receives the listener the child makes in its namespace and
//     serves the proxy on it.
//  3. The program's environment gets the proxy variables; Landlock lets it
//     connect to the proxy's port only (inside its namespace nothing else
//     is reachable anyway: lo only, no route).
//  4. Run closes the proxy when the process tree is gone; a WrapCommand
//     caller through EgressOf(cmd).Close.

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/openparallax/sandbox/internal/egress"
	"github.com/openparallax/sandbox/internal/spec"
	"github.com/openparallax/sandbox/internal/trampoline"
)

// egressPortBase is the proxy's port inside the namespace, unless the
// Config lets the program bind it (then the next free one): fixed, so
// that the plan can name the address the program will see. Nothing else
// listens in a new namespace.
const egressPortBase = 3128

// egressPlan is how a Config's host entries are enforced under WrapCommand
// and Run.
type egressPlan struct {
	hosts []string // the host entries, "host:port" or "host:*"
	// anyPort are the host entries for every port ("host:*"): the proxy
	// serves them on any port, the transparent path only on the ports
	// other entries list (see addAnyPort).
	anyPort []string
	// on: a network namespace and the proxy enforce them.
	on    bool
	port  uint16
	allow *egress.Allowlist
	// transparent: the ports of the transparent path (see
	// egress_transparent_linux.go), when it is used; else tnote says why
	// not (the proxy alone then serves the program).
	transparent []uint16
	tnote       string
	bind        []uint16 // the Config's bind ports
	// inbound: the bind ports the caller serves on its own loopback
	// (inboundPorts); poolPer the size of each one's inbound pool (0: the
	// caller is root and uses setns instead); inNote why the rest are not.
	inbound []uint16
	poolPer int
	inNote  string
	// Otherwise why not, and the remedy (hosts fall back to port rules).
	reason, hint string
	// loopBind is a connect entry to the caller's loopback on a port the
	// program may also bind (loopbackBindConflict), which WrapCommand and
	// Run refuse: "" when there is none.
	loopBind string
}

// egressPlanFor decides the egress mode of rc.
func egressPlanFor(rc *spec.Resolved) egressPlan {
	var e egressPlan
	var rules []egress.Rule
	var anyHost []string
	for _, ep := range rc.Connect {
		if ep.AnyHost() {
			anyHost = append(anyHost, ep.String())
			continue
		}
		e.hosts = append(e.hosts, ep.String())
		if ep.AnyPort {
			e.anyPort = append(e.anyPort, ep.String())
		}
		rules = append(rules, egress.Rule{Host: ep.Host, Port: ep.Port, AnyPort: ep.AnyPort})
	}
	if len(e.hosts) == 0 {
		return e
	}
	if len(anyHost) > 0 {
		// Inside the namespace nothing is reachable but the proxy, so a
		// port rule could be honoured only by letting the proxy serve
		// any host on that port, which is the port rule's meaning but
		// not Landlock's enforcement of it; keeping one mode per Config
		// keeps the plan simple to read.
		e.reason = "mixed with port-only entries (" + strings.Join(anyHost, ", ") + "), which the namespace would cut off: every entry keeps Landlock's port rule, and " +
			strings.Join(e.hosts, ", ") + " allow any host on those ports"
		e.hint = `list hosts only (the proxy then enforces them), or write "*:PORT" for the host entries too`
		return e
	}
	allow, err := egress.NewAllowlist(rules)
	if err != nil {
		// ParseEndpoint's canonical form is the allowlist's: this is a
		// bug, and the mode falls back to what is enforced without it.
		e.reason = "the proxy's allowlist refused the entries: " + err.Error()
		return e
	}
	if ok, reason, hint := netNamespacesAvailable(); !ok {
		e.reason, e.hint = "network namespaces are unavailable here: "+reason, hint
		return e
	}
	e.on, e.allow = true, allow
	e.port = egressPortBase
	for slices.Contains(rc.Bind, e.port) || slices.ContainsFunc(rc.Connect, func(ep spec.Endpoint) bool { return !ep.AnyPort && ep.Port == e.port }) {
		e.port++
	}
	e.transparent, e.tnote = transparentPorts(rc)
	e.bind = rc.Bind
	e.inbound, e.poolPer, e.inNote = inboundPorts(rc.Bind, os.Geteuid() == 0)
	e.loopBind = loopbackBindConflict(rc.Connect, rc.Bind)
	return e
}

// loopbackBindConflict returns the first connect entry that names the
// caller's loopback (localhost, 127.0.0.0/8, ::1) on a port the program may
// also bind, or "". Under the egress namespace the program's own listener
// on P is in its namespace, and the caller's loopback port P serves the
// inbound relay to it: such an entry would mean the caller's service on P
// to the user and the program's own listener (or the relay back into it)
// to the sandbox, so WrapCommand and Run refuse the Config, and the plan
// says why. Any-port entries ("localhost:*") are not refused: they mean
// every port, of which P is then the program's own.
func loopbackBindConflict(connect []spec.Endpoint, bind []uint16) string {
	for _, ep := range connect {
		if ep.AnyPort || !slices.Contains(bind, ep.Port) {
			continue
		}
		if a, err := netip.ParseAddr(ep.Host); ep.Host == "localhost" || (err == nil && a.IsLoopback()) {
			return ep.String()
		}
	}
	return ""
}

// loopBindError is WrapCommand's and Run's refusal of e.loopBind.
func (e egressPlan) loopBindError() error {
	if !e.on || e.loopBind == "" {
		return nil
	}
	return &spec.ConfigError{Field: "allowed_tcp_connect", Value: e.loopBind,
		Reason: "the program may also bind this port (allowed_tcp_bind): in its network namespace its own listener holds it, and the caller's " +
			"loopback port serves the inbound relay to that listener, so the entry cannot name the caller's service; use another port for one of the two"}
}

// addr is the proxy's address inside the namespace.
func (e egressPlan) addr() netip.AddrPort {
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), e.port)
}

// feature reports tcp_connect_host for WrapCommand and Run (ApplySelf's
// entry is linuxPlan's: it never enforces host names, having no namespace
// of its own to leave). ok is false when the Config names no host.
func (e egressPlan) feature() (spec.Enforcement, bool) {
	if len(e.hosts) == 0 {
		return spec.Enforcement{}, false
	}
	list := strings.Join(e.hosts, ", ")
	if err := e.loopBindError(); err != nil {
		return spec.Enforcement{Feature: spec.FeatureTCPHost, Scope: spec.ScopeCommand,
			Detail: "WrapCommand/Run: refused: " + err.Error(), Hint: "connect to the caller's service on a port the program does not bind"}, true
	}
	if e.on && len(e.transparent) > 0 {
		return spec.Enforcement{Feature: spec.FeatureTCPHost, Scope: spec.ScopeCommand, Enforced: true, Detail: e.transparentDetail()}, true
	}
	if e.on {
		return spec.Enforcement{Feature: spec.FeatureTCPHost, Scope: spec.ScopeCommand, Enforced: true,
			Detail: "WrapCommand/Run: a network namespace with only loopback, and a proxy served by the caller at " + e.addr().String() +
				" (HTTP CONNECT, absolute-URI HTTP, SOCKS5 with host names) that allows only " + list +
				" and refuses names that resolve to loopback, private or link-local addresses; programs that ignore the proxy variables cannot connect anywhere" +
				" (the transparent path for every client is not used: " + e.tnote + ")"}, true
	}
	return spec.Enforcement{Feature: spec.FeatureTCPHost, Scope: spec.ScopeCommand,
		Detail: "WrapCommand/Run: host names are not enforced: " + e.reason, Hint: e.hint}, true
}

// addTo adds e to a plan: WrapCommand's and Run's, or PlanFor's.
func (e egressPlan) addTo(plan *spec.Plan) {
	f, ok := e.feature()
	if !ok {
		return
	}
	if !plan.Available {
		f.Enforced, f.Detail, f.Hint = false, "sandbox unavailable: "+plan.Reason, ""
	}
	// Before ApplySelf's entry: Plan.Describe, written for a program
	// started with Run, reads a feature's first entry.
	i := slices.IndexFunc(plan.Features, func(x spec.Enforcement) bool { return x.Feature == spec.FeatureTCPHost })
	if i < 0 {
		i = len(plan.Features)
	}
	plan.Features = slices.Insert(plan.Features, i, f)
	if in, ok := e.inboundFeature(); ok && plan.Available {
		plan.Features = append(plan.Features, in)
	}
	e.addAnyPort(plan)
	plan.Egress = e.out()
	plan.Network = append(plan.Network, e.networkLines()...)
}

// egressPlanOut is e as Plan.Egress.
func (e egressPlan) out() *spec.EgressPlan {
	if len(e.hosts) == 0 {
		return nil
	}
	if e.on && len(e.transparent) > 0 {
		return &spec.EgressPlan{Mode: spec.EgressTransparent, Proxy: e.addr().String(), Hosts: e.hosts, AnyPort: e.anyPort,
			Clients: transparentClients + pick(len(e.anyPort) > 0, "; the any-port entries on any port only through the proxy (clients that use the proxy variables), directly on the listed ports only", "")}
	}
	if e.on {
		return &spec.EgressPlan{Mode: spec.EgressProxy, Proxy: e.addr().String(), Hosts: e.hosts, AnyPort: e.anyPort, Reason: e.tnote,
			Clients: "only clients that use the proxy variables; every other connection fails (nothing else is reachable)"}
	}
	return &spec.EgressPlan{Mode: spec.EgressPortOnly, Hosts: e.hosts, Reason: e.reason}
}

// egressTestNet, when set (tests), replaces the proxy's resolver and dialer:
// tests map names to local servers without touching /etc/hosts, and send
// nothing outside the loopback.
var egressTestNet struct {
	resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	dial    func(ctx context.Context, addr netip.AddrPort) (net.Conn, error)
}

// EgressProc is the caller's side of one namespace's proxy (what
// sandbox.Egress wraps): it serves from cmd.Start on, until Close.
type EgressProc struct {
	addr      string // as the program sees it
	proxy     *egress.Proxy
	parentEnd *os.File      // the caller's end of the handoff socket pair
	childEnd  *os.File      // inherited by the child; closed after Start
	done      chan struct{} // closed when the receiving goroutine returns

	mu         sync.Mutex
	childClose bool
	// resolvDir holds the generated resolv.conf (the transparent path):
	// removed at close.
	resolvDir string
	// inbound are the caller's listeners for the program's ports
	// (egressPlan.inbound, in order): closed at close.
	inbound []net.Listener
}

// startEgress makes the proxy of plan e and the handoff channel; the
// returned childEnd goes into the child's inherited files. Serving starts
// as soon as the child hands its listener over.
func startEgress(e egressPlan) (*EgressProc, error) {
	p, err := egress.New(egress.Options{Allow: e.allow, Resolve: egressTestNet.resolve, Dial: egressTestNet.dial})
	if err != nil {
		return nil, err
	}
	parentEnd, childEnd, err := egress.SocketPair()
	if err != nil {
		p.Close()
		return nil, err
	}
	g := &EgressProc{addr: e.addr().String(), proxy: p, parentEnd: parentEnd, childEnd: childEnd, done: make(chan struct{})}
	if g.inbound, err = listenInbound(e.inbound); err != nil {
		p.Close()
		parentEnd.Close()
		childEnd.Close()
		return nil, err
	}
	go func() {
		defer close(g.done)
		// No timeout: the wait ends when the child sends, when it dies
		// (once the caller's copy of the child's end is closed), or at
		// close, which shuts the socket down.
		// A failure (the child died before its network step, or close)
		// needs no report here: Run reports the child's own failure,
		// and the program never started.
		h, err := egress.ReceiveSockets(parentEnd, 1<<62, e.transparent, e.poolSize())
		if err != nil {
			closeAll(g.inbound)
			return
		}
		// The caller's copy of the child's end stays open until Run
		// closes it after Start, or until close: under WrapCommand,
		// cmd.Start may still be reading it here (the child runs
		// before Start returns).
		serveHandoff(p, h, g.inbound, e.inbound) // returns at close, and closes every socket
	}()
	return g, nil
}

// closeChildEnd closes the caller's copy of the child's end: once the
// child has started (Run, after cmd.Start), or at close.
func (g *EgressProc) closeChildEnd() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.childClose {
		g.childClose = true
		g.childEnd.Close()
	}
}

// Addr is the proxy's address as the program sees it, inside its network
// namespace ("127.0.0.1:PORT"), or "" when there is no proxy.
func (g *EgressProc) Addr() string { return g.addr }

// Denied returns the requests refused so far, oldest first (at most the
// first 1000; Dropped counts the rest). It still answers after Close.
func (g *EgressProc) Denied() []spec.DeniedRequest {
	ds := g.proxy.Denied()
	out := make([]spec.DeniedRequest, len(ds))
	for i, d := range ds {
		out[i] = spec.DeniedRequest{Time: d.Time, Protocol: d.Protocol, Host: d.Host, Port: d.Port, Reason: d.Reason, Detail: d.Detail}
	}
	return out
}

// Dropped returns how many refused requests Denied does not hold.
func (g *EgressProc) Dropped() int { return g.proxy.Dropped() }

// Close ends the proxy and its receiving goroutine, and releases every
// descriptor: the handoff channel and, through the proxy, the listener,
// which is the last reference to the namespace once its processes are
// gone.
func (g *EgressProc) Close() error {
	// Wake a receive still waiting (the child never started, or never
	// reached its network step): shutdown reaches the socket under the
	// receiver's duplicate of it.
	if rc, err := g.parentEnd.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { unix.Shutdown(int(fd), unix.SHUT_RDWR) })
	}
	g.proxy.Close()
	<-g.done
	g.proxy.Close() // a Serve that began after the first Close returned at once; wait for it anyway
	g.closeChildEnd()
	g.parentEnd.Close()
	closeAll(g.inbound)
	if g.resolvDir != "" {
		os.RemoveAll(g.resolvDir)
	}
	return nil
}

// proxyEnv replaces the proxy variables of env (in either case) with the
// sandbox's: a program's own proxy settings name addresses it cannot reach
// from its namespace.
func proxyEnv(env []string, e egressPlan) []string {
	ours := egress.Env(e.addr(), e.allow)
	names := map[string]bool{}
	for _, kv := range ours {
		k, _, _ := strings.Cut(kv, "=")
		names[strings.ToUpper(k)] = true
	}
	env = slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return names[strings.ToUpper(k)]
	})
	return append(env, ours...)
}

// egressLines are Plan.Network's lines for e.
func (e egressPlan) networkLines() []string {
	switch {
	case len(e.hosts) == 0:
		return nil
	case e.on && len(e.transparent) > 0:
		ports := []string{strconv.Itoa(int(e.port)) + " (the proxy)"}
		for _, p := range e.transparent {
			ports = append(ports, strconv.Itoa(int(p)))
		}
		return []string{
			"WrapCommand/Run: network namespace with only lo, every address local; the caller relays direct connections to " + strings.Join(e.hosts, ", ") +
				", answers DNS (UDP port 53, any address) for those names, and serves the proxy " + e.addr().String(),
			"WrapCommand/Run: Landlock connect only to ports " + strings.Join(ports, ", ") + " inside the namespace; other ports: EACCES in the kernel, never reaching the caller (not reported)",
			"WrapCommand/Run: UDP sockets allowed (seccomp); UDP reaches nothing but the caller's resolver",
		}
	case e.on:
		return []string{
			"WrapCommand/Run: network namespace with only lo; proxy " + e.addr().String() + " (served by the caller) allows " + strings.Join(e.hosts, ", "),
			"WrapCommand/Run: Landlock connect only to port " + strconv.Itoa(int(e.port)) + " (the proxy) inside the namespace",
		}
	}
	return []string{"WrapCommand/Run: host names not enforced (port rules only): " + e.reason}
}

var (
	netProbeOnce sync.Once
	netProbed    nsState
	// netNamespacesAvailable is netNamespaces; tests replace it to plan
	// for a machine without network namespaces.
	netNamespacesAvailable = netNamespaces
)

// netNamespaces reports whether WrapCommand and Run can start their child
// half in a new network namespace and hand the proxy's listener out of it
// here. The namespace layer's probe (namespaces) must succeed first; then,
// once per process, the Go trampoline is started as for a Config naming
// hosts (nsAttr with the network namespace), with no mounts and the
// network step for real: it brings lo up, listens, and hands the listener
// over, which the probe receives and closes. A network namespace can be
// refused where the others are not (a container's seccomp profile, an LSM),
// and lo can stay down without CAP_NET_ADMIN in it.
func netNamespaces() (ok bool, reason, hint string) {
	if s := namespaces(); !s.ok {
		return false, s.reason, s.hint
	}
	netProbeOnce.Do(func() { netProbed = probeNetNamespace() })
	return netProbed.ok, netProbed.reason, netProbed.hint
}

func probeNetNamespace() nsState { return probeNetStep(nil) }

// probeNetStep runs the network step with the transparent ports given
// (none: the proxy's listener only) in a throwaway namespace, and receives
// what it hands over.
func probeNetStep(transparent []uint16) nsState {
	parentEnd, childEnd, err := egress.SocketPair()
	if err != nil {
		return nsState{reason: "probe: " + err.Error()}
	}
	defer parentEnd.Close()
	p := &trampoline.Payload{Path: "/", FirstFD: 3, ErrFD: 3,
		Flags: trampoline.FlagNamespaces | trampoline.FlagProbe,
		Net:   trampoline.NetStep{FD: 4, Port: egressPortBase, Transparent: transparent}}
	var lerr error
	pr, err := runProbe("network-namespace-probe", p, true, []*os.File{childEnd}, func() {
		var h *egress.Handoff
		if h, lerr = egress.ReceiveSockets(parentEnd, 30*time.Second, transparent, 0); lerr == nil {
			h.Close()
		}
	})
	switch {
	case err != nil:
		return nsState{reason: "probe: " + err.Error()}
	case pr.startErr != nil:
		s := refusedNamespaces(pr.startErr, thisHost())
		s.reason = "with a network namespace: " + s.reason
		return s
	case pr.waitErr == nil && lerr == nil:
		return nsState{ok: true}
	case pr.waitErr == nil:
		return nsState{reason: "the network namespace's listener did not reach the caller: " + lerr.Error()}
	case pr.failure == nil:
		return nsState{reason: fmt.Sprintf("the network namespace probe's child failed (%v) without a report", pr.waitErr)}
	}
	s := nsState{reason: "the network namespace was created, but the network step failed: " + pr.failure.Error()}
	if pr.failure.Errno == syscall.EPERM || pr.failure.Errno == syscall.EACCES {
		s.reason += ": refused by a seccomp filter or an LSM, or no CAP_NET_ADMIN in the namespace"
		s.hint = "allow this program to create network namespaces (a container's seccomp profile or AppArmor), or run it outside the container"
	}
	return s
}
