//go:build linux

package sandbox_test

// Egress by host name under Run and WrapCommand, with real clients (curl,
// Python's urllib, git) against local servers whose names the proxy
// resolves through the test hook (sandbox.SetEgressTestNet): names resolve
// to addresses of 203.0.113.0/24 (documentation, public to the proxy's
// address check), and the hook's dialer connects those to the local
// servers. Nothing is sent outside 127.0.0.0/8: a dial to any other
// address fails the test and sends nothing; that the namespace reaches
// nothing else is shown by its having no interface but lo and no route.

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/openparallax/sandbox"
	"github.com/openparallax/sandbox/internal/childtest"
	"github.com/openparallax/sandbox/internal/egress/egresstest"
	"github.com/openparallax/sandbox/internal/rawsys"
)

// fakeNet is the test's view of the caller's network (see the file's doc
// and egresstest.Net).
type fakeNet = egresstest.Net

// newFakeNet installs a fake network for the egress proxies of this test.
func newFakeNet(t testing.TB) *fakeNet {
	f := egresstest.NewNet(t)
	t.Cleanup(sandbox.SetEgressTestNet(f.Resolve, f.Dial))
	return f
}

// echoHandler answers "METHOD host path body".
var echoHandler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	fmt.Fprintf(w, "%s %s %s %s", r.Method, r.Host, r.URL.Path, body)
})

// egressWorld is a plain and a TLS server under fake names, a name rebound
// to 127.0.0.1, and a directory every run may read (the CA).
type egressWorld struct {
	net                   *fakeNet
	dir, caFile           string
	plainPort, securePort uint16
	plain, secure         string // base URLs
	plainReal             string // the plain server's real address, on the caller's loopback
}

func newEgressWorld(t *testing.T) *egressWorld {
	t.Helper()
	f := newFakeNet(t)
	dir := realTempDir(t)
	os.Chmod(dir, 0o755)
	plain := httptest.NewServer(echoHandler)
	t.Cleanup(plain.Close)
	cert, caFile := egresstest.CA(t, dir, "secure.example.test")
	secure := httptest.NewUnstartedServer(echoHandler)
	secure.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	secure.StartTLS()
	t.Cleanup(secure.Close)
	w := &egressWorld{net: f, dir: dir, caFile: caFile, plainReal: plain.Listener.Addr().String()}
	w.plainPort = f.Host("plain.example.test", plain.Listener.Addr().String())
	w.securePort = f.Host("secure.example.test", secure.Listener.Addr().String())
	f.Alias("rebind.example.test", "127.0.0.1")
	w.plain = fmt.Sprintf("http://plain.example.test:%d", w.plainPort)
	w.secure = fmt.Sprintf("https://secure.example.test:%d", w.securePort)
	return w
}

// cfg allows the plain and secure servers and the rebound name, lets the
// program run what is in /usr/bin and /bin, and read the world's directory.
func (w *egressWorld) cfg() sandbox.Config {
	return sandbox.Config{
		AllowedTCPConnect: []string{
			fmt.Sprintf("plain.example.test:%d", w.plainPort),
			fmt.Sprintf("secure.example.test:%d", w.securePort),
			fmt.Sprintf("rebind.example.test:%d", w.plainPort),
		},
		AllowedReadPaths: []string{w.dir},
		AllowedExecPaths: []string{"/usr/bin", "/bin"},
	}
}

// requireEgress skips, with the reason, where cfg's host names are not
// enforced by the namespace and proxy.
func requireEgress(t *testing.T, cfg sandbox.Config) {
	t.Helper()
	requireSandbox(t)
	p, err := sandbox.PlanFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if p.Egress == nil || p.Egress.Mode != sandbox.EgressProxy && p.Egress.Mode != sandbox.EgressTransparent {
		t.Skipf("host names are not enforced by a namespace and proxy here: %+v", p.Egress)
	}
}

func runIn(t *testing.T, cfg sandbox.Config, name string, args ...string) sandbox.RunResult {
	t.Helper()
	res, err := sandbox.Run(context.Background(), cfg, name, args, sandbox.RunOptions{
		Env: []string{"PATH=/usr/bin:/bin", quickExit}, Timeout: time.Minute})
	if err != nil {
		t.Fatalf("Run %s: %v\nstderr:\n%s", name, err, res.Stderr)
	}
	return res
}

// lastDenied is the newest refusal of res, failing when there is none.
func lastDenied(t *testing.T, res sandbox.RunResult) sandbox.DeniedRequest {
	t.Helper()
	if len(res.DeniedRequests) == 0 {
		t.Fatalf("no refused request in RunResult.DeniedRequests")
	}
	return res.DeniedRequests[len(res.DeniedRequests)-1]
}

