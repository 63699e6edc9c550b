//go:build linux

package sandbox_test

// An address range entry ("127.0.0.4/31:P") under Run, enforced by the
// egress layer for real clients: a server on 127.0.0.4, inside the range,
// is reached directly (a Go dial, python's socket.create_connection, curl
// without the proxy variables) and through the proxy (curl with them); a
// server on 127.0.0.6, just outside the range, on the same port, is
// refused by the egress layer (a reset and a reported denial on the
// direct path, 403 and a denial through the proxy), and counts no
// connection. Only 127.0.0.0/8 is used.

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/openparallax/sandbox"
	"github.com/openparallax/sandbox/internal/childtest"
)

func TestEgressRange(t *testing.T) { egressRange(t) }

// As nobody: the unprivileged user namespace path of the child half.
func TestEgressRangeAsNobody(t *testing.T) {
	requireSandbox(t)
	if os.Geteuid() == 0 && !childtest.AsNobody(t) {
		return
	}
	egressRange(t)
}

// servedOn listens on host:port (port 0: one the system picks) with an
// HTTP/1.0 server that answers "served HOST" and counts the connections it
// accepts. ok is false when the port is taken on that address.
func servedOn(t *testing.T, host string, port uint16) (uint16, *atomic.Int64, bool) {
	t.Helper()
	l, err := net.Listen("tcp", net.JoinHostPort(host, strconv.Itoa(int(port))))
	if err != nil {
		return 0, nil, false
	}
	t.Cleanup(func() { l.Close() })
	var n atomic.Int64
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			go func() {
				defer c.Close()
				c.SetDeadline(time.Now().Add(20 * time.Second))
				if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
					return
				}
				fmt.Fprintf(c, "HTTP/1.0 200 OK\r\nContent-Type: text/plain\r\n\r\nserved %s\n", host)
			}()
		}
	}()
	return uint16(l.Addr().(*net.TCPAddr).Port), &n, true
}

func egressRange(t *testing.T) {
	requireSandbox(t)
	// One port on both addresses: the range's entry names the port, so
	// only the address decides.
	var port uint16
	var in, out *atomic.Int64
	for range 20 {
		p, n, ok := servedOn(t, "127.0.0.4", 0)
		if !ok {
			t.Skip("cannot listen on 127.0.0.4 (loopback here is not all of 127.0.0.0/8)")
		}
		if _, m, ok := servedOn(t, "127.0.0.6", p); ok {
			port, in, out = p, n, m
			break
		}
	}
	if port == 0 {
		t.Fatal("no port free on both 127.0.0.4 and 127.0.0.6")
	}
	ps := strconv.Itoa(int(port))
	cfg := sandbox.Config{AllowedTCPConnect: []string{"127.0.0.4/31:" + ps}, AllowedExecPaths: existing("/usr/bin", "/bin"), AllowProcessSpawn: true}
	requireEgress(t, cfg)
	pl, err := sandbox.PlanFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if pl.Egress.Mode != sandbox.EgressTransparent {
		t.Skipf("the transparent path is not used here, direct clients cannot be tested: %s", pl.Egress.Reason)
	}
	if len(pl.Egress.Hosts) != 1 || pl.Egress.Hosts[0] != "127.0.0.4/31:"+ps {
		t.Errorf("Plan.Egress.Hosts %q, want the range", pl.Egress.Hosts)
	}

	pySock := `import socket,sys
s=socket.create_connection((sys.argv[1],int(sys.argv[2])),timeout=10)
s.sendall(b"GET /py HTTP/1.0\r\nHost: x\r\n\r\n")
print(s.recv(4096).decode())`
	curl := func(host string) []string {
		return []string{"/usr/bin/curl", "-sS", "--max-time", "20", "-w", "\ncode=%{http_code}\n", "http://" + net.JoinHostPort(host, ps) + "/c"}
	}
	for _, c := range []struct {
		name  string
		prog  string // the client program, which the test needs installed
		argv  func(host string) []string
		proxy bool // through the proxy: refused with 403, not a reset
	}{
		{"go dial", self(t), func(h string) []string { return []string{self(t), helperArg, "egress-godial", h, ps} }, false},
		{"python socket.create_connection", "/usr/bin/python3", func(h string) []string { return []string{"/usr/bin/python3", "-c", pySock, h, ps} }, false},
		{"curl without the proxy variables", "/usr/bin/curl", func(h string) []string { return append([]string{"/bin/sh", "-c", unsetProxy, "sh"}, curl(h)...) }, false},
		{"curl with the proxy variables", "/usr/bin/curl", curl, true},
	} {
		if _, err := os.Stat(c.prog); err != nil {
			t.Logf("%s: not tested, not installed (%v)", c.name, err)
			continue
		}
		before := in.Load()
		res := runIn(t, cfg, c.argv("127.0.0.4")[0], c.argv("127.0.0.4")[1:]...)
		if res.ExitCode != 0 || !strings.Contains(string(res.Stdout), "served 127.0.0.4") || in.Load() != before+1 {
			t.Errorf("%s → 127.0.0.4:%s (in the range): exit %d, stdout %q, stderr %q, %d connections; want served, one connection",
				c.name, ps, res.ExitCode, res.Stdout, res.Stderr, in.Load()-before)
		}

		res = runIn(t, cfg, c.argv("127.0.0.6")[0], c.argv("127.0.0.6")[1:]...)
		if strings.Contains(string(res.Stdout), "served") {
			t.Errorf("%s → 127.0.0.6:%s (outside the range): served: %q", c.name, ps, res.Stdout)
		}
		// The egress layer's refusal, not a missing listener: the
		// listener is there (and counts nothing, below); the direct
		// path resets the connection the caller accepted, the proxy
		// answers 403 to curl's absolute-URI GET; both report it.
		proto, refusal := "tcp", "reset by peer"
		switch {
		case c.proxy:
			proto, refusal = "http", "code=403"
		case strings.HasPrefix(c.name, "curl"):
			// When the reset arrives before curl writes, curl says
			// "Couldn't connect" (exit 7), as it would for
			// ECONNREFUSED; after, "reset by peer" (exit 56). The
			// denial, which only a connection the caller accepted can
			// make, tells the first from a missing listener.
			if strings.Contains(string(res.Stderr), "curl: (7)") {
				refusal = "curl: (7)"
			}
		}
		found := false
		for _, d := range res.DeniedRequests {
			found = found || d.Protocol == proto && d.Host == "127.0.0.6" && d.Port == port && d.Reason == "not-allowed"
		}
		if !found {
			t.Errorf("%s → 127.0.0.6:%s: DeniedRequests %+v, want a %s not-allowed refusal of 127.0.0.6:%s", c.name, ps, res.DeniedRequests, proto, ps)
		}
		if !strings.Contains(string(res.Stdout)+string(res.Stderr), refusal) {
			t.Errorf("%s → 127.0.0.6:%s: stdout %q, stderr %q, want %q", c.name, ps, res.Stdout, res.Stderr, refusal)
		}
	}
	if n := out.Load(); n != 0 {
		t.Errorf("the server on 127.0.0.6, outside the range, accepted %d connections, want 0", n)
	}
}

