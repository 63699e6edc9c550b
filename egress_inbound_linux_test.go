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
	"github.com/openparallax/sandbox/internal/childtest"
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
	// egress-serve PORT: as egress-listen, for every connection, until
	// killed (or a minute has passed).
	childHelpers["egress-serve"] = func(args []string) int {
		l, err := net.Listen("tcp", "127.0.0.1:"+args[0])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		time.AfterFunc(time.Minute, func() { os.Exit(3) })
		for {
			c, err := l.Accept()
			if err != nil {
				return 1
			}
			fmt.Fprintf(c, "inside %s\n", c.LocalAddr())
			c.Close()
		}
	}
}

// goTrampolineEnv passes SANDBOX_TEST_GO_TRAMPOLINE on to a test re-run
// as nobody, so that both child halves are tested there too.
func goTrampolineEnv() []string {
	if v := os.Getenv("SANDBOX_TEST_GO_TRAMPOLINE"); v != "" {
		return []string{"SANDBOX_TEST_GO_TRAMPOLINE=" + v}
	}
	return nil
}

// inboundConfig returns a Config that puts the program in the egress
// namespace and lets it bind a port free on this machine's loopback now.
func inboundConfig(t *testing.T) (sandbox.Config, int) {
	t.Helper()
	free, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := free.Addr().(*net.TCPAddr).Port
	free.Close()
	cfg := sandbox.Config{AllowedTCPConnect: []string{"localhost:1"}, AllowedTCPBind: []uint16{uint16(port)}}
	requireEgress(t, cfg)
	return cfg, port
}

// bindEntry returns the plan's tcp_bind entry for WrapCommand/Run.
func bindEntry(t *testing.T, cfg sandbox.Config) string {
	t.Helper()
	p, _ := sandbox.PlanFor(cfg)
	var bind []sandbox.Enforcement
	for _, f := range p.Features {
		if f.Feature == sandbox.FeatureTCPBind && f.Scope == sandbox.ScopeCommand {
			bind = append(bind, f)
		}
	}
	if len(bind) != 1 {
		t.Fatalf("the plan's tcp_bind entries for WrapCommand/Run: %+v; want one", bind)
	}
	return bind[0].Detail
}

// inboundExchange dials the caller's loopback at port until the program's
// answer arrives (until the program listens, the caller resets the
// connection) or 20 s have passed, and returns the answer.
func inboundExchange(port int) string {
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if got := inboundOnce(port); got != "" {
			return got
		}
	}
	return ""
}

// inboundOnce dials the caller's loopback at port once and returns the
// first line the far end sends ("" when the connection ends without one).
func inboundOnce(port int) string {
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(port), 5*time.Second)
	if err != nil {
		return ""
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	got, _ := bufio.NewReader(c).ReadString('\n')
	return got
}

// TestEgressInbound: a port the program listens on under the egress
// namespace (AllowedTCPBind) is reachable from the caller's loopback: the
// caller listens on 127.0.0.1 at that port and relays into the namespace,
// through a socket it makes there (root), or through the inbound pool the
// child half made there (not root). The plan says which.
func TestEgressInbound(t *testing.T) {
	requireSandbox(t)
	cfg, port := inboundConfig(t)
	detail := bindEntry(t, cfg)
	want := "through a socket the caller (root) makes in that namespace for each"
	if os.Geteuid() != 0 {
		want = "through sockets the sandbox makes in that namespace before the program starts (the caller is not root, so it cannot enter it): 64 per port"
	}
	if !strings.Contains(detail, "the caller listens on 127.0.0.1 at ports "+strconv.Itoa(port)) || !strings.Contains(detail, want) {
		t.Errorf("as uid %d, the plan's tcp_bind entry for WrapCommand/Run: %q; want it to say %q", os.Geteuid(), detail, want)
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
	if got, want := inboundExchange(port), fmt.Sprintf("inside 127.0.0.1:%d\n", port); got != want {
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
	if os.Geteuid() == 0 && !childtest.AsNobody(t, goTrampolineEnv()...) {
		return
	}
	TestEgressInbound(t)
}

// TestEgressInboundPoolBoundAsNobody: a non-root caller's inbound pool
// (lowered to 2 sockets by a test hook) serves two connections, however
// many connections the program refused before it listened; the third is
// reset by the caller, never reaching the program, and is reported in
// the command's report.
func TestEgressInboundPoolBoundAsNobody(t *testing.T) {
	requireSandbox(t)
	if os.Geteuid() == 0 && !childtest.AsNobody(t, goTrampolineEnv()...) {
		return
	}
	defer sandbox.SetInboundPoolPerPort(2)()
	cfg, port := inboundConfig(t)
	if detail := bindEntry(t, cfg); !strings.Contains(detail, "at most 2 connections per port over the program's life") {
		t.Errorf("the plan's tcp_bind entry: %q; want it to state the pool's bound", detail)
	}
	cmd := exec.Command(self(t), helperArg, "egress-serve", strconv.Itoa(port))
	cmd.Env = []string{"PATH=/usr/bin:/bin", quickExit}
	if err := sandbox.New().WrapCommand(cmd, cfg); err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	want := fmt.Sprintf("inside 127.0.0.1:%d\n", port)
	if got := inboundExchange(port); got != want { // the first: after any refused while the program starts
		t.Errorf("connection 1: %q, want %q (program stderr %q)", got, want, stderr.String())
	}
	if got := inboundOnce(port); got != want {
		t.Errorf("connection 2: %q, want %q", got, want)
	}
	if got := inboundOnce(port); got != "" {
		t.Errorf("connection 3, beyond the pool: %q, want it reset without an answer", got)
	}
	select {
	case err := <-done:
		t.Fatalf("the program ended early (%v): %s", err, stderr.String())
	default:
	}
	cmd.Process.Kill()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the program did not end after SIGKILL")
	}
	report, err := sandbox.FinishCommand(cmd)
	if err != nil {
		t.Fatal(err)
	}
	var hits []sandbox.DeniedRequest
	for _, d := range report.DeniedRequests {
		if d.Protocol == "inbound" {
			hits = append(hits, d)
		}
	}
	if len(hits) != 1 || hits[0].Reason != "inbound-pool-exhausted" || hits[0].Port != uint16(port) || hits[0].Host != "127.0.0.1" {
		t.Errorf("inbound refusals in the report: %+v; want one inbound-pool-exhausted for 127.0.0.1:%d", hits, port)
	}
}
