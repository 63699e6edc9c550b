package probe

import (
	"bufio"
	"errors"
	"net"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openparallax/sandbox/internal/spec"
)

// TestOutcome: a probe is blocked only by an errno the caller names as the
// sandbox's denial, wrapped or not; success, a missing file or a refused
// connection fail it (they prove nothing about the sandbox).
func TestOutcome(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, spec.ProbeFailed},
		{syscall.EACCES, spec.ProbeBlocked},
		{PathErr("open", "/x", syscall.EPERM), spec.ProbeBlocked},
		{ErrOp("connect", syscall.EACCES), spec.ProbeBlocked},
		{PathErr("open", "/x", syscall.ENOENT), spec.ProbeFailed},
		{ErrOp("connect", syscall.ECONNREFUSED), spec.ProbeFailed},
		{errors.New("no errno"), spec.ProbeFailed},
	} {
		r := Outcome("p", "t", tc.err, syscall.EACCES, syscall.EPERM)
		if r.Status != tc.want || r.Name != "p" || r.Target != "t" || r.Error == "" {
			t.Errorf("Outcome(%v) = %+v, want status %s with its error", tc.err, r, tc.want)
		}
	}
	if PathErr("open", "/x", nil) != nil || ErrOp("x", nil) != nil {
		t.Error("a nil error must stay nil")
	}
	var pe *os.PathError
	if !errors.As(PathErr("open", "/x", syscall.EPERM), &pe) || ErrnoOf(pe) != syscall.EPERM {
		t.Error("PathErr loses the errno")
	}
}

// TestPort: the network probe's port is one no entry grants; none where an
// entry grants every loopback port.
func TestPort(t *testing.T) {
	rc := &spec.Resolved{Connect: []spec.Endpoint{{Host: "*", Port: 1}, {Host: "example.com", Port: 9}}}
	if p := Port(rc); p != 7 {
		t.Errorf("Port = %d, want 7 (1 and 9 are granted)", p)
	}
	for _, ep := range []spec.Endpoint{{Host: "*", AnyPort: true}, {Host: "localhost", AnyPort: true}, {Host: "127.0.0.1", AnyPort: true}} {
		if p := Port(&spec.Resolved{Connect: []spec.Endpoint{ep}}); p != 0 {
			t.Errorf("Port with %v = %d, want 0 (every loopback port granted)", ep, p)
		}
	}
	for host, want := range map[string]int{"127.0.0.0/8": 0, "0.0.0.0/1": 0, "127.0.0.4/31": 1, "10.0.0.0/8": 1} {
		if p := Port(&spec.Resolved{Connect: []spec.Endpoint{{Host: host, AnyPort: true}}}); p != want {
			t.Errorf("Port with %s:* = %d, want %d (0: the range holds 127.0.0.1)", host, p, want)
		}
	}
	if p := Port(&spec.Resolved{Connect: []spec.Endpoint{{Host: "example.com", AnyPort: true}}}); p != 1 {
		t.Errorf("Port with example.com:* = %d, want 1 (another host's ports are not loopback's)", p)
	}
}

// TestEgressControlRange: the proxy is asked for an entry that names one
// host and port, never for an address range (it names no one address);
// with only ranges the control is skipped, and the proxy is not dialled.
func TestEgressControlRange(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	asked := make(chan string, 4)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			line, _ := bufio.NewReader(c).ReadString('\n')
			asked <- strings.TrimSpace(line)
			c.Write([]byte("HTTP/1.1 200 Connection established\r\n\r\n"))
			c.Close()
		}
	}()
	ep := func(s string) spec.Endpoint {
		e, err := spec.ParseEndpoint(s)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	r := EgressControl(&spec.Resolved{Connect: []spec.Endpoint{ep("10.0.0.0/8:443"), ep("[fd00::/8]:443")}}, l.Addr().String(), time.Second)
	if r.Status != spec.ProbeSkipped || !strings.Contains(r.Error, "address range") {
		t.Errorf("only ranges: %+v, want skipped, saying why", r)
	}
	r = EgressControl(&spec.Resolved{Connect: []spec.Endpoint{ep("10.0.0.0/8:443"), ep("api.example.test:443")}}, l.Addr().String(), time.Second)
	if r.Status != spec.ProbeAllowed {
		t.Errorf("a range and a name: %+v, want allowed", r)
	}
	if got := <-asked; got != "CONNECT api.example.test:443 HTTP/1.1" {
		t.Errorf("the proxy was asked %q, want the name's entry", got)
	}
	select {
	case got := <-asked:
		t.Errorf("the proxy was asked %q too", got)
	default:
	}
}
