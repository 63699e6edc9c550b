//go:build linux

package sandbox_test

// The seeds' own scenario (issue 28): an Engine serving on 127.0.0.1
// starts its Agent with WrapCommand and AllowedTCPConnect
// [127.0.0.1:P, localhost:Q]. The Agent (this test binary, re-executed)
// confines itself further with ApplySelf, as the seeds' Agent does, then
// talks to the Engine the ways real programs do: a raw net.Dial with a
// request/response exchange (gRPC-style framing), http.DefaultClient
// (which never uses a proxy for loopback), a raw dial of the name. Ports
// not on the list fail, and their listener counts no connection; an
// allowed port at an address no entry names reaches the caller, which
// resets it and reports it. The Engine ends by reading the Agent's canary
// result, fresh and verified. Only 127.0.0.0/8 and ::1 are used.

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/openparallax/sandbox"
	"github.com/openparallax/sandbox/internal/childtest"
)

// seedsReport is what the Agent found.
type seedsReport struct {
	Apply      string // ApplySelf's error, "" when none
	Exchange   string // the Engine's answer through the raw dial
	HTTP       string // the body http.DefaultClient got from localhost:Q
	NameDial   string // the raw dial of localhost:Q: "" or its error
	RefusedIP  string // dial 127.0.0.1:R
	RefusedNm  string // dial localhost:R
	OtherAddr  string // an exchange with 127.0.0.2:P (no entry names it)
	CanaryErr  string
	Verified   bool
	CanaryText string
}

// seedsConfig is the Agent's Config, the Engine's and the Agent's own.
func seedsConfig(ws string, p, q uint16) sandbox.Config {
	return sandbox.Config{
		AllowedTCPConnect: []string{fmt.Sprintf("127.0.0.1:%d", p), fmt.Sprintf("localhost:%d", q)},
		AllowedWritePaths: []string{ws},
	}
}

// exchangeFrame sends one length-prefixed request on c and reads the
// length-prefixed answer.
func exchangeFrame(c net.Conn, req string) (string, error) {
	c.SetDeadline(time.Now().Add(10 * time.Second))
	b := binary.BigEndian.AppendUint32(nil, uint32(len(req)))
	if _, err := c.Write(append(b, req...)); err != nil {
		return "", err
	}
	var n [4]byte
	if _, err := io.ReadFull(c, n[:]); err != nil {
		return "", err
	}
	ans := make([]byte, min(binary.BigEndian.Uint32(n[:]), 1<<16))
	_, err := io.ReadFull(c, ans)
	return string(ans), err
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func init() {
	// seeds-agent WS P Q R: the Agent.
	childHelpers["seeds-agent"] = func(args []string) int {
		ws := args[0]
		port := func(s string) uint16 { n, _ := strconv.Atoi(s); return uint16(n) }
		p, q, r := port(args[1]), port(args[2]), args[3]
		var rep seedsReport
		cfg := seedsConfig(ws, p, q)
		rep.Apply = errText(sandbox.New().ApplySelf(cfg))
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", p)); err != nil {
			rep.Exchange = "dial: " + err.Error()
		} else {
			rep.Exchange, err = exchangeFrame(c, "hello engine")
			if err != nil {
				rep.Exchange += " error: " + err.Error()
			}
			c.Close()
		}
		if resp, err := http.DefaultClient.Get(fmt.Sprintf("http://localhost:%d/task", q)); err != nil {
			rep.HTTP = "error: " + err.Error()
		} else {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			rep.HTTP = string(b)
		}
		if c, err := net.Dial("tcp", fmt.Sprintf("localhost:%d", q)); err != nil {
			rep.NameDial = err.Error()
		} else {
			c.Close()
		}
		dialErr := func(addr string) string {
			c, err := net.DialTimeout("tcp", addr, 5*time.Second)
			if err == nil {
				c.Close()
				return "connected"
			}
			switch {
			case errors.Is(err, syscall.EACCES):
				return "EACCES"
			case errors.Is(err, syscall.ECONNREFUSED):
				return "ECONNREFUSED"
			}
			return err.Error()
		}
		rep.RefusedIP = dialErr("127.0.0.1:" + r)
		rep.RefusedNm = dialErr("localhost:" + r)
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.2:%d", p)); err != nil {
			rep.OtherAddr = "dial: " + err.Error()
		} else {
			ans, err := exchangeFrame(c, "hello other")
			rep.OtherAddr = ans + " / " + errText(err)
			c.Close()
		}
		res := sandbox.VerifyCanaryFor(cfg)
		res.Nonce = os.Getenv(sandbox.CanaryNonceEnv)
		rep.Verified, rep.CanaryText = res.Verified, res.Summary
		rep.CanaryErr = errText(sandbox.WriteCanaryResult(ws, res))
		json.NewEncoder(os.Stdout).Encode(rep)
		return 0
	}
}

// countingTCP listens on 127.0.0.1 and counts the connections it accepts.
func countingTCP(t *testing.T, handle func(net.Conn)) (uint16, *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
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
				if handle != nil {
					handle(c)
				}
			}()
		}
	}()
	return uint16(l.Addr().(*net.TCPAddr).Port), &n
}

func TestEgressSeedsScenario(t *testing.T) { seedsScenario(t) }