func TestEgressCurl(t *testing.T) {
	curl := need(t, "/usr/bin/curl", "curl")
	w := newEgressWorld(t)
	cfg := w.cfg()
	requireEgress(t, cfg)
	flags := []string{"-sS", "--max-time", "20"}

	// Plain HTTP (an absolute-URI request) and TLS (CONNECT), through the
	// variables the sandbox set.
	res := runIn(t, cfg, curl, append(flags, w.plain+"/plain")...)
	if res.ExitCode != 0 || !strings.HasPrefix(string(res.Stdout), "GET plain.example.test:") {
		t.Errorf("curl http: exit %d, %q %q", res.ExitCode, res.Stdout, res.Stderr)
	}
	res = runIn(t, cfg, curl, append(flags, "--cacert", w.caFile, w.secure+"/tls")...)
	if res.ExitCode != 0 || !strings.HasPrefix(string(res.Stdout), "GET secure.example.test:") {
		t.Errorf("curl https via CONNECT: exit %d, %q %q", res.ExitCode, res.Stdout, res.Stderr)
	}
	if len(res.DeniedRequests) != 0 {
		t.Errorf("allowed requests were recorded as refused: %+v", res.DeniedRequests)
	}

	// A host not on the list: 403 with the reason, reported.
	res = runIn(t, cfg, curl, append(flags, "-i", fmt.Sprintf("http://evil.example.test:%d/x", w.plainPort))...)
	if !strings.HasPrefix(string(res.Stdout), "HTTP/1.1 403") || !strings.Contains(string(res.Stdout), "X-Sandbox-Denied: not-allowed") {
		t.Errorf("curl to a host not on the list: %q, want 403 with X-Sandbox-Denied", res.Stdout)
	}
	if d := lastDenied(t, res); d.Host != "evil.example.test" || d.Port != w.plainPort || d.Reason != "not-allowed" || d.Protocol != "http" {
		t.Errorf("RunResult.DeniedRequests: %+v", res.DeniedRequests)
	}
	res = runIn(t, cfg, curl, append(flags, fmt.Sprintf("https://evil.example.test:%d/", w.securePort))...)
	if res.ExitCode == 0 || !strings.Contains(string(res.Stderr), "403") {
		t.Errorf("curl https to a host not on the list: exit %d %q, want a CONNECT refused with 403", res.ExitCode, res.Stderr)
	}
	if d := lastDenied(t, res); d.Host != "evil.example.test" || d.Protocol != "connect" {
		t.Errorf("RunResult.DeniedRequests: %+v", res.DeniedRequests)
	}

	// DNS rebinding: an allowed name that resolves to 127.0.0.1.
	res = runIn(t, cfg, curl, append(flags, "-i", fmt.Sprintf("http://rebind.example.test:%d/", w.plainPort))...)
	if !strings.HasPrefix(string(res.Stdout), "HTTP/1.1 403") || !strings.Contains(string(res.Stdout), "X-Sandbox-Denied: non-public-address") {
		t.Errorf("curl to a name rebound to 127.0.0.1: %q, want 403 non-public-address", res.Stdout)
	}
	if d := lastDenied(t, res); d.Host != "rebind.example.test" || d.Reason != "non-public-address" {
		t.Errorf("RunResult.DeniedRequests: %+v", res.DeniedRequests)
	}

	// SOCKS5 with host names (ALL_PROXY's socks5h://), allowed and not.
	p, _ := sandbox.PlanFor(cfg)
	socks := "socks5h://" + p.Egress.Proxy
	res = runIn(t, cfg, curl, append(flags, "-x", socks, w.plain+"/socks")...)
	if res.ExitCode != 0 || !strings.HasPrefix(string(res.Stdout), "GET plain.example.test:") {
		t.Errorf("curl via SOCKS5: exit %d, %q %q", res.ExitCode, res.Stdout, res.Stderr)
	}
	res = runIn(t, cfg, curl, append(flags, "-x", socks, fmt.Sprintf("http://evil.example.test:%d/", w.plainPort))...)
	if res.ExitCode == 0 {
		t.Errorf("curl via SOCKS5 to a host not on the list: exit 0 %q", res.Stdout)
	}
	if d := lastDenied(t, res); d.Host != "evil.example.test" || d.Protocol != "socks5" {
		t.Errorf("RunResult.DeniedRequests: %+v", res.DeniedRequests)
	}

	// Without the proxy: the caller's loopback server, by its real
	// address, is not there (lo is the namespace's own).
	res = runIn(t, cfg, curl, append(flags, "--noproxy", "*", "http://"+w.plainReal+"/")...)
	if res.ExitCode == 0 || strings.Contains(string(res.Stdout), "GET ") {
		t.Errorf("curl --noproxy to the caller's loopback server %s: exit %d %q, want a failure", w.plainReal, res.ExitCode, res.Stdout)
	}
}

