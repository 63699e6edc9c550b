package egress

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// Any-port rules ("host:*") as data: what NewAllowlist refuses, what Match
// allows on which ports, and the rebinding filter for them.
func TestAllowlistAnyPort(t *testing.T) {
	for _, r := range []Rule{
		{Host: "*", AnyPort: true},                           // *:* is no host rule
		{Host: "", AnyPort: true},                            // nor is :*
		{Host: "api.example.test", Port: 443, AnyPort: true}, // any port and a port at once
		{Host: "API.example.test", AnyPort: true},            // not canonical
		{Host: "api.example.test"},                           // port 0 without AnyPort
	} {
		if _, err := NewAllowlist([]Rule{r}); err == nil {
			t.Errorf("NewAllowlist(%+v) = nil error, want a refusal", r)
		}
	}
	a := mustAllow(t,
		Rule{Host: "api.example.test", AnyPort: true},
		Rule{Host: "localhost", AnyPort: true},
		Rule{Host: "10.1.2.3", AnyPort: true},
		Rule{Host: "*.cdn.example.test", AnyPort: true},
		Rule{Host: "github.com", Port: 443},
	)
	if a.Empty() {
		t.Error("a list of any-port rules is Empty")
	}
	type want struct {
		rule  Rule // the matched rule; zero: refused
		addrs []string
	}
	anyR := func(h string, addrs ...string) want { return want{Rule{Host: h, AnyPort: true}, addrs} }
	for _, c := range []struct {
		host string
		port uint16
		want want
	}{
		{"api.example.test", 1, anyR("api.example.test")},
		{"api.example.test", 443, anyR("api.example.test")},
		{"API.example.test.", 65535, anyR("api.example.test")},
		{"www.api.example.test", 443, want{}}, // exact names only
		{"localhost", 9, anyR("localhost", "127.0.0.1", "::1")},
		{"127.0.0.1", 5432, anyR("localhost", "127.0.0.1")},
		{"::1", 22, anyR("localhost", "::1")},
		{"127.0.0.2", 22, want{}}, // localhost names 127.0.0.1 and ::1 only
		{"10.1.2.3", 22, anyR("10.1.2.3", "10.1.2.3")},
		{"10.1.2.4", 22, want{}},
		{"a.cdn.example.test", 8443, anyR("*.cdn.example.test")},
		{"cdn.example.test", 8443, want{}},
		{"github.com", 443, want{Rule{Host: "github.com", Port: 443}, nil}},
		{"github.com", 80, want{}}, // a per-port rule stays per port
		{"api.example.test", 0, want{}},
	} {
		m, reason, detail := a.Match(c.host, c.port)
		if c.want.rule == (Rule{}) {
			if reason == "" {
				t.Errorf("Match(%q, %d) allowed by %+v, want a refusal", c.host, c.port, m.Rule)
			} else if detail == "" {
				t.Errorf("Match(%q, %d): refusal without detail", c.host, c.port)
			}
			continue
		}
		var addrs []string
		for _, x := range m.Addrs {
			addrs = append(addrs, x.String())
		}
		if reason != "" || m.Rule != c.want.rule || !slices.Equal(addrs, c.want.addrs) || m.Port != c.port {
			t.Errorf("Match(%q, %d) = %+v %q (%s), want rule %+v addrs %v", c.host, c.port, m, reason, detail, c.want.rule, c.want.addrs)
		}
	}

	own := []netip.Addr{netip.MustParseAddr("198.51.100.7")}
	for _, c := range []struct {
		addr string
		port uint16
		ok   bool
	}{
		{"10.1.2.3", 1, true},        // named by an any-port literal, every port
		{"10.1.2.3", 65535, true},    //
		{"127.0.0.1", 6379, true},    // localhost:*
		{"::1", 6379, true},          //
		{"10.9.9.9", 443, false},     // private, named by no rule
		{"127.0.0.2", 443, false},    // loopback, not what localhost names
		{"203.0.113.9", 8443, true},  // public
		{"198.51.100.7", 443, false}, // the caller's own address
	} {
		ok, why := a.AddrAllowedHere(netip.MustParseAddr(c.addr), c.port, own)
		if ok != c.ok {
			t.Errorf("AddrAllowedHere(%s, %d) = %v (%s), want %v", c.addr, c.port, ok, why, c.ok)
		}
		// The resolver's filter for an any-port name agrees for every
		// address whose answer does not depend on a per-port rule.
		if ok, why := a.addrAllowedAnyPort(netip.MustParseAddr(c.addr), own); ok != c.ok {
			t.Errorf("addrAllowedAnyPort(%s) = %v (%s), want %v", c.addr, ok, why, c.ok)
		}
	}
	if ports, anyPort := a.hostPorts("api.example.test"); len(ports) != 0 || !anyPort {
		t.Errorf("hostPorts(api.example.test) = %v %v, want [] true", ports, anyPort)
	}
	if ports, anyPort := a.hostPorts("github.com"); !slices.Equal(ports, []uint16{443}) || anyPort {
		t.Errorf("hostPorts(github.com) = %v %v, want [443] false", ports, anyPort)
	}
	// "localhost:*" means the caller's loopback: NO_PROXY must not send
	// the program's loopback connections past the proxy.
	for _, kv := range Env(netip.MustParseAddrPort("127.0.0.1:3128"), mustAllow(t, Rule{Host: "localhost", AnyPort: true})) {
		if strings.HasPrefix(kv, "NO_PROXY=") && kv != "NO_PROXY=" {
			t.Errorf("with localhost:* %s, want it empty", kv)
		}
	}
}

