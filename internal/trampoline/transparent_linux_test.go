//go:build linux

package trampoline

// The transparent path for real: a re-executed child in a new network
// namespace runs netStep with transparent ports, then connects to several
// addresses of an allowed port and sends a DNS-sized datagram to a
// resolver address; the parent, holding the sockets the child handed over,
// sees each connection's original destination with getsockname and each
// datagram's sender. Only 127.0.0.0/8 and ::1 are dialled: that every
// address is local is shown by 127.1.2.3 (no address of lo) reaching the
// listener, never by sending to a non-loopback address.

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openparallax/sandbox/internal/egress"
)

const transparentTestPort = 47110

func TestNetStepTransparent(t *testing.T) {
	if os.Getenv(envNetChild) == t.Name() {
		transparentChild(t)
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root to make the network namespace")
	}
	parentEnd, childEnd, err := egress.SocketPair()
	if err != nil {
		t.Fatal(err)
	}
	defer parentEnd.Close()
	cmd := exec.Command("/proc/self/exe", "-test.run=^TestNetStepTransparent$", "-test.v", "-test.count=1", "-test.timeout=60s")
	cmd.Env = append(os.Environ(), envNetChild+"="+t.Name())
	cmd.ExtraFiles = []*os.File{childEnd}
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		childEnd.Close()
		t.Skipf("cannot start a child in a new network namespace here (%v)", err)
	}
	childEnd.Close()
	h, err := egress.ReceiveSockets(parentEnd, 30*time.Second, []uint16{transparentTestPort}, 0)
	if err != nil {
		cmd.Wait()
		t.Fatalf("%v; child output:\n%s", err, out.String())
	}
	defer h.Close()
	// Each connection is answered with the address it was made to, as
	// the parent sees it: the original destination.
	go func() {
		for {
			c, err := h.Transparent[0].Accept()
			if err != nil {
				return
			}
			c.Write([]byte(c.LocalAddr().String() + "\n"))
			c.Close()
		}
	}()
	// Datagrams are answered from the address they were sent to (a
	// resolver's client drops an answer from any other).
	go func() {
		uc := h.Resolver.(*net.UDPConn)
		if err := egress.EnablePacketInfo(uc); err != nil {
			t.Error(err)
			return
		}
		buf := make([]byte, 512)
		for {
			n, from, to, err := egress.ReadDatagram(uc, buf)
			if err != nil {
				return
			}
			if err := egress.WriteDatagram(uc, append([]byte("resolver got "), buf[:n]...), to, from); err != nil {
				t.Errorf("answer from %v to %v: %v", to, from, err)
			}
		}
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil || !strings.Contains(out.String(), "PASS") {
			t.Fatalf("child: %v\n%s", err, out.String())
		}
	case <-time.After(45 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("child did not finish in 45 s:\n%s", out.String())
	}
}

func transparentChild(t *testing.T) {
	if f, ok := netStep(NetStep{FD: 3, Port: netStepPort, Transparent: []uint16{transparentTestPort}}); !ok {
		t.Fatalf("netStep: %v", f)
	}
	ents, _ := os.ReadDir("/proc/self/fd")
	for _, e := range ents {
		if link, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && strings.HasPrefix(link, "socket:") {
			t.Errorf("fd %s is still a socket (%s) after netStep", e.Name(), link)
		}
	}
	ifaces, err := net.Interfaces()
	if err != nil || len(ifaces) != 1 || ifaces[0].Name != "lo" {
		t.Errorf("interfaces: %v, %v; want only lo", ifaces, err)
	}
	for _, dst := range []string{"127.0.0.1", "127.1.2.3", "[::1]"} {
		addr := dst + ":" + itoa(transparentTestPort)
		c, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			t.Errorf("connect %s: %v", addr, err)
			continue
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		line, err := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if strings.TrimSpace(line) != addr {
			t.Errorf("connect %s: the caller saw the destination %q (%v)", addr, line, err)
		}
	}
	// Another port of the same address: nothing listens (Landlock, not
	// applied here, would refuse it with EACCES first).
	if _, err := net.DialTimeout("tcp", "127.1.2.3:"+itoa(transparentTestPort+1), 5*time.Second); err == nil {
		t.Error("a port with no listener accepted a connection")
	}
	for _, dst := range []string{"127.0.0.53:53", "[::1]:53"} {
		c, err := net.Dial("udp", dst)
		if err != nil {
			t.Fatalf("udp %s: %v", dst, err)
		}
		c.SetDeadline(time.Now().Add(10 * time.Second))
		c.Write([]byte("query"))
		buf := make([]byte, 64)
		n, err := c.Read(buf)
		c.Close()
		if string(buf[:n]) != "resolver got query" {
			t.Errorf("udp %s: %q, %v", dst, buf[:n], err)
		}
	}
}