const pythonClient = `
import os, ssl, sys, urllib.request, urllib.error
ctx = ssl.create_default_context(cafile=sys.argv[1])
opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=ctx))  # proxies from the environment
for url in sys.argv[2:]:
    try:
        data = b"python" if url.endswith("/post") else None
        with opener.open(url, data=data, timeout=20) as r:
            print(r.status, r.read().decode())
    except urllib.error.HTTPError as e:
        print(e.code, e.headers.get("X-Sandbox-Denied"))
    except Exception as e:
        print("ERR", type(e).__name__, e)
`

func TestEgressPythonUrllib(t *testing.T) {
	python := need(t, "/usr/bin/python3", "python3")
	w := newEgressWorld(t)
	cfg := w.cfg()
	requireEgress(t, cfg)
	res := runIn(t, cfg, python, "-c", pythonClient, w.caFile,
		w.plain+"/get", w.plain+"/post", w.secure+"/tls",
		fmt.Sprintf("http://evil.example.test:%d/", w.plainPort), fmt.Sprintf("http://rebind.example.test:%d/", w.plainPort))
	if res.ExitCode != 0 {
		t.Fatalf("python3: exit %d\n%s\n%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	lines := strings.Split(strings.TrimSpace(string(res.Stdout)), "\n")
	want := []string{
		fmt.Sprintf("200 GET plain.example.test:%d /get ", w.plainPort),
		fmt.Sprintf("200 POST plain.example.test:%d /post python", w.plainPort),
		"200 GET secure.example.test:",
		"403 not-allowed",
		"403 non-public-address",
	}
	if len(lines) != len(want) {
		t.Fatalf("python3 printed %q, want %d lines", res.Stdout, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(lines[i], want[i]) {
			t.Errorf("python3 line %d: %q, want %q...", i, lines[i], want[i])
		}
	}
	if len(res.DeniedRequests) != 2 || res.DeniedRequests[0].Host != "evil.example.test" || res.DeniedRequests[1].Host != "rebind.example.test" {
		t.Errorf("RunResult.DeniedRequests: %+v, want evil.example.test then rebind.example.test", res.DeniedRequests)
	}
}

func TestEgressGitClone(t *testing.T) {
	git := need(t, "/usr/bin/git", "git")
	out, err := exec.Command(git, "--exec-path").Output()
	if err != nil {
		t.Fatal(err)
	}
	execPath := strings.TrimSpace(string(out))
	backend := filepath.Join(execPath, "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		t.Skipf("git-http-backend not found (%v): the git clone test needs it", err)
	}
	root, _ := filepath.EvalSymlinks(t.TempDir())
	env := []string{"HOME=" + root, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.test",
		"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.test", "PATH=/usr/bin:/bin"}
	run := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command(git, args...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	src := filepath.Join(root, "src")
	os.Mkdir(src, 0o755)
	run(src, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(src, "README"), []byte("through the proxy\n"), 0o644)
	run(src, "add", "README")
	run(src, "commit", "-q", "-m", "first")
	run(root, "clone", "-q", "--bare", src, filepath.Join(root, "srv", "repo.git"))
	srv := httptest.NewServer(&cgi.Handler{Path: backend,
		Env: []string{"GIT_PROJECT_ROOT=" + filepath.Join(root, "srv"), "GIT_HTTP_EXPORT_ALL=1"}})
	defer srv.Close()

	f := newFakeNet(t)
	port := f.Host("git.example.test", srv.Listener.Addr().String())
	ws := filepath.Join(root, "ws")
	os.Mkdir(ws, 0o755)
	cfg := sandbox.Config{
		AllowedTCPConnect: []string{fmt.Sprintf("git.example.test:%d", port)},
		AllowedWritePaths: []string{ws},
		AllowedExecPaths:  []string{"/usr/bin", "/bin", execPath},
		AllowProcessSpawn: true,
	}
	requireEgress(t, cfg)
	clone := func(url, dest string) (sandbox.RunResult, error) {
		return sandbox.Run(context.Background(), cfg, git, []string{"clone", "-q", url, dest}, sandbox.RunOptions{
			Dir: ws, Env: []string{"PATH=/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0"}, Timeout: time.Minute})
	}
	res, err := clone(fmt.Sprintf("http://git.example.test:%d/repo.git", port), filepath.Join(ws, "clone"))
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("git clone through the proxy: %v, exit %d\n%s", err, res.ExitCode, res.Stderr)
	}
	if b, err := os.ReadFile(filepath.Join(ws, "clone", "README")); err != nil || string(b) != "through the proxy\n" {
		t.Errorf("cloned README: %q, %v", b, err)
	}
	res, err = clone(fmt.Sprintf("http://evil.example.test:%d/repo.git", port), filepath.Join(ws, "evil"))
	if err != nil || res.ExitCode == 0 || !strings.Contains(string(res.Stderr), "403") {
		t.Errorf("git clone from a host not on the list: %v, exit %d %q, want a failure naming 403", err, res.ExitCode, res.Stderr)
	}
	if d := lastDenied(t, res); d.Host != "evil.example.test" {
		t.Errorf("RunResult.DeniedRequests: %+v", res.DeniedRequests)
	}
}

// netView is what egressNetHelper reports from inside the sandbox.
type netView struct {
	Interfaces []string
	Routes4    []string
	Routes6    []string // devices of the IPv6 routes
	Proxy      string   // HTTP_PROXY
	CallerErr  int      // errno of a raw connect to the caller's loopback server
	CallerRead int      // errno of a read on that connection when it was made (0: end of file)
	ProxyErr   int      // errno of a raw connect to the proxy
	OtherErr   int      // errno of a raw connect to a loopback port of the namespace
}

func init() {
	childHelpers["egress-netview"] = func(args []string) int {
		var v netView
		dev, _ := os.ReadFile("/proc/self/net/dev")
		for _, line := range strings.Split(string(dev), "\n")[2:] {
			if name, _, ok := strings.Cut(line, ":"); ok {
				v.Interfaces = append(v.Interfaces, strings.TrimSpace(name))
			}
		}
		r4, _ := os.ReadFile("/proc/self/net/route")
		v.Routes4 = strings.Split(strings.TrimSpace(string(r4)), "\n")[1:]
		r6, _ := os.ReadFile("/proc/self/net/ipv6_route")
		for _, line := range strings.Split(strings.TrimSpace(string(r6)), "\n") {
			if f := strings.Fields(line); len(f) > 0 {
				v.Routes6 = append(v.Routes6, f[len(f)-1])
			}
		}
		v.Proxy = os.Getenv("HTTP_PROXY")
		connect := func(addr string) int {
			ap := netip.MustParseAddrPort(addr)
			fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
			if err != nil {
				return int(rawsys.Errno(err))
			}
			defer syscall.Close(fd)
			return int(rawsys.Errno(syscall.Connect(fd, &syscall.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()})))
		}
		v.CallerErr, v.CallerRead = connectRead(args[0])
		v.ProxyErr = connect(strings.TrimPrefix(v.Proxy, "http://"))
		v.OtherErr = connect("127.0.0.1:1")
		json.NewEncoder(os.Stdout).Encode(v)
		return 0
	}
}

// connectRead connects to addr with a raw socket and, when that works,
// reads once (at most 10 s): the errnos of both.
func connectRead(addr string) (int, int) {
	ap := netip.MustParseAddrPort(addr)
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		return int(rawsys.Errno(err)), 0
	}
	defer syscall.Close(fd)
	if err := syscall.Connect(fd, &syscall.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}); err != nil {
		return int(rawsys.Errno(err)), 0
	}
	syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &syscall.Timeval{Sec: 10})
	_, err = syscall.Read(fd, make([]byte, 1))
	return 0, int(rawsys.Errno(err))
}