// An any-port name through the proxy on a port no rule lists, and the
// same proxy's refusal of another host on that port.
func TestProxyAnyPort(t *testing.T) {
	f := newFakeNet(t)
	echo := lineEcho(t)
	port := f.Host("api.example.test", echo) // the echo server's port: on no per-port rule
	f.Host("other.example.test", echo)
	p, paddr := startProxy(t, f, Rule{Host: "api.example.test", AnyPort: true}, Rule{Host: "github.com", Port: 443})
	connect := func(host string) int {
		c, err := net.Dial("tcp", paddr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		fmt.Fprintf(c, "CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n", host, port, host, port)
		br := bufio.NewReader(c)
		resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
		if err != nil {
			t.Fatalf("CONNECT %s: %v", host, err)
		}
		if resp.StatusCode == 200 {
			c.Write([]byte("ping\n"))
			if line, _ := br.ReadString('\n'); line != "echo ping\n" {
				t.Errorf("CONNECT %s:%d: tunnel answered %q", host, port, line)
			}
		}
		return resp.StatusCode
	}
	if got := connect("api.example.test"); got != 200 {
		t.Errorf("CONNECT api.example.test:%d with api.example.test:* = %d, want 200", port, got)
	}
	before := len(p.Denied())
	if got := connect("other.example.test"); got != 403 {
		t.Errorf("CONNECT other.example.test:%d = %d, want 403", port, got)
	}
	if d := p.Denied(); len(d) != before+1 || d[before].Host != "other.example.test" || d[before].Reason != ReasonNotAllowed {
		t.Errorf("denials %+v, want other.example.test not-allowed", d[before:])
	}
}

// The transparent path and the resolver with an any-port name: a direct
// connection that reaches a transparent listener (a port another entry
// lists) is relayed to the any-port name, and the resolver answers it.
func TestTransparentAnyPort(t *testing.T) {
	f := newFakeNet(t)
	echo := lineEcho(t)
	port := f.Host("api.test", echo)
	f.Alias("rebind.test", "10.0.0.1")
	p, l := startTransparent(t, f, Rule{Host: "api.test", AnyPort: true}, Rule{Host: "rebind.test", AnyPort: true},
		Rule{Host: "listed.test", Port: port})
	for _, c := range []struct {
		name  string
		rcode dnsmessage.RCode
		want  []string
	}{
		{"api.test.", dnsmessage.RCodeSuccess, []string{"203.0.113.1"}},
		{"rebind.test.", dnsmessage.RCodeRefused, nil}, // a private answer no rule names
		{"other.test.", dnsmessage.RCodeNameError, nil},
	} {
		var m dnsmessage.Message
		if err := m.Unpack(p.answerDNS(context.Background(), dnsQuery(t, c.name, dnsmessage.TypeA))); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range m.Answers {
			if b, ok := r.Body.(*dnsmessage.AResource); ok {
				got = append(got, netip.AddrFrom4(b.A).String())
			}
		}
		if m.RCode != c.rcode || !slices.Equal(got, c.want) {
			t.Errorf("%s: %v %v, want %v %v", c.name, m.RCode, got, c.rcode, c.want)
		}
	}
	if got := exchange(l.connect(t, "203.0.113.1:"+strconv.Itoa(int(port)))); got != "echo ping\n" {
		t.Errorf("direct connection to api.test's address: %q, want the echo", got)
	}
	before := len(p.Denied())
	if got := exchange(l.connect(t, "203.0.113.99:"+strconv.Itoa(int(port)))); got != "" {
		t.Errorf("direct connection to an address no rule names: %q, want a reset", got)
	}
	if d := p.Denied(); len(d) != before+1 || d[before].Reason != ReasonNotAllowed {
		t.Errorf("denials %+v, want one not-allowed", d[before:])
	}
}
