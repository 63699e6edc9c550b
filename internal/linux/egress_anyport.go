package linux

// Any-port host entries ("host:*", issue 28's and issue 32's decisions)
// under WrapCommand and Run with the egress namespace.
//
// The transparent path makes one listener per port before the program
// starts, so it cannot serve a host on every port. What is enforced
// instead:
//
//   - the proxy (HTTP CONNECT, absolute-URI HTTP, SOCKS5) serves the host
//     on any port, host-exact: the allowlist matches any-port rules;
//   - a direct connection reaches the host only on the ports other
//     entries list (their listeners), and any other port is refused by
//     Landlock in the namespace (EACCES), unreported;
//   - Landlock handles TCP connect again inside the namespace (ApplySelf
//     cannot: see anyPortConnect), allowing only the proxy's port and the
//     listed ports.
//
// The plan reports the any-port entries as granted in part
// (tcp_connect_any_port, not enforced, ScopeCommand): the grant cannot be
// made for every client, so Strict refuses it, the conservative reading.
// A mechanism that could serve every port to direct clients host-exact
// (an sk_lookup BPF program, attached to the namespace by the caller,
// steering a connection to any port onto one listener) is not
// implemented: it needs CAP_BPF and CAP_NET_ADMIN in the caller (root
// only), and would serve only root callers; the plan reports the gap
// instead.

import (
	"slices"
	"strconv"
	"strings"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"github.com/openparallax/sandbox/internal/spec"
)

// restrictConnect sets the child's connect rules for the egress namespace:
// the proxy's port and the transparent path's ports only. An any-port entry
// left TCP connect unhandled in pol (buildLinuxPolicy); inside the namespace
// nothing needs it, so it is handled again where Landlock filters ports.
func (e egressPlan) restrictConnect(pol *linuxPolicy) {
	pol.Connect = []uint16{e.port}
	if pol.ABI >= 4 {
		pol.HandledNet |= ll.AccessNetConnectTCP
	}
	e.withTransparent(pol)
}

// connectPorts lists the ports Landlock lets the program connect to in the
// namespace: the proxy's, then the transparent path's.
func (e egressPlan) connectPorts() string {
	ps := []string{strconv.Itoa(int(e.port)) + " (the proxy)"}
	for _, p := range e.transparent {
		ps = append(ps, strconv.Itoa(int(p)))
	}
	return strings.Join(ps, ", ")
}

// addAnyPort adds to plan what the any-port entries become under
// WrapCommand and Run with the egress namespace (nothing without one:
// linuxPlan's tcp_connect, connect not handled, is then every entry
// point's). tcp_connect: linuxPlan's entry becomes ApplySelf's, and the
// namespace's goes first (Describe reads a feature's first entry).
// tcp_connect_any_port: granted in part, reported.
func (e egressPlan) addAnyPort(plan *spec.Plan) {
	if !e.on || len(e.anyPort) == 0 {
		return
	}
	list := strings.Join(e.anyPort, ", ")
	i := slices.IndexFunc(plan.Features, func(x spec.Enforcement) bool { return x.Feature == spec.FeatureTCPConnect && x.Scope == "" })
	if plan.Available && plan.Version >= 4 && i >= 0 {
		self := plan.Features[i]
		self.Scope, self.Detail = spec.ScopeApplySelf, "ApplySelf: "+self.Detail
		cmd := spec.Enforcement{Feature: spec.FeatureTCPConnect, Scope: spec.ScopeCommand, Enforced: true,
			Detail: "WrapCommand/Run: Landlock: TCP connect only to ports " + e.connectPorts() +
				" inside the network namespace (" + list + " reach the caller through the proxy's port)"}
		plan.Features[i] = self
		plan.Features = slices.Insert(plan.Features, i, cmd)
	}
	direct := "on no port (no other entry lists a port)"
	if e.tnote != "" && slices.ContainsFunc(e.hosts, func(h string) bool { return !strings.HasSuffix(h, ":*") }) {
		direct = "on no port (the transparent path is not used: " + e.tnote + ")"
	}
	if len(e.transparent) > 0 {
		direct = "only on ports " + ports(e.transparent) + " (listed by other entries)"
	}
	plan.Network = append(plan.Network, "WrapCommand/Run: "+list+": on any port through the proxy only; a direct connection reaches them "+direct)
	f := spec.Enforcement{Feature: spec.FeatureTCPAnyPort, Scope: spec.ScopeCommand,
		Detail: "WrapCommand/Run: granted in part: " + list + ": enforced host-exact, and reached on any port only through the proxy at " +
			e.addr().String() + " (HTTP CONNECT, absolute-URI HTTP, SOCKS5: clients that use the proxy variables); " +
			"a direct connection (a client that ignores the proxy) reaches them " + direct + ", and any other port fails in the namespace " +
			"(Landlock: EACCES) and is not reported: the transparent path makes one listener per port before the program starts and cannot hold every port",
		Hint: `list the ports direct clients need ("host:443") beside or instead of "host:*"; or use clients that read the proxy variables`}
	if !plan.Available {
		f.Detail = "sandbox unavailable: " + plan.Reason
		f.Hint = ""
	}
	plan.Features = append(plan.Features, f)
}