// TestEgressNamespace: the program's namespace has lo and nothing else, no
// route off it, and the proxy variables; a raw connect reaches the proxy,
// and no other port (Landlock). With the transparent path, a raw connect
// to the caller's loopback server's address and an allowed port is taken
// by the caller's listener and reset: 127.0.0.1 is no rule's address, and
// the only name that resolves there (rebind.example.test) is refused by
// the rebinding filter.
func TestEgressNamespace(t *testing.T) {
	w := newEgressWorld(t)
	cfg := w.cfg()
	requireEgress(t, cfg)
	res := runIn(t, cfg, self(t), helperArg, "egress-netview", w.plainReal)
	var v netView
	if err := json.Unmarshal(res.Stdout, &v); err != nil {
		t.Fatalf("helper: %v\n%s\n%s", err, res.Stdout, res.Stderr)
	}
	if len(v.Interfaces) != 1 || v.Interfaces[0] != "lo" {
		t.Errorf("interfaces in the sandbox's namespace: %v, want only lo", v.Interfaces)
	}
	if len(v.Routes4) != 0 {
		t.Errorf("IPv4 routes in the sandbox's namespace: %v, want none", v.Routes4)
	}
	for _, d := range v.Routes6 {
		if d != "lo" {
			t.Errorf("IPv6 route through %s in the sandbox's namespace", d)
		}
	}
	p, _ := sandbox.PlanFor(cfg)
	if v.Proxy != "http://"+p.Egress.Proxy {
		t.Errorf("HTTP_PROXY=%q, want http://%s (Plan.Egress.Proxy)", v.Proxy, p.Egress.Proxy)
	}
	if v.ProxyErr != 0 {
		t.Errorf("raw connect to the proxy: %v, want success", syscall.Errno(v.ProxyErr))
	}
	// Landlock refuses every port but the proxy's where it can restrict
	// TCP ports (ABI 4+). Before that only the namespace stands between
	// the program and the caller's loopback: its own lo, where nothing but
	// the proxy listens, refuses the connection.
	want, why := syscall.EACCES, "Landlock: only the proxy's port"
	if abi := sandbox.Probe().Version; abi < 4 {
		want, why = syscall.ECONNREFUSED, fmt.Sprintf("Landlock ABI %d cannot restrict ports: the namespace's own lo, where nothing listens there", abi)
	}
	switch {
	case p.Egress.Mode == sandbox.EgressTransparent:
		// The caller's listener takes the connection and resets it. The
		// reset can arrive before the blocking connect(2) has returned
		// (a slow guest: the state is closed by then, and connect reports
		// the reset itself) or after (the read does): both are the
		// refusal; a relayed connection would read data or time out.
		reset := v.CallerErr == 0 && syscall.Errno(v.CallerRead) == syscall.ECONNRESET ||
			syscall.Errno(v.CallerErr) == syscall.ECONNRESET && v.CallerRead == 0
		if !reset {
			t.Errorf("raw connect to %s (an allowed port) and read: %v, %v; want the caller's listener to take it and reset it", w.plainReal, syscall.Errno(v.CallerErr), syscall.Errno(v.CallerRead))
		}
		if d := lastDenied(t, res); d.Protocol != "tcp" || d.Host != "rebind.example.test" || d.Reason != "non-public-address" {
			t.Errorf("the refused connection's report: %+v", d)
		}
	case syscall.Errno(v.CallerErr) != want:
		t.Errorf("raw connect to the caller's loopback server %s: %v, want %v (%s)", w.plainReal, syscall.Errno(v.CallerErr), want, why)
	}
	if e := syscall.Errno(v.OtherErr); e != want {
		t.Errorf("raw connect to 127.0.0.1:1: %v, want %v (%s)", e, want, why)
	}
}