// An IPv6 range on the transparent path, with the one IPv6 loopback
// address: [::/127] holds ::1 and reaches a server there; [::2/127] does
// not, and the direct connection to ::1 is refused by the egress layer
// (reset, reported) while the server counts nothing.
func TestEgressRange6(t *testing.T) {
	requireSandbox(t)
	port, n, ok := servedOn(t, "::1", 0)
	if !ok {
		t.Skip("no ::1 here")
	}
	ps := strconv.Itoa(int(port))
	for _, c := range []struct {
		entry   string
		reached bool
	}{
		{"[::/127]:" + ps, true},
		{"[::2/127]:" + ps, false},
	} {
		cfg := sandbox.Config{AllowedTCPConnect: []string{c.entry}}
		requireEgress(t, cfg)
		if pl, _ := sandbox.PlanFor(cfg); pl.Egress.Mode != sandbox.EgressTransparent {
			t.Skipf("the transparent path is not used here, direct clients cannot be tested: %s", pl.Egress.Reason)
		}
		before := n.Load()
		res := runIn(t, cfg, self(t), helperArg, "egress-godial", "::1", ps)
		served := res.ExitCode == 0 && strings.Contains(string(res.Stdout), "served ::1")
		if served != c.reached || c.reached && n.Load() != before+1 {
			t.Errorf("%s: go dial [::1]:%s: exit %d, stdout %q, stderr %q; want reached %v", c.entry, ps, res.ExitCode, res.Stdout, res.Stderr, c.reached)
		}
		if c.reached {
			continue
		}
		found := false
		for _, d := range res.DeniedRequests {
			found = found || d.Protocol == "tcp" && d.Host == "::1" && d.Port == port && d.Reason == "not-allowed"
		}
		if !found || !strings.Contains(string(res.Stderr), "reset by peer") {
			t.Errorf("%s: stderr %q, DeniedRequests %+v; want a reset and a tcp not-allowed refusal of ::1", c.entry, res.Stderr, res.DeniedRequests)
		}
		if got := n.Load(); got != before {
			t.Errorf("%s: the server on ::1, outside the range, accepted %d connections", c.entry, got-before)
		}
	}
}

// Under ApplySelf a range is what the plan says: its port is Landlock's
// rule, its addresses are not enforced (Strict refuses the Config): a
// connect to an address outside the range on that port is let through,
// a connect to another port is refused in the kernel (EACCES).
func TestApplySelfRange(t *testing.T) {
	childtest.Run(t, func(t *testing.T) {
		requireABI(t, 4, "TCP port rules")
		port, _, ok := servedOn(t, "127.0.0.6", 0)
		if !ok {
			t.Skip("cannot listen on 127.0.0.6 (loopback here is not all of 127.0.0.0/8)")
		}
		ps := strconv.Itoa(int(port))
		cfg := sandbox.Config{AllowedTCPConnect: []string{"127.0.0.4/31:" + ps}, Strict: true}
		if err := sandbox.New().ApplySelf(cfg); !errors.Is(err, sandbox.ErrNotEnforced) || !strings.Contains(err.Error(), sandbox.FeatureTCPHost+" (") {
			t.Fatalf("Strict ApplySelf with a range: %v, want ErrNotEnforced naming %s", err, sandbox.FeatureTCPHost)
		}
		cfg.Strict = false
		apply(t, cfg)
		c, err := net.DialTimeout("tcp", "127.0.0.6:"+ps, 5*time.Second)
		if err != nil {
			t.Fatalf("connect to 127.0.0.6:%s (outside the range, on its port): %v; the plan says only the port is enforced", ps, err)
		}
		c.Close()
		c, err = net.DialTimeout("tcp", "127.0.0.4:"+strconv.Itoa(int(port)+1), 5*time.Second)
		if c != nil {
			c.Close()
		}
		wantErrno(t, "connect to 127.0.0.4 (in the range) on a port no entry lists", err, syscall.EACCES)
	})
}
