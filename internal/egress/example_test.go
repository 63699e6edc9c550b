package egress_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"

	"github.com/openparallax/sandbox/internal/egress"
)

// A proxy for one sandbox that may reach registry.npmjs.org:443 only. The
// listener here is on the caller's loopback; in the product it is the one
// the child half created inside the sandbox's network namespace.
func Example() {
	allow, err := egress.NewAllowlist([]egress.Rule{{Host: "registry.npmjs.org", Port: 443}})
	if err != nil {
		panic(err)
	}
	p, err := egress.New(egress.Options{Allow: allow})
	if err != nil {
		panic(err)
	}
	defer p.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go p.Serve(l)

	// What a confined program would send for https://evil.example/.
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		panic(err)
	}
	fmt.Fprintf(c, "CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		panic(err)
	}
	c.Close()
	fmt.Println(resp.Status, resp.Header.Get(egress.DeniedHeader))
	for _, d := range p.Denied() {
		fmt.Println(d.Protocol, d.Host, d.Port, d.Reason)
	}
	// Output:
	// 403 Forbidden not-allowed
	// connect evil.example 443 not-allowed
}
