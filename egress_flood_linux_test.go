//go:build linux

package sandbox_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openparallax/sandbox"
)

func init() {
	// egress-flood TARGET N:BYTES:FIELD...: for each wave, N connections to
	// the proxy (HTTP_PROXY), each sending a request head for TARGET of
	// about BYTES bytes of header fields with FIELD-byte values that never
	// ends; every wave but the last waits for the proxy to end its
	// connections; "flooded" once every write has returned, then hold
	// every connection until stdin ends.
	childHelpers["egress-flood"] = func(args []string) int {
		proxy := strings.TrimPrefix(os.Getenv("HTTP_PROXY"), "http://")
		var conns []net.Conn
		for _, w := range args[1:] {
			var n, size, field int
			if _, err := fmt.Sscanf(w, "%d:%d:%d", &n, &size, &field); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 3
			}
			head := floodHead(args[0], size, field)
			var wg sync.WaitGroup
			for range n {
				c, err := net.Dial("tcp", proxy)
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					return 3
				}
				conns = append(conns, c)
				wg.Add(1)
				go func() { defer wg.Done(); c.Write(head) }() // a refused head is cut short
			}
			wg.Wait()
			if w != args[len(args)-1] {
				// Before the next wave, every connection of this one is
				// answered and closed by the proxy (or the test fails on
				// the count of refusals).
				for _, c := range conns[len(conns)-n:] {
					c.SetReadDeadline(time.Now().Add(10 * time.Second))
					io.Copy(io.Discard, c)
				}
			}
		}
		fmt.Println("flooded")
		io.Copy(io.Discard, os.Stdin)
		runtime.KeepAlive(conns)
		return 0
	}
}

// floodHead is a request head of about n bytes that never ends: header
// fields with distinct names and values of size bytes (tiny ones are the
// shape that costs net/http's parser the most memory per byte).
func floodHead(target string, n, size int) []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "GET http://%s/ HTTP/1.1\r\n", target)
	for i := 0; b.Len() < n-size-16; i++ {
		fmt.Fprintf(&b, "k%d:%s\r\n", i, strings.Repeat("v", size))
	}
	return b.Bytes()
}

// callerHeap is the test process's live heap, after a collection.
func callerHeap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// vmRSS is the test process's resident set, in KiB.
func vmRSS() int {
	b, _ := os.ReadFile("/proc/self/status")
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")))
			return n
		}
	}
	return 0
}

// TestEgressHeaderFlood is issue 27's reproduction: a program under a
// 64 MiB memory limit opens 64 connections to its proxy and sends each a
// request head of ~1 MiB of tiny header fields that never ends (which cost
// the caller ~10 MiB of heap per connection), then 64 more with heads just
// under the per-request bound, held open. The caller's heap grows by a few
// MiB at most, and the refusals are reported with their reasons.
func TestEgressHeaderFlood(t *testing.T) {
	w := newEgressWorld(t)
	cfg := w.cfg()
	cfg.Limits = sandbox.Limits{MemoryBytes: 64 << 20}
	requireEgress(t, cfg)
	target := fmt.Sprintf("plain.example.test:%d", w.plainPort)
	cmd := exec.Command(self(t), helperArg, "egress-flood", target, "64:1044480:0", "64:31744:1000")
	cmd.Env = []string{quickExit}
	if err := sandbox.New().WrapCommand(cmd, cfg); err != nil {
		t.Fatal(err)
	}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	before, rss0 := callerHeap(), vmRSS()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	line := make(chan string, 1)
	go func() { l, _ := bufio.NewReader(stdout).ReadString('\n'); line <- l }()
	select {
	case l := <-line:
		if l != "flooded\n" {
			t.Fatalf("flood program: %q, stderr:\n%s", l, stderr.String())
		}
	case <-time.After(60 * time.Second):
		t.Fatalf("the flood program did not finish its writes within 60 s; stderr:\n%s", stderr.String())
	}
	time.Sleep(300 * time.Millisecond) // the proxy reads what is in flight
	during, rss1 := callerHeap(), vmRSS()
	grew := int64(during) - int64(before)
	t.Logf("caller heap: %d KiB before, %d KiB with 128 flooding connections held (%+d KiB); RSS %d -> %d KiB",
		before>>10, during>>10, grew>>10, rss0, rss1)
	if grew > 8<<20 {
		t.Errorf("the flood grew the caller's heap by %d KiB, want at most 8 MiB", grew>>10)
	}
	stdin.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("flood program: %v; stderr:\n%s", err, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the flood program did not exit within 30 s of its stdin's end")
	}
	r, err := sandbox.FinishCommand(cmd)
	if err != nil {
		t.Error(err)
	}
	reasons := map[string]int{}
	for _, d := range r.DeniedRequests {
		reasons[d.Reason]++
	}
	t.Logf("refusals by reason: %v", reasons)
	if reasons["request-too-large"] != 64 || reasons["proxy-busy"] == 0 {
		t.Errorf("DeniedRequests by reason %v: want 64 request-too-large (the 1 MiB heads) and some proxy-busy (64 heads of 31 KiB exceed the sandbox's 1 MiB)", reasons)
	}
}
