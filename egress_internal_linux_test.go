//go:build linux

package sandbox

// The egress layer's decisions as data: which Configs get the namespace
// and the proxy, what the plan says otherwise, and the environment the
// program gets.

import (
	"errors"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
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
	plan := func(t *testing.T, cfg Config) (egressPlan, Plan) {
		t.Helper()
		rc, err := resolve(cfg)
		if err != nil {
			t.Fatal(err)
		}
		e := egressPlanFor(rc)
		p := Plan{Available: true}
		e.addTo(&p)
		return e, p
	}
	feature := func(p Plan) (Enforcement, bool) {
		for _, f := range p.Features {
			if f.Feature == FeatureTCPHost {
				return f, true
			}
		}
		return Enforcement{}, false
	}

	defer avail(true)()
	for _, c := range []struct {
		name    string
		connect []string
		bind    []uint16
		mode    string // "" for no Plan.Egress
		port    uint16
		reason  string
	}{
		{"no TCP", nil, nil, "", 0, ""},
		{"port only", []string{"*:443"}, nil, "", 0, ""},
		{"hosts", []string{"example.com:443", "localhost:8080", "192.0.2.1:22"}, nil, EgressProxy, 3128, ""},
		{"proxy port bindable", []string{"example.com:443"}, []uint16{3128, 3129}, EgressProxy, 3130, ""},
		{"mixed", []string{"example.com:443", "*:80"}, nil, EgressPortOnly, 0, "*:80"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e, p := plan(t, Config{AllowedTCPConnect: c.connect, AllowedTCPBind: c.bind})
			f, hasF := feature(p)
			switch {
			case c.mode == "":
				if p.Egress != nil || hasF || e.on {
					t.Errorf("Plan.Egress %+v, feature %v, on %v: want none", p.Egress, hasF, e.on)
				}
			case p.Egress == nil || p.Egress.Mode != c.mode:
				t.Errorf("Plan.Egress %+v, want mode %s", p.Egress, c.mode)
			case c.mode == EgressProxy:
				if !e.on || e.port != c.port || p.Egress.Proxy != "127.0.0.1:"+strconv.Itoa(int(c.port)) || !f.Enforced || f.Scope != ScopeCommand {
					t.Errorf("proxy mode: on %v port %d, Plan.Egress %+v, feature %+v", e.on, e.port, p.Egress, f)
				}
			default:
				if e.on || f.Enforced || f.Scope != ScopeCommand || !strings.Contains(p.Egress.Reason, c.reason) || !strings.Contains(f.Detail, c.reason) {
					t.Errorf("port-only: on %v, Plan.Egress %+v, feature %+v; want the reason to name %q", e.on, p.Egress, f, c.reason)
				}
			}
		})
	}

	t.Run("describe", func(t *testing.T) {
		// PlanFor's plan: the WrapCommand/Run entry first, which
		// Describe (written for a program started with Run) reads.
		p, err := PlanFor(Config{AllowedTCPConnect: []string{"example.com:443"}})
		if err != nil {
			t.Fatal(err)
		}
		if !p.Available {
			t.Skip("no sandbox here")
		}
		var scopes []string
		for _, f := range p.Features {
			if f.Feature == FeatureTCPHost {
				scopes = append(scopes, f.Scope)
			}
		}
		if !slices.Equal(scopes, []string{ScopeCommand, ScopeApplySelf}) {
			t.Errorf("tcp_connect_host entries: scopes %v, want command then apply_self", scopes)
		}
		if d := p.Describe(); strings.Contains(d, "Only the ports are enforced") {
			t.Errorf("Describe with the proxy in force says hosts are not enforced:\n%s", d)
		}
	})

	t.Run("no network namespaces", func(t *testing.T) {
		defer avail(false)()
		cfg := Config{AllowedTCPConnect: []string{"example.com:443"}}
		e, p := plan(t, cfg)
		f, _ := feature(p)
		if e.on || p.Egress == nil || p.Egress.Mode != EgressPortOnly || !strings.Contains(p.Egress.Reason, "refused (test)") ||
			f.Enforced || f.Hint != "a remedy" {
			t.Errorf("Plan.Egress %+v, feature %+v: want port-only with the probe's reason and remedy", p.Egress, f)
		}
		if kernel().abi < 1 {
			t.Skip("no Landlock here: WrapCommand fails before egress")
		}
		cmd := exec.Command("/bin/true")
		if err := New().WrapCommand(cmd, cfg); err != nil {
			t.Fatal(err)
		}
		if EgressOf(cmd) != nil || cmd.SysProcAttr != nil && cmd.SysProcAttr.Cloneflags&syscall.CLONE_NEWNET != 0 {
			t.Errorf("port-only WrapCommand: EgressOf %v, SysProcAttr %+v: want no proxy and no network namespace", EgressOf(cmd), cmd.SysProcAttr)
		}
		cfg.Strict = true
		cmd = exec.Command("/bin/true")
		if err := New().WrapCommand(cmd, cfg); !errors.Is(err, ErrNotEnforced) || !strings.Contains(err.Error(), "tcp_connect_host") {
			t.Errorf("Strict: %v, want ErrNotEnforced naming tcp_connect_host", err)
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
