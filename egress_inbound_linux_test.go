//go:build linux

package sandbox_test

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openparallax/sandbox"
)

func init() {
	// egress-listen PORT: listen on 127.0.0.1:PORT in the sandbox, answer
	// one connection with "inside" and the address it came to, exit.
	childHelpers["egress-listen"] = func(args []string) int {
		l, err := net.Listen("tcp", "127.0.0.1:"+args[0])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		c, err := l.Accept()
		if err != nil {
			return 1
		}
		fmt.Fprintf(c, "inside %s\n", c.LocalAddr())
		c.Close()
		return 0
	}
}

// TestEgressInbound: as root, a port the program listens on under the
// egress namespace (AllowedTCPBind) is reachable from the caller's
// loopback: the caller listens on 127.0.0.1 at that port and relays into
// the namespace. As nobody, the plan says it is not.
func TestEgressInbound(t *testing.T) {
	requireSandbox(t)
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := free.Addr().(*net.TCPAddr).Port
	free.Close()
	cfg := sandbox.Config{AllowedTCPConnect: []string{"localhost:1"}, AllowedTCPBind: []uint16{uint16(port)}}
	requireEgress(t, cfg)
	p, _ := sandbox.PlanFor(cfg)
	var bind []sandbox.Enforcement
	for _, f := range p.Features {
		if f.Feature == sandbox.FeatureTCPBind && f.Scope == sandbox.ScopeCommand {
			bind = append(bind, f)
		}
	}
	if os.Geteuid() != 0 {
		if len(bind) != 1 || !strings.Contains(bind[0].Detail, "not from the caller's loopback") {
			t.Errorf("as non-root, the plan's tcp_bind entry for WrapCommand/Run: %+v; want it to say the port is not reachable", bind)
		}
		return
	}
	if len(bind) != 1 || !strings.Contains(bind[0].Detail, "the caller listens on 127.0.0.1 at ports "+strconv.Itoa(port)) {
		t.Errorf("the plan's tcp_bind entry for WrapCommand/Run: %+v", bind)
	}
	cmd := exec.Command(self(t), helperArg, "egress-listen", strconv.Itoa(port))
	cmd.Env = []string{"PATH=/usr/bin:/bin", quickExit}
	if err := sandbox.New().WrapCommand(cmd, cfg); err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer sandbox.FinishCommand(cmd)
	got := ""
	for deadline := time.Now().Add(20 * time.Second); got == "" && time.Now().Before(deadline); {
		// Until the program listens, the caller resets the connection.
		if c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 5*time.Second); err == nil {
			c.SetDeadline(time.Now().Add(5 * time.Second))
			got, _ = bufio.NewReader(c).ReadString('\n')
			c.Close()
		}
		if got == "" {
			time.Sleep(20 * time.Millisecond)
		}
	}
	if want := fmt.Sprintf("inside 127.0.0.1:%d\n", port); got != want {
		t.Errorf("from the caller's loopback: %q, want %q (program stderr %q)", got, want, stderr.String())
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("the program: %v\n%s", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the program did not end")
	}
}

func TestEgressInboundAsNobody(t *testing.T) {
	requireSandbox(t)
	if os.Geteuid() == 0 && !asNobody(t) {
		return
	}
	TestEgressInbound(t)
}
