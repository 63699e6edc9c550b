package egress

import (
	"net/netip"
	"strings"
)

// Env returns the environment variables that point a sandboxed program at
// its proxy, listening on addr inside the program's network namespace:
// HTTP_PROXY and HTTPS_PROXY as http://addr, ALL_PROXY as socks5h://addr
// (the "h": the proxy resolves names, there is no DNS inside), each also in
// lower case (libcurl reads only http_proxy in lower case), NO_PROXY, and
// NODE_USE_ENV_PROXY=1.
//
// NO_PROXY lists the namespace's own loopback (localhost, 127.0.0.1, ::1),
// so that a program talking to a server it started itself is not sent to
// the proxy. When the allowlist names localhost or a loopback address (or a
// range holding one), the
// entry means the caller's loopback, which the program reaches only through
// the proxy: NO_PROXY is then empty, and such a program's own servers are
// reached through the proxy too (and refused unless allowed). Go programs
// never use a proxy for localhost or loopback addresses, whatever NO_PROXY
// says: they cannot reach the caller's loopback this way.
func Env(addr netip.AddrPort, allow *Allowlist) []string {
	http := "http://" + addr.String()
	socks := "socks5h://" + addr.String()
	noProxy := "localhost,127.0.0.1,::1"
	if allow != nil && allow.namesLoopback() {
		noProxy = ""
	}
	var env []string
	for _, kv := range [][2]string{
		{"HTTP_PROXY", http}, {"HTTPS_PROXY", http}, {"ALL_PROXY", socks}, {"NO_PROXY", noProxy},
	} {
		env = append(env, kv[0]+"="+kv[1], strings.ToLower(kv[0])+"="+kv[1])
	}
	// Node.js reads the variables only when asked to (recent releases;
	// older ones ignore this and cannot connect anywhere).
	return append(env, "NODE_USE_ENV_PROXY=1")
}

var loopbackRange4 = netip.MustParsePrefix("127.0.0.0/8")

// namesLoopback reports whether a rule names localhost or a loopback
// address (a range that holds one included).
func (a *Allowlist) namesLoopback() bool {
	if len(a.localhost) > 0 || a.localhostAny {
		return true
	}
	for addr := range a.addrsAny {
		if addr.IsLoopback() {
			return true
		}
	}
	for ap := range a.addrs {
		if ap.Addr().IsLoopback() {
			return true
		}
	}
	for _, r := range a.ranges {
		if r.p.Overlaps(loopbackRange4) || r.p.Contains(loopback6) {
			return true
		}
	}
	return false
}