func TestEgressSeedsScenarioAsNobody(t *testing.T) {
	requireSandbox(t)
	if os.Geteuid() == 0 && !childtest.AsNobody(t) {
		return
	}
	seedsScenario(t)
}

func seedsScenario(t *testing.T) {
	requireSandbox(t)
	ws := realTempDir(t)
	// The Engine: a framed request/response service on P, an HTTP API on
	// Q (the name entry, localhost:Q), and R, which nobody may reach.
	p, _ := countingTCP(t, func(c net.Conn) {
		for {
			var n [4]byte
			if _, err := io.ReadFull(c, n[:]); err != nil {
				return
			}
			req := make([]byte, min(binary.BigEndian.Uint32(n[:]), 1<<16))
			if _, err := io.ReadFull(c, req); err != nil {
				return
			}
			ans := "engine got " + string(req)
			c.Write(append(binary.BigEndian.AppendUint32(nil, uint32(len(ans))), ans...))
		}
	})
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "task for %s", r.Host)
	}))
	t.Cleanup(api.Close)
	q := uint16(api.Listener.Addr().(*net.TCPAddr).Port)
	r, rCount := countingTCP(t, nil)
	cfg := seedsConfig(ws, p, q)
	requireEgress(t, cfg)

	nonce := sandbox.NewCanaryNonce()
	cmd := exec.Command(self(t), helperArg, "seeds-agent", ws, strconv.Itoa(int(p)), strconv.Itoa(int(q)), strconv.Itoa(int(r)))
	cmd.Env = []string{"PATH=/usr/bin:/bin", quickExit, sandbox.CanaryNonceEnv + "=" + nonce}
	if err := sandbox.New().WrapCommand(cmd, cfg); err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := outputWithin(cmd, time.Minute)
	rep, _ := sandbox.FinishCommand(cmd)
	if err != nil {
		t.Fatalf("the Agent: %v\n%s\n%s", err, out, stderr.String())
	}
	var got seedsReport
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("the Agent's report: %v\n%s\n%s", err, out, stderr.String())
	}
	// Landlock refuses a port not on the list in the kernel (EACCES); a
	// kernel whose Landlock has no TCP rules (ABI < 4: the plan reports
	// tcp_connect not enforced) leaves it to the namespace, where nothing
	// listens on R: refused there, and reaching nothing all the same (R's
	// listener counts no connection, below).
	refused := "EACCES"
	if st := sandbox.Probe(); st.Version < 4 {
		refused = "ECONNREFUSED"
		t.Logf("Landlock ABI %d has no TCP rules: a port not on the list is refused by the namespace (ECONNREFUSED), not by Landlock", st.Version)
	}
	want := seedsReport{
		Exchange: "engine got hello engine", HTTP: fmt.Sprintf("task for localhost:%d", q),
		RefusedIP: refused, RefusedNm: refused,
	}
	for name, c := range map[string][2]string{
		"ApplySelf":                 {got.Apply, want.Apply},
		"raw dial + exchange (P)":   {got.Exchange, want.Exchange},
		"http.DefaultClient (Q)":    {got.HTTP, want.HTTP},
		"raw dial of localhost:Q":   {got.NameDial, want.NameDial},
		"dial 127.0.0.1:R":          {got.RefusedIP, want.RefusedIP},
		"dial localhost:R":          {got.RefusedNm, want.RefusedNm},
		"writing the canary result": {got.CanaryErr, ""},
	} {
		if c[0] != c[1] {
			t.Errorf("%s: %q, want %q", name, c[0], c[1])
		}
	}
	// The caller takes the connection and resets it: the Agent sees the
	// reset at connect (when it arrives first) or at its first read.
	if strings.Contains(got.OtherAddr, "engine got") || !strings.Contains(got.OtherAddr, "reset by peer") {
		t.Errorf("an exchange with 127.0.0.2:%d (no entry names it): %q, want it reset", p, got.OtherAddr)
	}
	if n := rCount.Load(); n != 0 {
		t.Errorf("R's listener accepted %d connections, want 0", n)
	}
	// The refused address reached the caller and is reported; R never
	// did (Landlock refused it in the kernel).
	found := false
	for _, d := range rep.DeniedRequests {
		if d.Protocol == "tcp" && d.Host == "127.0.0.2" && d.Port == p && d.Reason == "not-allowed" {
			found = true
		}
		if d.Port == r {
			t.Errorf("a refusal of R reached the caller: %+v", d)
		}
	}
	if !found {
		t.Errorf("DeniedRequests %+v: want tcp 127.0.0.2:%d not-allowed", rep.DeniedRequests, p)
	}
	if res := sandbox.ReadFreshCanaryResult(ws, nonce, time.Minute); !res.Verified {
		t.Errorf("the Engine's ReadFreshCanaryResult: %s (the Agent saw: %s)", res.Summary, got.CanaryText)
	}
}

// outputWithin is cmd.Output with a deadline: a hang fails the test.
func outputWithin(cmd *exec.Cmd, d time.Duration) ([]byte, error) {
	var stdout strings.Builder
	cmd.Stdout = &stdout
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return []byte(stdout.String()), err
	case <-time.After(d):
		cmd.Process.Kill()
		<-done
		return []byte(stdout.String()), fmt.Errorf("did not finish within %v", d)
	}
}
