package linux

// The egress layer's decisions as data: which Configs get the namespace
// and the proxy, what the plan says otherwise, and the environment the
// program gets.

import (
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/openparallax/sandbox/internal/spec"
)

func TestEgressPlanAsData(t *testing.T) {
	avail := func(ok bool) func() {
		old := netNamespacesAvailable
		netNamespacesAvailable = func() (bool, string, string) {
			if ok {
				return true, "", ""
			}
			return false, "clone(CLONE_NEWNET) refused (test)", "a remedy"
		}
		return func() { netNamespacesAvailable = old }
	}
	plan := func(t *testing.T, cfg Config) (egressPlan, spec.Plan) {
		t.Helper()
		rc, err := resolve(cfg)
		if err != nil {
			t.Fatal(err)
		}
		e := egressPlanFor(rc)
		p := spec.Plan{Available: true}
		e.addTo(&p)
		return e, p
	}
	feature := func(p spec.Plan) (spec.Enforcement, bool) {
		for _, f := range p.Features {
			if f.Feature == spec.FeatureTCPHost {
				return f, true
			}
		}
		return spec.Enforcement{}, false
	}

	defer avail(true)()
	tavail := func(ok bool) {
		transparentAvailable = func() (bool, string) {
			if ok {
				return true, ""
			}
			return false, "the transparent path is unavailable here: no IPv6 (test)"
		}
	}
	defer func(old func() (bool, string)) { transparentAvailable = old }(transparentAvailable)
	for _, c := range []struct {
		name    string
		connect []string
		bind    []uint16
		mode    string // "" for no Plan.Egress
		port    uint16
		reason  string
		noTrans bool     // the transparent path's probe fails
		ports   []uint16 // the transparent path's
	}{
		{name: "no TCP"},
		{name: "port only", connect: []string{"*:443"}},
		{name: "hosts", connect: []string{"example.com:443", "localhost:8080", "192.0.2.1:22"}, mode: spec.EgressTransparent, port: 3128, ports: []uint16{22, 443, 8080}},
		{name: "proxy port bindable", connect: []string{"example.com:443"}, bind: []uint16{3128, 3129}, mode: spec.EgressTransparent, port: 3130, ports: []uint16{443}},
		{name: "proxy port is a destination", connect: []string{"example.com:3128", "127.0.0.1:3129"}, mode: spec.EgressTransparent, port: 3130, ports: []uint16{3128, 3129}},
		{name: "transparent path unavailable", connect: []string{"example.com:443"}, mode: spec.EgressProxy, port: 3128, noTrans: true, reason: "no IPv6 (test)"},
		// Another host on a port the program binds: the proxy alone
		// (localhost on that port is refused: "loopback port also
		// bound" below).
		{name: "a destination port also bound", connect: []string{"example.com:8080"}, bind: []uint16{8080}, mode: spec.EgressProxy, port: 3128,
			reason: "port 8080 is both an allowed destination and a port the program may bind"},
		{name: "mixed", connect: []string{"example.com:443", "*:80"}, mode: spec.EgressPortOnly, reason: "*:80"},
	} {
		t.Run(c.name, func(t *testing.T) {
			tavail(!c.noTrans)
			e, p := plan(t, Config{AllowedTCPConnect: c.connect, AllowedTCPBind: c.bind})
			f, hasF := feature(p)
			switch {
			case c.mode == "":
				if p.Egress != nil || hasF || e.on {
					t.Errorf("Plan.Egress %+v, feature %v, on %v: want none", p.Egress, hasF, e.on)
				}
			case p.Egress == nil || p.Egress.Mode != c.mode:
				t.Errorf("Plan.Egress %+v, want mode %s", p.Egress, c.mode)
			case c.mode == spec.EgressProxy || c.mode == spec.EgressTransparent:
				if !e.on || e.port != c.port || p.Egress.Proxy != "127.0.0.1:"+strconv.Itoa(int(c.port)) || !f.Enforced || f.Scope != spec.ScopeCommand {
					t.Errorf("%s mode: on %v port %d, Plan.Egress %+v, feature %+v", c.mode, e.on, e.port, p.Egress, f)
				}
				if !slices.Equal(e.transparent, c.ports) || !strings.Contains(p.Egress.Reason, c.reason) || !strings.Contains(f.Detail, c.reason) {
					t.Errorf("%s mode: transparent ports %v (want %v), reason %q, detail %q; want the reason %q", c.mode, e.transparent, c.ports, p.Egress.Reason, f.Detail, c.reason)
				}
				if c.mode == spec.EgressTransparent && (!strings.Contains(f.Detail, "refused by Landlock (EACCES)") || !strings.Contains(p.Egress.Clients, "every TCP client")) {
					t.Errorf("transparent mode: the plan must say which clients work and that other ports never reach the caller: %q, %q", f.Detail, p.Egress.Clients)
				}
			default:
				if e.on || f.Enforced || f.Scope != spec.ScopeCommand || !strings.Contains(p.Egress.Reason, c.reason) || !strings.Contains(f.Detail, c.reason) {
					t.Errorf("port-only: on %v, Plan.Egress %+v, feature %+v; want the reason to name %q", e.on, p.Egress, f, c.reason)
				}
			}
		})
	}

	t.Run("inbound", func(t *testing.T) {
		tavail(true)
		many := make([]uint16, 300)
		for i := range many {
			many[i] = uint16(9000 + i)
		}
		for _, c := range []struct {
			bind  []uint16
			root  bool
			ports []uint16
			pool  int
			why   string
		}{
			{[]uint16{8080, 0}, true, []uint16{8080}, 0, "port 0"},
			{[]uint16{8080}, false, []uint16{8080}, 64, ""},
			{[]uint16{8080, 0, 8081}, false, []uint16{8080, 8081}, 64, "port 0"},
			{many[:5], false, many[:5], 51, ""}, // 256/5: the total cap
			{many, false, nil, 0, "more than 256 ports"},
			{many, true, many, 0, ""},
			{nil, true, nil, 0, ""},
			{nil, false, nil, 0, ""},
		} {
			ports, pool, why := inboundPorts(c.bind, c.root)
			if !slices.Equal(ports, c.ports) || pool != c.pool || !strings.Contains(why, c.why) || (c.why == "") != (why == "") {
				t.Errorf("inboundPorts(%d ports, root %v): %d ports, pool %d, %q; want %d, %d and %q", len(c.bind), c.root, len(ports), pool, why, len(c.ports), c.pool, c.why)
			}
		}
		e, p := plan(t, Config{AllowedTCPConnect: []string{"example.com:443"}, AllowedTCPBind: []uint16{8080}})
		want := "the caller listens on 127.0.0.1 at ports 8080"
		if e.poolPer > 0 {
			want += " and relays each connection to the program's port 127.0.0.1:PORT there (whoever can reach the caller's loopback reaches it; " +
				"a listener on [::1] only is not reached), at most 64 at once per port, through sockets the sandbox makes in that namespace " +
				"before the program starts (the caller is not root, so it cannot enter it): 64 per port, one per connection, so at most 64 connections per port"
		}
		if len(e.inbound) == 0 || e.poolSize() != 64*len(e.inbound) && os.Geteuid() != 0 {
			t.Errorf("as uid %d: inbound ports %v, pool %d: want port 8080 served (a pool of 64 unless root)", os.Geteuid(), e.inbound, e.poolSize())
		}
		found := false
		for _, f := range p.Features {
			found = found || f.Feature == spec.FeatureTCPBind && f.Scope == spec.ScopeCommand && strings.Contains(f.Detail, want)
		}
		if !found {
			t.Errorf("no tcp_bind entry for WrapCommand/Run saying %q: %+v", want, p.Features)
		}
	})

	t.Run("loopback port also bound", func(t *testing.T) {
		// Issue 28's decision: a Config that binds P and connects to
		// the caller's localhost:P is refused by the plan under the
		// egress namespace (the program's own listener and the inbound
		// relay hold P there); ApplySelf, in the caller's namespace,
		// keeps it; an any-port entry and another host on P are no
		// conflict.
		tavail(true)
		for _, c := range []struct {
			connect []string
			refused string
		}{
			{[]string{"localhost:8080", "example.com:443"}, "localhost:8080"},
			{[]string{"127.0.0.1:8080"}, "127.0.0.1:8080"},
			{[]string{"127.0.0.2:8080"}, "127.0.0.2:8080"},
			{[]string{"[::1]:8080"}, "[::1]:8080"},
			{[]string{"example.com:8080"}, ""},
			{[]string{"localhost:*", "example.com:443"}, ""},
			{[]string{"localhost:8081"}, ""},
		} {
			cfg := Config{AllowedTCPConnect: c.connect, AllowedTCPBind: []uint16{8080}}
			e, p := plan(t, cfg)
			f, _ := feature(p)
			err := e.loopBindError()
			var ce *spec.ConfigError
			if c.refused == "" {
				if err != nil || strings.HasPrefix(f.Detail, "WrapCommand/Run: refused:") {
					t.Errorf("%v: %v, entry %q: want no refusal", c.connect, err, f.Detail)
				}
				continue
			}
			if !errors.As(err, &ce) || ce.Field != "allowed_tcp_connect" || ce.Value != c.refused || f.Enforced ||
				!strings.HasPrefix(f.Detail, "WrapCommand/Run: refused:") {
				t.Errorf("%v: %v, entry %+v: want a ConfigError for %s and the entry not enforced, saying refused", c.connect, err, f, c.refused)
			}
		}
	})

	// "describe": the root package's TestEgressPlanDescribed.

	t.Run("no network namespaces", func(t *testing.T) {
		defer avail(false)()
		cfg := Config{AllowedTCPConnect: []string{"example.com:443"}}
		e, p := plan(t, cfg)
		f, _ := feature(p)
		if e.on || p.Egress == nil || p.Egress.Mode != spec.EgressPortOnly || !strings.Contains(p.Egress.Reason, "refused (test)") ||
			f.Enforced || f.Hint != "a remedy" {
			t.Errorf("Plan.Egress %+v, feature %+v: want port-only with the probe's reason and remedy", p.Egress, f)
		}
	})
}

func TestEgressProxyEnv(t *testing.T) {
	rc, err := resolve(Config{AllowedTCPConnect: []string{"example.com:443"}})
	if err != nil {
		t.Fatal(err)
	}
	e := egressPlanFor(rc)
	if !e.on {
		t.Skipf("no network namespaces here: %s", e.reason)
	}
	env := proxyEnv([]string{"PATH=/bin", "https_proxy=http://corp:8080", "No_Proxy=corp", "HOME=/h"}, e)
	want := []string{"PATH=/bin", "HOME=/h",
		"HTTP_PROXY=http://127.0.0.1:3128", "http_proxy=http://127.0.0.1:3128",
		"HTTPS_PROXY=http://127.0.0.1:3128", "https_proxy=http://127.0.0.1:3128",
		"ALL_PROXY=socks5h://127.0.0.1:3128", "all_proxy=socks5h://127.0.0.1:3128",
		"NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1", "NODE_USE_ENV_PROXY=1"}
	if !slices.Equal(env, want) {
		t.Errorf("proxyEnv:\n got %q\nwant %q", env, want)
	}
}
