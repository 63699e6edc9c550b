package egress

import (
	"bufio"
	"context"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// pipeListener hands ServeTransparent in-memory connections whose local
// address is whatever the test says the program dialled: no packet is
// sent anywhere, so destinations outside the loopback can be tested.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}
func (l *pipeListener) Close() error   { l.once.Do(func() { close(l.done) }); return nil }
func (l *pipeListener) Addr() net.Addr { return &net.TCPAddr{} }

type dialledConn struct {
	net.Conn
	local net.Addr
}

func (c dialledConn) LocalAddr() net.Addr { return c.local }

// connect is the program's connect() to dst, as the relay sees it.
func (l *pipeListener) connect(t *testing.T, dst string) net.Conn {
	t.Helper()
	ap := netip.MustParseAddrPort(dst)
	client, server := net.Pipe()
	l.conns <- dialledConn{server, net.TCPAddrFromAddrPort(ap)}
	client.SetDeadline(time.Now().Add(10 * time.Second))
	t.Cleanup(func() { client.Close() })
	return client
}

func lineEcho(t *testing.T) string {
	return serveTCP(t, func(c net.Conn) {
		line, _ := bufio.NewReader(c).ReadString('\n')
		c.Write([]byte("echo " + line))
	})
}

// exchange writes a line through c and returns the answer, or "" when the
// connection ends first.
func exchange(c net.Conn) string {
	c.Write([]byte("ping\n"))
	line, _ := bufio.NewReader(c).ReadString('\n')
	return line
}

func startTransparent(t *testing.T, f *fakeNet, rules ...Rule) (*Proxy, *pipeListener) {
	t.Helper()
	a, err := NewAllowlist(rules)
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(Options{Allow: a, Resolve: f.Resolve, Dial: f.Dial})
	if err != nil {
		t.Fatal(err)
	}
	l := newPipeListener()
	done := make(chan error, 1)
	go func() { done <- p.ServeTransparent(l) }()
	t.Cleanup(func() {
		p.Close()
		if err := <-done; err != ErrClosed {
			t.Errorf("ServeTransparent returned %v after Close, want ErrClosed", err)
		}
	})
	return p, l
}

// TestTransparentRelay: a connection is relayed when the address and port
// the program dialled is an IP literal rule's (loopback or not), a
// loopback address on a localhost rule's port, or an address an allowed
// name on that port resolves to in the caller; every other one is reset,
// reaches nothing (the dialer is never called) and is reported.
func TestTransparentRelay(t *testing.T) {
	f := newFakeNet(t)
	echo := lineEcho(t)
	port := f.Host("api.test", echo)    // api.test → 203.0.113.1:port
	f.Host("literal.test", echo)        // 203.0.113.2:port, named below by its address
	f.Alias("rebind.test", "10.0.0.1")  // DNS rebinding
	_, lp, _ := net.SplitHostPort(echo) // the echo server's own port, for localhost
	lport64, _ := strconv.ParseUint(lp, 10, 16)
	lport := uint16(lport64)
	p, l := startTransparent(t, f,
		Rule{Host: "api.test", Port: port},
		Rule{Host: "203.0.113.2", Port: port},
		Rule{Host: "localhost", Port: lport},
		Rule{Host: "rebind.test", Port: port},
	)
	ps := strconv.Itoa(int(port))
	for _, c := range []struct {
		dst     string
		relayed bool
		reason  string
	}{
		{"203.0.113.2:" + ps, true, ""},                // an IP literal rule, not loopback
		{"203.0.113.1:" + ps, true, ""},                // api.test's address
		{"[::1]:" + lp, true, ""},                      // localhost: relayed to 127.0.0.1 too
		{"127.0.0.1:" + lp, true, ""},                  // localhost
		{"203.0.113.3:" + ps, false, ReasonNotAllowed}, // no rule, no name resolves there
		{"127.0.0.2:" + lp, false, ReasonNotAllowed},   // not what localhost names
		{"10.0.0.1:" + ps, false, ReasonNonPublic},     // rebind.test's only address
	} {
		before, dials := len(p.Denied()), f.Dials()
		got := exchange(l.connect(t, c.dst))
		if c.relayed {
			if got != "echo ping\n" {
				t.Errorf("%s: %q, want the echo", c.dst, got)
			}
			continue
		}
		if got != "" {
			t.Errorf("%s: %q through a connection that must be refused", c.dst, got)
		}
		if f.Dials() != dials {
			t.Errorf("%s: the caller dialled for a refused connection", c.dst)
		}
		d := p.Denied()
		if len(d) != before+1 {
			t.Fatalf("%s: %d new denials, want 1: %+v", c.dst, len(d)-before, d)
		}
		ap := netip.MustParseAddrPort(c.dst)
		last := d[len(d)-1]
		wantHost := ap.Addr().String()
		if c.reason == ReasonNonPublic {
			wantHost = "rebind.test"
		}
		if last.Protocol != "tcp" || last.Host != wantHost || last.Port != ap.Port() || last.Reason != c.reason {
			t.Errorf("%s: denial %+v, want tcp %s:%d %s", c.dst, last, wantHost, ap.Port(), c.reason)
		}
	}
}

// TestTransparentLookupsBounded: connections to addresses no allowed name
// is known to resolve to make the caller look each name up at most once
// per relookupAfter, however many the program makes.
func TestTransparentLookupsBounded(t *testing.T) {
	f := newFakeNet(t)
	port := f.Host("api.test", lineEcho(t))
	var lookups int
	var mu sync.Mutex
	a, _ := NewAllowlist([]Rule{{Host: "api.test", Port: port}})
	p, err := New(Options{Allow: a, Dial: f.Dial, Resolve: func(ctx context.Context, h string) ([]netip.Addr, error) {
		mu.Lock()
		lookups++
		mu.Unlock()
		return f.Resolve(ctx, h)
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	l := newPipeListener()
	go p.ServeTransparent(l)
	for i := range 50 {
		exchange(l.connect(t, "203.0.113."+strconv.Itoa(100+i)+":"+strconv.Itoa(int(port))))
	}
	mu.Lock()
	defer mu.Unlock()
	if lookups != 1 {
		t.Errorf("%d lookups for 50 refused connections within %v, want 1", lookups, relookupAfter)
	}
	if n := len(p.Denied()); n != 50 {
		t.Errorf("%d denials, want 50", n)
	}
}

func dnsQuery(t *testing.T, name string, typ dnsmessage.Type) []byte {
	t.Helper()
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: 7, RecursionDesired: true})
	b.StartQuestions()
	b.Question(dnsmessage.Question{Name: dnsmessage.MustNewName(name), Type: typ, Class: dnsmessage.ClassINET})
	q, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return q
}

// TestDNSAnswers: the resolver answers allowed names with the caller's
// allowed addresses (and the relay then recognises them), refuses every
// other name with NXDOMAIN and a denial, and never answers a rebinding.
func TestDNSAnswers(t *testing.T) {
	f := newFakeNet(t)
	echo := lineEcho(t)
	port := f.Host("api.test", echo)
	f.Alias("rebind.test", "127.0.0.1", "10.1.2.3")
	p, l := startTransparent(t, f, Rule{Host: "api.test", Port: port}, Rule{Host: "rebind.test", Port: 443}, Rule{Host: "localhost", Port: 8080})
	for _, c := range []struct {
		name   string
		typ    dnsmessage.Type
		rcode  dnsmessage.RCode
		answer []string
		denied string
	}{
		{"api.test.", dnsmessage.TypeA, dnsmessage.RCodeSuccess, []string{"203.0.113.1"}, ""},
		{"API.Test.", dnsmessage.TypeAAAA, dnsmessage.RCodeSuccess, nil, ""},
		{"api.test.", dnsmessage.TypeMX, dnsmessage.RCodeSuccess, nil, ""},
		{"localhost.", dnsmessage.TypeA, dnsmessage.RCodeSuccess, []string{"127.0.0.1"}, ""},
		{"localhost.", dnsmessage.TypeAAAA, dnsmessage.RCodeSuccess, []string{"::1"}, ""},
		{"other.test.", dnsmessage.TypeA, dnsmessage.RCodeNameError, nil, ReasonNotAllowed},
		{"rebind.test.", dnsmessage.TypeA, dnsmessage.RCodeRefused, nil, ReasonNonPublic},
	} {
		before := len(p.Denied())
		resp := p.answerDNS(context.Background(), dnsQuery(t, c.name, c.typ))
		var m dnsmessage.Message
		if err := m.Unpack(resp); err != nil {
			t.Fatalf("%s %v: %v", c.name, c.typ, err)
		}
		var got []string
		for _, r := range m.Answers {
			switch b := r.Body.(type) {
			case *dnsmessage.AResource:
				got = append(got, netip.AddrFrom4(b.A).String())
			case *dnsmessage.AAAAResource:
				got = append(got, netip.AddrFrom16(b.AAAA).String())
			}
		}
		if m.ID != 7 || !m.Response || m.RCode != c.rcode || len(m.Questions) != 1 || !equalStrings(got, c.answer) {
			t.Errorf("%s %v: id %d, rcode %v, answers %v; want %v %v", c.name, c.typ, m.ID, m.RCode, got, c.rcode, c.answer)
		}
		d := p.Denied()
		switch {
		case c.denied == "" && len(d) != before:
			t.Errorf("%s %v: denied %+v", c.name, c.typ, d[before:])
		case c.denied != "" && (len(d) != before+1 || d[before].Protocol != "dns" || d[before].Reason != c.denied):
			t.Errorf("%s %v: denials %+v, want one dns %s", c.name, c.typ, d[before:], c.denied)
		}
	}
	// The answered address leads to api.test.
	if got := exchange(l.connect(t, "203.0.113.1:"+strconv.Itoa(int(port)))); got != "echo ping\n" {
		t.Errorf("connection to the answered address: %q", got)
	}
	if resp := p.answerDNS(context.Background(), []byte{1, 2, 3}); resp != nil {
		t.Errorf("answered a message that is not DNS: %x", resp)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestDNSLookupsBounded: however many queries the program sends for an
// allowed name, the caller looks it up at most once per dnsTTL.
func TestDNSLookupsBounded(t *testing.T) {
	f := newFakeNet(t)
	port := f.Host("api.test", lineEcho(t))
	var lookups int
	var mu sync.Mutex
	a, _ := NewAllowlist([]Rule{{Host: "api.test", Port: port}})
	p, err := New(Options{Allow: a, Dial: f.Dial, Resolve: func(ctx context.Context, h string) ([]netip.Addr, error) {
		mu.Lock()
		lookups++
		mu.Unlock()
		return f.Resolve(ctx, h)
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	q := dnsQuery(t, "api.test.", dnsmessage.TypeA)
	for range 100 {
		var m dnsmessage.Message
		if err := m.Unpack(p.answerDNS(context.Background(), q)); err != nil || len(m.Answers) != 1 {
			t.Fatalf("answer: %+v %v", m, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if lookups != 1 {
		t.Errorf("%d lookups for 100 queries within %d s, want 1", lookups, dnsTTL)
	}
}

// TestDNSRefusesCallersOwnAddresses: an allowed name that resolves to one
// of the caller's own (public) interface addresses gets no answer, as the
// proxy refuses to connect there; and when the caller cannot list its
// addresses, no answer passes (fail closed).
func TestDNSRefusesCallersOwnAddresses(t *testing.T) {
	f := newFakeNet(t)
	f.Alias("own.test", "198.51.100.77")
	a, _ := NewAllowlist([]Rule{{Host: "own.test", Port: 443}})
	for _, c := range []struct {
		name  string
		local func() ([]netip.Addr, error)
	}{
		{"own address", func() ([]netip.Addr, error) { return []netip.Addr{netip.MustParseAddr("198.51.100.77")}, nil }},
		{"no list", func() ([]netip.Addr, error) { return nil, context.DeadlineExceeded }},
	} {
		p, err := New(Options{Allow: a, Resolve: f.Resolve, Dial: f.Dial, LocalAddrs: c.local})
		if err != nil {
			t.Fatal(err)
		}
		var m dnsmessage.Message
		if err := m.Unpack(p.answerDNS(context.Background(), dnsQuery(t, "own.test.", dnsmessage.TypeA))); err != nil {
			t.Fatal(err)
		}
		d := p.Denied()
		if m.RCode != dnsmessage.RCodeRefused || len(m.Answers) != 0 || len(d) != 1 || d[0].Reason != ReasonNonPublic {
			t.Errorf("%s: rcode %v, answers %v, denials %+v; want REFUSED, none, one non-public-address", c.name, m.RCode, m.Answers, d)
		}
		p.Close()
	}
}

// TestTransparentBusy: a connection past MaxConns is reset and reported
// as proxy-busy, and never dialled.
func TestTransparentBusy(t *testing.T) {
	f := newFakeNet(t)
	hold := make(chan struct{})
	t.Cleanup(func() { close(hold) })
	port := f.Host("api.test", serveTCP(t, func(c net.Conn) { <-hold }))
	a, _ := NewAllowlist([]Rule{{Host: "203.0.113.1", Port: port}})
	p, err := New(Options{Allow: a, Resolve: f.Resolve, Dial: f.Dial, MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	l := newPipeListener()
	go p.ServeTransparent(l)
	dst := "203.0.113.1:" + strconv.Itoa(int(port))
	first := l.connect(t, dst) // relayed, held open by the server
	deadline := time.Now().Add(5 * time.Second)
	for f.Dials() == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := exchange(l.connect(t, dst)); got != "" {
		t.Errorf("a connection past MaxConns: %q", got)
	}
	d := p.Denied()
	if f.Dials() != 1 || len(d) != 1 || d[0].Reason != ReasonBusy || d[0].Protocol != "tcp" {
		t.Errorf("dials %d, denials %+v; want 1 dial and one tcp %s", f.Dials(), d, ReasonBusy)
	}
	first.Close()
}
