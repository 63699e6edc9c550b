package egress

import (
	"net/netip"
	"slices"
	"testing"
)

func TestEnv(t *testing.T) {
	addr := netip.MustParseAddrPort("127.0.0.1:3128")
	env := Env(addr, mustAllow(t, Rule{Host: "github.com", Port: 443}))
	for _, want := range []string{
		"HTTP_PROXY=http://127.0.0.1:3128", "http_proxy=http://127.0.0.1:3128",
		"HTTPS_PROXY=http://127.0.0.1:3128", "https_proxy=http://127.0.0.1:3128",
		"ALL_PROXY=socks5h://127.0.0.1:3128", "all_proxy=socks5h://127.0.0.1:3128",
		"NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1",
		"NODE_USE_ENV_PROXY=1",
	} {
		if !slices.Contains(env, want) {
			t.Errorf("Env lacks %s: %v", want, env)
		}
	}
	if len(env) != 9 {
		t.Errorf("Env = %v, want 9 variables", env)
	}
	for _, r := range []Rule{{Host: "localhost", Port: 8080}, {Host: "127.0.0.1", Port: 8080}, {Host: "::1", Port: 8080}} {
		env := Env(addr, mustAllow(t, Rule{Host: "github.com", Port: 443}, r))
		if !slices.Contains(env, "NO_PROXY=") || !slices.Contains(env, "no_proxy=") {
			t.Errorf("with %v allowed, NO_PROXY still bypasses the proxy for loopback: %v", r, env)
		}
	}
	if env := Env(netip.MustParseAddrPort("[::1]:3128"), nil); !slices.Contains(env, "HTTP_PROXY=http://[::1]:3128") {
		t.Errorf("IPv6: %v", env)
	}
}
