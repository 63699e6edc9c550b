package linux

// The egress layer's plan, pure: from the Config alone (and the namespace
// probe, injected through netNamespacesAvailable) whether host entries are
// enforced by a network namespace and the caller's proxy under
// WrapCommand and Run, and what the plan reports (see egress_linux.go for
// the whole path, and the parent's half that serves it).

import (
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/openparallax/sandbox/internal/egress"
	"github.com/openparallax/sandbox/internal/spec"
)

// egressPortBase is the proxy's port inside the namespace, unless the
// Config lets the program bind it (then the next free one): fixed, so
// that the plan can name the address the program will see. Nothing else
// listens in a new namespace.
const egressPortBase = 3128

var loopbackRange = netip.MustParsePrefix("127.0.0.0/8")

// egressPlan is how a Config's host entries are enforced under WrapCommand
// and Run.
type egressPlan struct {
	hosts []string // the host entries, "host:port" or "host:*"
	// names are the DNS names among the hosts ("localhost" included),
	// once each: the only names the namespace's resolver answers.
	names []string
	// anyPort are the host entries for every port ("host:*"): the proxy
	// serves them on any port, the transparent path only on the ports
	// other entries list (see addAnyPort).
	anyPort []string
	// on: a network namespace and the proxy enforce them.
	on    bool
	port  uint16
	allow *egress.Allowlist
	// transparent: the ports of the transparent path (see
	// egress_transparent.go), when it is used; else tnote says why
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
		if ep.Named() && !slices.Contains(e.names, ep.Host) {
			e.names = append(e.names, ep.Host)
		}
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
// caller's loopback (localhost, 127.0.0.0/8, ::1, or a range that holds
// one of them) on a port the program may
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
		if r, ok := ep.Range(); ok && (r.Overlaps(loopbackRange) || r.Contains(netip.IPv6Loopback())) {
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
				" (the transparent path for every client is not used: " + e.tnote + ")" + e.rangeNote()}, true
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
				", answers DNS (UDP port 53, any address) " + e.dnsScope() + ", and serves the proxy " + e.addr().String(),
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
