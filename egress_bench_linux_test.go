//go:build linux

package sandbox_test

// The egress layer's cost, end to end under Run (issue 19's benchmarks):
// a 100 MB download by curl through the proxy against the same download
// without it, and the start-up cost of the namespace and the proxy against
// a port-only spawn. Rounds are interleaved, so that a loaded machine
// slows both sides alike; the figures are medians. Run with
//
//	SANDBOX_EGRESS_BENCH=1 go test -count=1 -v -run TestEgressBench .

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openparallax/sandbox"
)

func TestEgressBench(t *testing.T) {
	if os.Getenv("SANDBOX_EGRESS_BENCH") != "1" {
		t.Skip("a benchmark: set SANDBOX_EGRESS_BENCH=1 to run it")
	}
	curl := need(t, "/usr/bin/curl", "curl")
	const size = 100 << 20
	chunk := make([]byte, 1<<20)
	// /fast sends as fast as the CPU allows (loopback: the relay's second
	// TCP hop costs as much as the first, on the same two cores as curl
	// and the server); /paced at most 125 MB/s, a 1 Gbit/s link, where
	// the relay should not be what limits the download.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(size))
		start := time.Now()
		for i := 0; i < size/len(chunk); i++ {
			if _, err := w.Write(chunk); err != nil {
				return
			}
			if r.URL.Path == "/paced" {
				time.Sleep(time.Until(start.Add(time.Duration(float64((i+1)*len(chunk)) / 125e6 * float64(time.Second)))))
			}
		}
	}))
	defer srv.Close()
	f := newFakeNet(t)
	port := f.Host("bulk.example.test", srv.Listener.Addr().String())
	direct := sandbox.Config{AllowedTCPConnect: []string{"*:" + strconv.Itoa(int(port))}}
	proxied := sandbox.Config{AllowedTCPConnect: []string{"bulk.example.test:" + strconv.Itoa(int(port))}}
	requireEgress(t, proxied)

	// curl's own transfer time (time_total), not the spawn's.
	download := func(cfg sandbox.Config, args ...string) float64 {
		res, err := sandbox.Run(context.Background(), cfg, curl,
			append([]string{"-sS", "-o", "/dev/null", "-w", "%{size_download} %{time_total}"}, args...),
			sandbox.RunOptions{Env: []string{"PATH=/usr/bin:/bin"}, Timeout: 2 * time.Minute})
		var n, secs float64
		if _, serr := fmt.Sscan(string(res.Stdout), &n, &secs); err != nil || serr != nil || n != size {
			t.Fatalf("download: %v %q %q", err, res.Stdout, res.Stderr)
		}
		return n / secs / 1e6
	}
	url := fmt.Sprintf("http://bulk.example.test:%d", port)
	type figures struct{ direct, http, connect []float64 }
	var fast, paced figures
	for round := 0; round < 5; round++ {
		for _, c := range []struct {
			f    *figures
			path string
		}{{&fast, "/fast"}, {&paced, "/paced"}} {
			c.f.direct = append(c.f.direct, download(direct, srv.URL+c.path))
			c.f.http = append(c.f.http, download(proxied, url+c.path))
			c.f.connect = append(c.f.connect, download(proxied, "--proxytunnel", url+c.path))
		}
	}

	spawn := func(cfg sandbox.Config) time.Duration {
		start := time.Now()
		res, err := sandbox.Run(context.Background(), cfg, "/bin/true", nil, sandbox.RunOptions{})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("spawn: %v %d %q", err, res.ExitCode, res.Stderr)
		}
		return time.Since(start)
	}
	// The middle column forces the Go trampoline (a re-exec of this test
	// binary) for the port-only spawn: the re-exec's cost, which the
	// namespace step paid before the helper had it, shown apart.
	var tPort, tTramp, tProxy []time.Duration
	spawn(direct)
	spawn(proxied)
	for i := 0; i < 30; i++ {
		tPort = append(tPort, spawn(direct))
		restore := sandbox.ForceGoTrampoline()
		tTramp = append(tTramp, spawn(direct))
		restore()
		tProxy = append(tProxy, spawn(proxied))
	}

	load, _ := os.ReadFile("/proc/loadavg")
	sp, st, sx := median(tPort), median(tTramp), median(tProxy)
	t.Logf("load average: %s", strings.TrimSpace(string(load)))
	for _, c := range []struct {
		name string
		f    figures
	}{{"loopback, unpaced", fast}, {"paced at 125 MB/s (1 Gbit/s)", paced}} {
		md, mh, mc := median(c.f.direct), median(c.f.http), median(c.f.connect)
		t.Logf("100 MB by curl under Run, %s, median of 5 interleaved rounds:", c.name)
		t.Logf("  direct (port-only, no namespace):  %7.0f MB/s", md)
		t.Logf("  through the proxy, absolute URI:   %7.0f MB/s  (%.2fx direct)", mh, mh/md)
		t.Logf("  through the proxy, CONNECT tunnel: %7.0f MB/s  (%.2fx direct)", mc, mc/md)
	}
	t.Logf("Run(/bin/true), median of 30 interleaved:")
	r := func(d time.Duration) time.Duration { return d.Round(10 * time.Microsecond) }
	t.Logf("  port-only, static helper:          %v", r(sp))
	t.Logf("  port-only, Go trampoline (forced): %v", r(st))
	t.Logf("  namespace + proxy (static helper): %v  (+%v over port-only, %.2fx)", r(sx), r(sx-sp), float64(sx)/float64(sp))
}

func median[T float64 | time.Duration](v []T) T {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}