// TestEgressConcurrentRuns: 50 Runs at once, each with its own allowlist
// of one host, each refused the next one's host: every run reaches its own
// host, is refused the other, and reports only its own refusal.
func TestEgressConcurrentRuns(t *testing.T) {
	curl := need(t, "/usr/bin/curl", "curl")
	f := newFakeNet(t)
	srv := httptest.NewServer(echoHandler)
	defer srv.Close()
	const n = 50
	var port uint16
	for i := 0; i < n; i++ {
		port = f.Host(fmt.Sprintf("h%d.example.test", i), srv.Listener.Addr().String())
	}
	cfgOf := func(i int) sandbox.Config {
		return sandbox.Config{AllowedTCPConnect: []string{fmt.Sprintf("h%d.example.test:%d", i, port)}}
	}
	requireEgress(t, cfgOf(0))
	var wg sync.WaitGroup
	errs := make(chan string, n)
	for i := 0; i < n; i++ {
		wg.Go(func() {
			own := fmt.Sprintf("http://h%d.example.test:%d/own", i, port)
			other := fmt.Sprintf("http://h%d.example.test:%d/other", (i+1)%n, port)
			res, err := sandbox.Run(context.Background(), cfgOf(i), curl,
				[]string{"-sS", "--max-time", "30", "-o", "/dev/null", "-w", "%{http_code} ", own, "-o", "/dev/null", other},
				sandbox.RunOptions{Env: []string{"PATH=/usr/bin:/bin"}, Timeout: 2 * time.Minute})
			switch {
			case err != nil:
				errs <- fmt.Sprintf("run %d: %v", i, err)
			case string(res.Stdout) != "200 403 ":
				errs <- fmt.Sprintf("run %d: status codes %q (own, other), want \"200 403 \"; stderr %q", i, res.Stdout, res.Stderr)
			case len(res.DeniedRequests) != 1 || res.DeniedRequests[0].Host != fmt.Sprintf("h%d.example.test", (i+1)%n):
				errs <- fmt.Sprintf("run %d: DeniedRequests %+v, want only h%d.example.test", i, res.DeniedRequests, (i+1)%n)
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

// openFDs counts this process's open descriptors.
func openFDs(t *testing.T) int { return len(fdLinks(t)) }

// fdLinks lists this process's open descriptors and what they are.
func fdLinks(t *testing.T) []string {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		l, _ := os.Readlink("/proc/self/fd/" + e.Name())
		out = append(out, e.Name()+" "+l)
	}
	return out
}

// settle waits (at most 5 s) for the goroutine and descriptor counts to
// come back to at most the baseline, and reports the last counts. It
// collects garbage first: the relays' io.Copy between TCP connections uses
// splice(2) through pipes that the runtime pools (internal/poll) and closes
// only when the pool is collected.
func settle(t *testing.T, goroutines, fds int) (int, int) {
	var g, f int
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		runtime.GC()
		g, f = runtime.NumGoroutine(), openFDs(t)
		if g <= goroutines && f <= fds {
			break
		}
	}
	return g, f
}

// TestEgressNoLeak: Runs with a proxy, one of them killed by its timeout
// with a connection open through the proxy, leave no goroutine and no
// descriptor behind.
func TestEgressNoLeak(t *testing.T) {
	curl := need(t, "/usr/bin/curl", "curl")
	w := newEgressWorld(t)
	cfg := w.cfg()
	requireEgress(t, cfg)
	// Warm up what is made once per process (the namespace probe, the
	// helper's memfd, the race detector's state).
	runIn(t, cfg, curl, "-sS", "--max-time", "20", w.plain+"/warm")
	http.DefaultClient.CloseIdleConnections()
	g0, f0 := runtime.NumGoroutine(), openFDs(t)

	for i := 0; i < 5; i++ {
		res := runIn(t, cfg, curl, "-sS", "--max-time", "20", w.plain+"/run", fmt.Sprintf("http://evil.example.test:%d/", w.plainPort))
		if !strings.HasPrefix(string(res.Stdout), "GET ") || len(res.DeniedRequests) != 1 {
			t.Fatalf("run %d: %q, %+v", i, res.Stdout, res.DeniedRequests)
		}
	}
	// A run killed while a tunnel through the proxy is open (the program
	// holds a CONNECT to the TLS server without speaking).
	python := need(t, "/usr/bin/python3", "python3")
	hold := `import os, socket, time
s = socket.create_connection(("127.0.0.1", int(os.environ["HTTP_PROXY"].rsplit(":", 1)[1])))
s.sendall(b"CONNECT secure.example.test:` + strconv.Itoa(int(w.securePort)) + ` HTTP/1.1\r\nHost: x\r\n\r\n")
print(s.recv(100).decode().split("\r\n")[0], flush=True)
time.sleep(60)`
	res, err := sandbox.Run(context.Background(), cfg, python, []string{"-c", hold},
		sandbox.RunOptions{Env: []string{"PATH=/usr/bin:/bin"}, Timeout: 3 * time.Second})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.HasPrefix(string(res.Stdout), "HTTP/1.1 200") {
		t.Errorf("held tunnel: %v, %q %q; want a 200 to CONNECT, then the timeout", err, res.Stdout, res.Stderr)
	}
	http.DefaultClient.CloseIdleConnections()
	if g, f := settle(t, g0, f0); g > g0 || f > f0 {
		t.Errorf("after the runs: %d goroutines (before %d), %d descriptors (before %d): %v", g, g0, f, f0, fdLinks(t))
	}
}

// TestEgressWrapCommand: a WrapCommand caller gets the proxy with
// EgressOf, reads the refusals, and closes it.
func TestEgressWrapCommand(t *testing.T) {
	curl := need(t, "/usr/bin/curl", "curl")
	w := newEgressWorld(t)
	cfg := w.cfg()
	requireEgress(t, cfg)
	g0, f0 := runtime.NumGoroutine(), openFDs(t)

	cmd := exec.Command(curl, "-sS", "--max-time", "20", w.plain+"/wrapped", fmt.Sprintf("http://evil.example.test:%d/", w.plainPort))
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	if err := sandbox.New().WrapCommand(cmd, cfg); err != nil {
		t.Fatal(err)
	}
	e := sandbox.EgressOf(cmd)
	if e == nil {
		t.Fatal("EgressOf(cmd) is nil after WrapCommand with host names")
	}
	p, _ := sandbox.PlanFor(cfg)
	if e.Addr() != p.Egress.Proxy {
		t.Errorf("Egress.Addr %q, Plan.Egress.Proxy %q", e.Addr(), p.Egress.Proxy)
	}
	out, err := cmd.Output()
	if err != nil || !strings.HasPrefix(string(out), "GET plain.example.test:") {
		t.Errorf("wrapped curl: %v %q", err, out)
	}
	d := e.Denied()
	if len(d) != 1 || d[0].Host != "evil.example.test" || d[0].Reason != "not-allowed" {
		t.Errorf("Egress.Denied: %+v", d)
	}
	// FinishCommand closes the proxy and reports the same refusals.
	if r, err := sandbox.FinishCommand(cmd); err != nil || len(r.DeniedRequests) != 1 || r.DeniedRequests[0] != d[0] {
		t.Errorf("FinishCommand: %+v, %v; want the refusal %+v", r, err, d[0])
	}
	if sandbox.EgressOf(cmd) != nil {
		t.Error("EgressOf(cmd) after FinishCommand: want nil (closed)")
	}
	if err := e.Close(); err != nil {
		t.Error(err)
	}
	if len(e.Denied()) != 1 {
		t.Error("Denied after Close lost the refusals")
	}

	// A wrapped command that is never started: Close still ends
	// everything.
	cmd = exec.Command(curl, "--version")
	if err := sandbox.New().WrapCommand(cmd, cfg); err != nil {
		t.Fatal(err)
	}
	sandbox.EgressOf(cmd).Close()
	if g, f := settle(t, g0, f0); g > g0 || f > f0 {
		t.Errorf("after Close: %d goroutines (before %d), %d descriptors (before %d)", g, g0, f, f0)
	}
}

// TestEgressPortOnly: a port-only entry keeps the host's network (no
// namespace, no proxy), and a Config mixing both says why hosts are not
// enforced, which Strict refuses.
func TestEgressPortOnly(t *testing.T) {
	requireSandbox(t)
	p, err := sandbox.PlanFor(sandbox.Config{AllowedTCPConnect: []string{"*:443"}})
	if err != nil {
		t.Fatal(err)
	}
	if p.Egress != nil {
		t.Errorf("port-only Config: Plan.Egress %+v, want nil", p.Egress)
	}
	mixed := sandbox.Config{AllowedTCPConnect: []string{"*:443", "example.com:22"}}
	p, err = sandbox.PlanFor(mixed)
	if err != nil {
		t.Fatal(err)
	}
	if p.Egress == nil || p.Egress.Mode != sandbox.EgressPortOnly || !strings.Contains(p.Egress.Reason, "*:443") {
		t.Errorf("mixed Config: Plan.Egress %+v, want port-only naming *:443", p.Egress)
	}
	mixed.Strict = true
	cmd := exec.Command("/bin/true")
	if err := sandbox.New().WrapCommand(cmd, mixed); !errors.Is(err, sandbox.ErrNotEnforced) || !strings.Contains(err.Error(), "tcp_connect_host") {
		t.Errorf("Strict with host names not enforced: %v, want ErrNotEnforced naming tcp_connect_host", err)
	}
	if sandbox.EgressOf(cmd) != nil {
		t.Error("EgressOf after a failed WrapCommand: want nil")
	}
}

func init() {
	// egress-canary CONFIG-JSON: VerifyCanaryFor(config), as JSON.
	childHelpers["egress-canary"] = func(args []string) int {
		var cfg sandbox.Config
		if err := json.Unmarshal([]byte(args[0]), &cfg); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 3
		}
		json.NewEncoder(os.Stdout).Encode(sandbox.VerifyCanaryFor(cfg))
		return 0
	}
}

// TestEgressCanary: under Run with host names, the canary's network probe
// is still blocked, and its positive control reaches an allowed host
// through the proxy (and a proxy that refused it would fail the control).
func TestEgressCanary(t *testing.T) {
	w := newEgressWorld(t)
	for _, c := range []struct {
		name    string
		connect string
		want    string // control_egress status
	}{
		{"allowed", fmt.Sprintf("secure.example.test:%d", w.securePort), sandbox.ProbeAllowed},
		// Rebound to 127.0.0.1: the proxy refuses an allowed name, so
		// the control must fail.
		{"refused", fmt.Sprintf("rebind.example.test:%d", w.plainPort), sandbox.ProbeFailed},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := sandbox.Config{AllowedTCPConnect: []string{c.connect}}
			requireEgress(t, cfg)
			js, _ := json.Marshal(cfg)
			res := runIn(t, cfg, self(t), helperArg, "egress-canary", string(js))
			var r sandbox.CanaryResult
			if err := json.Unmarshal(res.Stdout, &r); err != nil {
				t.Fatalf("canary: %v\n%s\n%s", err, res.Stdout, res.Stderr)
			}
			got := map[string]sandbox.ProbeResult{}
			for _, p := range r.Probes {
				got[p.Name] = p
			}
			// The network probe needs Landlock's port rules (ABI 4+);
			// before that the canary skips it, saying why.
			if abi := sandbox.Probe().Version; abi >= 4 {
				if p := got["network"]; p.Status != sandbox.ProbeBlocked {
					t.Errorf("network probe: %+v, want blocked", p)
				}
			} else if p := got["network"]; p.Status != sandbox.ProbeSkipped {
				t.Errorf("network probe on Landlock ABI %d: %+v, want skipped", abi, p)
			} else {
				t.Logf("network probe skipped on Landlock ABI %d: %s", abi, p.Error)
			}
			// UDP: allowed for the resolver with the transparent path,
			// and then proven contained; denied by seccomp otherwise.
			if p := got["udp"]; p.Status != sandbox.ProbeBlocked {
				t.Errorf("udp probe: %+v, want blocked", p)
			} else if pl, _ := sandbox.PlanFor(cfg); pl.Egress.Mode == sandbox.EgressTransparent && !strings.HasPrefix(p.Error, "contained:") {
				t.Errorf("udp probe with the transparent path: %+v, want contained", p)
			}
			if p := got["control_egress"]; p.Status != c.want {
				t.Errorf("control_egress: %+v, want %s", p, c.want)
			}
			if c.want == sandbox.ProbeAllowed && !r.Verified {
				t.Errorf("canary not verified: %s", r.Summary)
			}
		})
	}
}

