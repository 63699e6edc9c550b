package egress

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/netip"
	"testing"
	"time"
)

// startTransparentTCP serves the transparent relay on a loopback listener
// whose own address is an IP-literal rule, every dial going to upstream
// (as a connection to an allowed address would in a sandbox's namespace).
func startTransparentTCP(b *testing.B, upstream string) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ap := l.Addr().(*net.TCPAddr).AddrPort()
	a, err := NewAllowlist([]Rule{{Host: ap.Addr().String(), Port: ap.Port()}})
	if err != nil {
		b.Fatal(err)
	}
	var d net.Dialer
	p, err := New(Options{Allow: a, Dial: func(ctx context.Context, _ netip.AddrPort) (net.Conn, error) {
		return d.DialContext(ctx, "tcp", upstream)
	}})
	if err != nil {
		b.Fatal(err)
	}
	go p.ServeTransparent(l)
	b.Cleanup(func() { p.Close() })
	return l.Addr().String()
}

// BenchmarkConnectSetup times one connection's setup and first exchange
// (connect, a line out, its echo back) directly, through the transparent
// relay, through a bare relay, and through the proxy (CONNECT).
func BenchmarkConnectSetup(b *testing.B) {
	echo := serveTCP(b, func(c net.Conn) {
		line, _ := bufio.NewReader(c).ReadString('\n')
		c.Write([]byte(line))
	})
	f := newFakeNet(b)
	port := f.Host("echo.example.test", echo)
	_, paddr := startProxy(b, f, Rule{Host: "echo.example.test", Port: port})
	trans := startTransparentTCP(b, echo)
	bare := bareRelay(b, echo)
	once := func(c net.Conn) {
		defer c.Close()
		c.Write([]byte("ping\n"))
		if line, err := bufio.NewReader(c).ReadString('\n'); err != nil || line != "ping\n" {
			b.Fatalf("exchange: %q %v", line, err)
		}
	}
	dial := func(addr string) net.Conn {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			b.Fatal(err)
		}
		return c
	}
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			once(dial(echo))
		}
	})
	b.Run("transparent", func(b *testing.B) {
		for b.Loop() {
			once(dial(trans))
		}
	})
	b.Run("bare-relay", func(b *testing.B) {
		for b.Loop() {
			once(dial(bare))
		}
	})
	b.Run("proxy-connect", func(b *testing.B) {
		for b.Loop() {
			once(dialConnect(b, paddr, fmt.Sprintf("echo.example.test:%d", port)))
		}
	})
}

// BenchmarkTransparentOverBareRelay times, in each iteration, one 100 MB
// download through the transparent relay and one through a bare relay,
// and reports their throughput ratio (issue 28's target: ≥ 0.9).
func BenchmarkTransparentOverBareRelay(b *testing.B) {
	bulk := bulkTCPServer(b)
	trans := startTransparentTCP(b, bulk)
	bare := bareRelay(b, bulk)
	var tt, bt time.Duration
	for b.Loop() {
		for _, x := range []struct {
			addr string
			sum  *time.Duration
		}{{trans, &tt}, {bare, &bt}} {
			start := time.Now()
			c, err := net.Dial("tcp", x.addr)
			if err != nil {
				b.Fatal(err)
			}
			fetchTCP(b, c)
			*x.sum += time.Since(start)
		}
	}
	b.ReportMetric(float64(bt)/float64(tt), "transparent/bare")
	b.ReportMetric(float64(benchSize)*float64(b.N)/tt.Seconds()/1e6, "transparent-MB/s")
	b.ReportMetric(float64(benchSize)*float64(b.N)/bt.Seconds()/1e6, "bare-MB/s")
}
