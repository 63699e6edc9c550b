package egress

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// openFDs counts this process's socket descriptors, or -1 where
// /proc/self/fd is not there. Only sockets: the relays splice through pipes
// that the net package caches in a sync.Pool and closes when a GC empties
// it, and forcing a GC here would also run the finalizers that close a
// leaked net.Conn, hiding the very leak this counts.
func openFDs() int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	n := 0
	for _, e := range ents {
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && strings.HasPrefix(l, "socket:") {
			n++
		}
	}
	return n
}

// settle waits until the goroutine and descriptor counts are back at (or
// below) the baseline, and fails the test with the leftovers if they are
// not within a few seconds.
func settle(t *testing.T, goroutines, fds int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		g, f := runtime.NumGoroutine(), openFDs()
		if g <= goroutines && f <= fds {
			return
		}
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			t.Fatalf("leak: %d goroutines (baseline %d), %d descriptors (baseline %d)\n%s", g, goroutines, f, fds, buf)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sinkServer accepts connections and reads them until they close, never
// answering: a destination that keeps a relay or a forwarded request open.
func sinkServer(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { l.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				io.Copy(io.Discard, c)
			}()
		}
	}()
	return l.Addr().String()
}

func TestCloseEndsEverything(t *testing.T) {
	f := newFakeNet(t)
	sinkPort := f.Host("sink.example.test", sinkServer(t))
	s, _ := echoServer(t)
	echoPort := f.Host("echo.example.test", s.Listener.Addr().String())
	runtime.GC()
	goroutines, fds := runtime.NumGoroutine(), openFDs()

	a, _ := NewAllowlist([]Rule{{Host: "sink.example.test", Port: sinkPort}, {Host: "echo.example.test", Port: echoPort}})
	p, err := New(Options{Allow: a, Resolve: f.Resolve, Dial: f.Dial})
	if err != nil {
		t.Fatal(err)
	}
	l4, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- p.Serve(l4) }()
	paddr := l4.Addr().String()

	var clients []net.Conn
	dial := func() net.Conn {
		c, err := net.Dial("tcp", paddr)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		clients = append(clients, c)
		return c
	}
	// A CONNECT relay in the middle of a transfer.
	c1 := dial()
	fmt.Fprintf(c1, "CONNECT sink.example.test:%d HTTP/1.1\r\n\r\n", sinkPort)
	br1 := bufio.NewReader(c1)
	if resp, err := http.ReadResponse(br1, &http.Request{Method: http.MethodConnect}); err != nil || resp.StatusCode != 200 {
		t.Fatalf("CONNECT: %v %v", resp, err)
	}
	c1.Write(make([]byte, 64<<10))
	// A SOCKS5 relay.
	c2 := dial()
	c2.Write(append([]byte{5, 1, 0, 5, 1, 0, 3, byte(len("sink.example.test"))}, append([]byte("sink.example.test"), byte(sinkPort>>8), byte(sinkPort))...))
	if b := make([]byte, 12); func() bool { _, err := io.ReadFull(c2, b); return err != nil || b[3] != 0 }() {
		t.Fatal("SOCKS5 CONNECT failed")
	}
	// A forwarded request whose destination never answers.
	c3 := dial()
	fmt.Fprintf(c3, "GET http://sink.example.test:%d/ HTTP/1.1\r\nHost: sink\r\n\r\n", sinkPort)
	// A kept-alive connection, idle after one answer.
	c4 := dial()
	fmt.Fprintf(c4, "GET http://echo.example.test:%d/ HTTP/1.1\r\nHost: echo\r\n\r\n", echoPort)
	br4 := bufio.NewReader(c4)
	if resp, err := http.ReadResponse(br4, nil); err != nil || resp.StatusCode != 200 {
		t.Fatalf("keep-alive GET: %v %v", resp, err)
	} else {
		io.ReadAll(resp.Body)
	}
	// Half a request line.
	c5 := dial()
	io.WriteString(c5, "GET http://echo.exa")
	// A connection that has sent nothing.
	dial()

	// Every connection is being served before Close.
	for deadline := time.Now().Add(5 * time.Second); ; {
		p.mu.Lock()
		n := len(p.conns)
		p.mu.Unlock()
		if n >= 6+3 { // six clients, three destinations (c1, c2, c3)
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("only %d connections tracked", n)
		}
		time.Sleep(10 * time.Millisecond)
	}

	closed := make(chan struct{})
	go func() { p.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not return within 5 s")
	}
	if err := <-served; err != ErrClosed {
		t.Errorf("Serve after Close: %v, want ErrClosed", err)
	}
	// Every client sees its connection end (not a timeout).
	for i, c := range clients {
		var r io.Reader = c
		switch i {
		case 0:
			r = br1
		case 3:
			r = br4
		}
		if _, err := io.Copy(io.Discard, r); err != nil && !errors.Is(err, net.ErrClosed) && !strings.Contains(err.Error(), "reset") {
			t.Errorf("client %d: %v after Close, want EOF or reset", i, err)
		}
		c.Close()
	}
	if _, err := net.Dial("tcp", paddr); err == nil {
		t.Error("the listener still accepts after Close")
	}
	if err := p.Serve(l4); err != ErrClosed {
		t.Errorf("Serve on a closed proxy: %v", err)
	}
	p.Close() // twice is fine
	settle(t, goroutines, fds)
}