// TestEgressAsNobody: an unprivileged caller (this test binary re-executed
// as nobody) gets the namespace through a user namespace, and the proxy
// works the same: curl over HTTP and CONNECT, a refusal reported, the
// namespace empty.
func TestEgressAsNobody(t *testing.T) {
	requireSandbox(t)
	if os.Geteuid() == 0 && !childtest.AsNobody(t) {
		return
	}
	curl := need(t, "/usr/bin/curl", "curl")
	w := newEgressWorld(t)
	cfg := w.cfg()
	requireEgress(t, cfg)
	res := runIn(t, cfg, curl, "-sS", "--max-time", "20", w.plain+"/plain", "--cacert", w.caFile, w.secure+"/tls",
		fmt.Sprintf("http://evil.example.test:%d/", w.plainPort))
	out := string(res.Stdout)
	if !strings.Contains(out, "GET plain.example.test:") || !strings.Contains(out, "GET secure.example.test:") {
		t.Errorf("curl as nobody through the proxy: exit %d %q %q", res.ExitCode, out, res.Stderr)
	}
	if d := lastDenied(t, res); d.Host != "evil.example.test" {
		t.Errorf("RunResult.DeniedRequests: %+v", res.DeniedRequests)
	}
	res = runIn(t, cfg, self(t), helperArg, "egress-netview", w.plainReal)
	var v netView
	if err := json.Unmarshal(res.Stdout, &v); err != nil {
		t.Fatalf("helper: %v\n%s\n%s", err, res.Stdout, res.Stderr)
	}
	if len(v.Interfaces) != 1 || v.Interfaces[0] != "lo" || len(v.Routes4) != 0 || v.ProxyErr != 0 {
		t.Errorf("the namespace as nobody: %+v", v)
	}
	if os.Geteuid() == 0 {
		t.Error("this part should run as nobody")
	}
}

