//go:build linux

package sandbox_test

// An any-port entry ("localhost:*") under Run, enforced: the proxy serves
// the caller's loopback on a port no entry lists, to a proxy-aware client
// (curl with the proxy variables the sandbox sets); a direct connection to
// that port is refused by Landlock in the namespace (EACCES) and never
// reaches the server; the proxy refuses another loopback address
// (host-exact). Only loopback addresses are used.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openparallax/sandbox"
	"github.com/openparallax/sandbox/internal/childtest"
)

func TestEgressAnyPort(t *testing.T) { egressAnyPort(t) }

// As nobody: the unprivileged user namespace path of the child half.
func TestEgressAnyPortAsNobody(t *testing.T) {
	requireSandbox(t)
	if os.Geteuid() == 0 && !childtest.AsNobody(t) {
		return
	}
	egressAnyPort(t)
}

func egressAnyPort(t *testing.T) {
	requireSandbox(t)
	curl := "/usr/bin/curl"
	if _, err := os.Stat(curl); err != nil {
		t.Skipf("curl is not installed: %v", err)
	}
	// An HTTP server on an unlisted port that counts every connection.
	port, count := countingTCP(t, func(c net.Conn) {
		c.SetDeadline(time.Now().Add(20 * time.Second))
		req, err := http.ReadRequest(bufio.NewReader(c))
		if err != nil {
			return
		}
		fmt.Fprintf(c, "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nserved %s\n", req.URL.Path)
	})
	ps := strconv.Itoa(int(port))
	cfg := sandbox.Config{AllowedTCPConnect: []string{"localhost:*"}}
	requireEgress(t, cfg)

	// The plan: the proxy alone serves localhost:* (no listed port for
	// the transparent path), reported as granted in part; ApplySelf's
	// tcp_connect is not enforced.
	pl, err := sandbox.PlanFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if pl.Egress.Mode != sandbox.EgressProxy || len(pl.Egress.AnyPort) != 1 || pl.Egress.AnyPort[0] != "localhost:*" {
		t.Errorf("Plan.Egress %+v, want the proxy alone for localhost:*", pl.Egress)
	}
	var anyPort, selfConnect *sandbox.Enforcement
	for i, f := range pl.Features {
		switch {
		case f.Feature == sandbox.FeatureTCPAnyPort:
			anyPort = &pl.Features[i]
		case f.Feature == sandbox.FeatureTCPConnect && f.Scope == sandbox.ScopeApplySelf, f.Feature == sandbox.FeatureTCPConnect && f.Scope == "":
			selfConnect = &pl.Features[i]
		}
	}
	if anyPort == nil || anyPort.Enforced || anyPort.Scope != sandbox.ScopeCommand {
		t.Errorf("tcp_connect_any_port %+v, want a WrapCommand/Run entry, not enforced", anyPort)
	}
	if selfConnect == nil || selfConnect.Enforced || !strings.Contains(selfConnect.Detail, "any host on any port") {
		t.Errorf("ApplySelf's tcp_connect %+v, want not enforced (connect not handled)", selfConnect)
	}

	run := func(name string, args ...string) sandbox.RunResult {
		t.Helper()
		res, err := sandbox.Run(context.Background(), cfg, name, args, sandbox.RunOptions{
			Env: []string{"PATH=/usr/bin:/bin", quickExit}, Timeout: time.Minute})
		if err != nil {
			t.Fatalf("Run %s: %v\nstderr:\n%s", name, err, res.Stderr)
		}
		return res
	}

	// Direct: Landlock refuses the port in the kernel; nothing arrives.
	res := run(self(t), helperArg, "egress-godial", "127.0.0.1", ps)
	if res.ExitCode == 0 || !strings.Contains(string(res.Stderr), "permission denied") {
		t.Errorf("direct connect to 127.0.0.1:%s: exit %d, stderr %q; want EACCES", ps, res.ExitCode, res.Stderr)
	}
	if n := count.Load(); n != 0 {
		t.Fatalf("the server counted %d connections after the direct connect: it reached the caller", n)
	}

	// Through the proxy, as curl does with the variables: any port of
	// localhost, by name and by address.
	for _, host := range []string{"127.0.0.1", "localhost"} {
		res = run(curl, "-sS", "--max-time", "20", "http://"+net.JoinHostPort(host, ps)+"/anyport")
		if res.ExitCode != 0 || !strings.Contains(string(res.Stdout), "served /anyport") {
			t.Errorf("curl via the proxy to %s:%s: exit %d, stdout %q, stderr %q", host, ps, res.ExitCode, res.Stdout, res.Stderr)
		}
	}
	if n := count.Load(); n != 2 {
		t.Errorf("the server counted %d connections, want the 2 the proxy made", n)
	}

	// Host-exact: 127.0.0.2 is loopback, but not what localhost names.
	res = run(curl, "-sS", "--max-time", "20", "-o", "/dev/null", "-w", "%{http_code}", "http://127.0.0.2:"+ps+"/refused")
	found := false
	for _, d := range res.DeniedRequests {
		found = found || d.Host == "127.0.0.2" && d.Port == port
	}
	if strings.TrimSpace(string(res.Stdout)) != "403" || !found {
		t.Errorf("curl via the proxy to 127.0.0.2:%s: status %q, denials %+v; want 403 and a denial", ps, res.Stdout, res.DeniedRequests)
	}
	if n := count.Load(); n != 2 {
		t.Errorf("the server counted %d connections after the refused request, want 2", n)
	}
}

// Under ApplySelf an any-port entry leaves TCP connect unhandled, exactly
// as the plan says (tcp_connect not enforced): a connect to any port, on
// an address the entry does not name, is let through (ECONNREFUSED from
// a port with no listener, never EACCES), while bind stays handled (a
// port not granted: EACCES); Strict refuses the Config before anything is
// applied.
func TestApplySelfAnyPort(t *testing.T) {
	childtest.Run(t, func(t *testing.T) {
		requireABI(t, 4, "TCP port rules")
		cfg := sandbox.Config{AllowedTCPConnect: []string{"localhost:*"}, Strict: true}
		if err := sandbox.New().ApplySelf(cfg); !errors.Is(err, sandbox.ErrNotEnforced) || !strings.Contains(err.Error(), sandbox.FeatureTCPConnect+" (") {
			t.Fatalf("Strict ApplySelf with localhost:*: %v, want ErrNotEnforced naming tcp_connect", err)
		}
		free, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		freePort := free.Addr().(*net.TCPAddr).Port
		free.Close()
		cfg.Strict = false
		apply(t, cfg)
		c, err := net.DialTimeout("tcp", "127.0.0.2:1", 5*time.Second)
		if c != nil {
			c.Close()
		}
		wantErrno(t, "connect to 127.0.0.2:1 (no listener): let through, as the plan says", err, syscall.ECONNREFUSED)
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(freePort))
		if l != nil {
			l.Close()
		}
		wantErrno(t, "bind a port not granted", err, syscall.EACCES)
	})
}