// TestManyProxies runs 50 proxies at once, each with its own allowlist, and
// checks that each serves its own host only and records its own refusals.
func TestManyProxies(t *testing.T) {
	const n = 50
	f := newFakeNet(t)
	s, _ := echoServer(t)
	var port uint16
	for i := range n {
		port = f.Host(fmt.Sprintf("host-%d.example.test", i), s.Listener.Addr().String())
	}
	runtime.GC()
	goroutines, fds := runtime.NumGoroutine(), openFDs()

	proxies := make([]*Proxy, n)
	addrs := make([]string, n)
	done := make([]chan error, n)
	for i := range n {
		a, _ := NewAllowlist([]Rule{{Host: fmt.Sprintf("host-%d.example.test", i), Port: port}})
		proxies[i], _ = New(Options{Allow: a, Resolve: f.Resolve, Dial: f.Dial})
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addrs[i] = l.Addr().String()
		done[i] = make(chan error, 1)
		go func() { done[i] <- proxies[i].Serve(l) }()
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := proxyClient(addrs[i])
			defer c.CloseIdleConnections()
			own := fmt.Sprintf("host-%d.example.test", i)
			other := fmt.Sprintf("host-%d.example.test", (i+1)%n)
			resp, err := c.Get(fmt.Sprintf("http://%s:%d/", own, port))
			if err != nil {
				t.Errorf("proxy %d, own host: %v", i, err)
				return
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !strings.Contains(string(body), own) || resp.StatusCode != 200 {
				t.Errorf("proxy %d, own host: %d %q", i, resp.StatusCode, body)
			}
			resp, err = c.Get(fmt.Sprintf("http://%s:%d/", other, port))
			if err != nil {
				t.Errorf("proxy %d, other host: %v", i, err)
				return
			}
			resp.Body.Close()
			if resp.StatusCode != 403 {
				t.Errorf("proxy %d reached %s (another sandbox's host): %d", i, other, resp.StatusCode)
			}
		}()
	}
	wg.Wait()
	for i, p := range proxies {
		d := p.Denied()
		want := fmt.Sprintf("host-%d.example.test", (i+1)%n)
		if len(d) != 1 || d[0].Host != want || d[0].Reason != ReasonNotAllowed {
			t.Errorf("proxy %d recorded %+v, want exactly its own refusal of %s", i, d, want)
		}
	}
	var cw sync.WaitGroup
	for i, p := range proxies {
		cw.Add(1)
		go func() { defer cw.Done(); p.Close(); <-done[i] }()
	}
	cw.Wait()
	settle(t, goroutines, fds)
}