// TestEgressSysProcAttrReplaced: a caller that drops CLONE_NEWNET from
// cmd.SysProcAttr after WrapCommand gets a child that refuses to start (it
// would otherwise listen on the caller's loopback, and Landlock's rule for
// the proxy's port would reach that port on every host).
func TestEgressSysProcAttrReplaced(t *testing.T) {
	w := newEgressWorld(t)
	cfg := w.cfg()
	requireEgress(t, cfg)
	cmd := exec.Command("/bin/true")
	if err := sandbox.New().WrapCommand(cmd, cfg); err != nil {
		t.Fatal(err)
	}
	defer sandbox.EgressOf(cmd).Close()
	if cmd.SysProcAttr == nil || cmd.SysProcAttr.Cloneflags&syscall.CLONE_NEWNET == 0 {
		t.Fatalf("WrapCommand with host names: SysProcAttr %+v, want CLONE_NEWNET", cmd.SysProcAttr)
	}
	cmd.SysProcAttr.Cloneflags &^= syscall.CLONE_NEWNET
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 125 || !strings.Contains(string(out), "not a new network namespace") {
		t.Errorf("without CLONE_NEWNET: %v %q, want exit 125 naming the network namespace", err, out)
	}
}

// TestEgressForgottenCommand: a WrapCommand caller that never closes the
// proxy of a command it no longer holds gets it closed by the collector.
func TestEgressForgottenCommand(t *testing.T) {
	w := newEgressWorld(t)
	cfg := w.cfg()
	requireEgress(t, cfg)
	g0, f0 := settle(t, 1<<30, 1<<30)
	func() {
		cmd := exec.Command("/bin/true")
		if err := sandbox.New().WrapCommand(cmd, cfg); err != nil {
			t.Fatal(err)
		}
		if err := cmd.Run(); err != nil {
			t.Fatal(err)
		}
		if sandbox.EgressOf(cmd) == nil {
			t.Fatal("no proxy")
		}
	}()
	if g, f := settle(t, g0, f0); g > g0 || f > f0 {
		t.Errorf("after the command was dropped: %d goroutines (before %d), %d descriptors (before %d): %v", g, g0, f, f0, fdLinks(t))
	}
}

// TestEgressWithLimits: the proxy and the tree's cgroup together (their
// descriptors side by side in the child): curl reaches an allowed host and
// is refused another, under a memory and process limit.
func TestEgressWithLimits(t *testing.T) {
	curl := need(t, "/usr/bin/curl", "curl")
	w := newEgressWorld(t)
	cfg := w.cfg()
	cfg.AllowProcessSpawn = true
	cfg.Limits = sandbox.Limits{MemoryBytes: 512 << 20, Processes: 64}
	requireEgress(t, cfg)
	res := runIn(t, cfg, curl, "-sS", "--max-time", "20", w.plain+"/limited", fmt.Sprintf("http://evil.example.test:%d/", w.plainPort))
	if !strings.HasPrefix(string(res.Stdout), "GET plain.example.test:") {
		t.Errorf("curl under limits through the proxy: exit %d %q %q", res.ExitCode, res.Stdout, res.Stderr)
	}
	if d := lastDenied(t, res); d.Host != "evil.example.test" {
		t.Errorf("RunResult.DeniedRequests: %+v", res.DeniedRequests)
	}
}
