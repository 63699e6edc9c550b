package egress

// Real clients through the proxy: curl, Python's urllib and git, against
// local servers whose names the proxy resolves through the test's hook.

import (
	"crypto/tls"
	"fmt"
	"github.com/openparallax/sandbox/internal/egress/egresstest"
	"net/http/cgi"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// world is a proxy with an allowlist of local servers under fake names.
type world struct {
	p         *Proxy
	paddr     string
	env       []string // the proxy variables, as Env makes them
	caFile    string
	plainURL  string // http://plain.example.test:PORT
	secureURL string // https://secure.example.test:PORT
	port      uint16 // the plain server's port (for refused names)
}

func newWorld(t *testing.T) *world {
	f := newFakeNet(t)
	plain, _ := echoServer(t)
	cert, caFile := egresstest.CA(t, t.TempDir(), "secure.example.test")
	secure := httptest.NewUnstartedServer(plain.Config.Handler)
	secure.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	secure.StartTLS()
	t.Cleanup(secure.Close)
	pport := f.Host("plain.example.test", plain.Listener.Addr().String())
	sport := f.Host("secure.example.test", secure.Listener.Addr().String())
	f.Alias("rebind.example.test", "127.0.0.1")
	rules := []Rule{{Host: "plain.example.test", Port: pport}, {Host: "secure.example.test", Port: sport}, {Host: "rebind.example.test", Port: pport}}
	p, paddr := startProxy(t, f, rules...)
	allow, _ := NewAllowlist(rules)
	return &world{
		p: p, paddr: paddr, caFile: caFile, port: pport,
		env:       Env(netip.MustParseAddrPort(paddr), allow),
		plainURL:  fmt.Sprintf("http://plain.example.test:%d", pport),
		secureURL: fmt.Sprintf("https://secure.example.test:%d", sport),
	}
}

// run runs a program with the proxy variables (and no others from the
// test's environment) and returns its output and exit code.
func (w *world) run(t *testing.T, env []string, name string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = append(cleanEnv(t), env...)
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return string(out), code
}

// cleanEnv is the test's environment without proxy variables, with a
// private HOME (no user config for curl, git, pip).
func cleanEnv(t *testing.T) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(k) {
		case "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "HOME", "CURL_HOME", "XDG_CONFIG_HOME":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+t.TempDir(), "GIT_CONFIG_NOSYSTEM=1", "GIT_TERMINAL_PROMPT=0")
}

func need(t *testing.T, prog string) {
	if _, err := exec.LookPath(prog); err != nil {
		t.Skipf("%s is not installed: this real-client test needs it (CI installs it)", prog)
	}
}

// lastDenial returns the newest refusal, failing when there is none.
func (w *world) lastDenial(t *testing.T) Denial {
	t.Helper()
	d := w.p.Denied()
	if len(d) == 0 {
		t.Fatal("no refusal recorded")
	}
	return d[len(d)-1]
}

func TestCurl(t *testing.T) {
	need(t, "curl")
	w := newWorld(t)
	curl := []string{"-sS", "--max-time", "20"}

	// Through the variables Env makes: plain HTTP, and TLS via CONNECT.
	if out, code := w.run(t, w.env, "curl", append(curl, w.plainURL+"/via-env")...); code != 0 || !strings.HasPrefix(out, "GET plain.example.test:") {
		t.Errorf("curl http with the proxy env: exit %d %q", code, out)
	}
	if out, code := w.run(t, w.env, "curl", append(curl, "--cacert", w.caFile, w.secureURL+"/tls")...); code != 0 || !strings.HasPrefix(out, "GET secure.example.test:") {
		t.Errorf("curl https (CONNECT) with the proxy env: exit %d %q", code, out)
	}
	// Through SOCKS5, names resolved by the proxy.
	if out, code := w.run(t, nil, "curl", append(curl, "--proxy", "socks5h://"+w.paddr, w.plainURL+"/socks")...); code != 0 || !strings.HasPrefix(out, "GET plain.example.test:") {
		t.Errorf("curl via socks5h: exit %d %q", code, out)
	}
	if out, code := w.run(t, nil, "curl", append(curl, "--cacert", w.caFile, "--proxy", "socks5h://"+w.paddr, w.secureURL+"/socks-tls")...); code != 0 || !strings.HasPrefix(out, "GET secure.example.test:") {
		t.Errorf("curl https via socks5h: exit %d %q", code, out)
	}

	// A host not on the list: 403 with the reason header, recorded.
	out, _ := w.run(t, w.env, "curl", append(curl, "-i", fmt.Sprintf("http://evil.example.test:%d/", w.port))...)
	if !strings.HasPrefix(out, "HTTP/1.1 403") || !strings.Contains(out, DeniedHeader+": "+ReasonNotAllowed) {
		t.Errorf("curl to a host not on the list: %q, want 403 with %s", out, DeniedHeader)
	}
	if d := w.lastDenial(t); d.Host != "evil.example.test" || d.Port != w.port || d.Reason != ReasonNotAllowed || d.Protocol != "http" {
		t.Errorf("recorded %+v", d)
	}
	out, code := w.run(t, w.env, "curl", append(curl, fmt.Sprintf("https://evil.example.test:%d/", w.port))...)
	if code == 0 || !strings.Contains(out, "403") {
		t.Errorf("curl https to a host not on the list: exit %d %q, want a failed CONNECT with 403", code, out)
	}
	if d := w.lastDenial(t); d.Host != "evil.example.test" || d.Protocol != "connect" {
		t.Errorf("recorded %+v", d)
	}
	out, code = w.run(t, nil, "curl", append(curl, "--proxy", "socks5h://"+w.paddr, fmt.Sprintf("http://evil.example.test:%d/", w.port))...)
	if code != 97 && code != 7 { // 97: proxy handshake error (curl ≥ 7.73), 7 before
		t.Errorf("curl via socks5h to a host not on the list: exit %d %q", code, out)
	}
	if d := w.lastDenial(t); d.Host != "evil.example.test" || d.Protocol != "socks5" {
		t.Errorf("recorded %+v", d)
	}

	// DNS rebinding: an allowed name that resolves to 127.0.0.1.
	out, _ = w.run(t, w.env, "curl", append(curl, "-i", fmt.Sprintf("http://rebind.example.test:%d/", w.port))...)
	if !strings.HasPrefix(out, "HTTP/1.1 403") || !strings.Contains(out, DeniedHeader+": "+ReasonNonPublic) {
		t.Errorf("curl to a name rebound to 127.0.0.1: %q, want 403 %s", out, ReasonNonPublic)
	}
	if d := w.lastDenial(t); d.Host != "rebind.example.test" || d.Reason != ReasonNonPublic {
		t.Errorf("recorded %+v", d)
	}
}

const pythonClient = `
import os, ssl, sys, urllib.request, urllib.error
ctx = ssl.create_default_context(cafile=os.environ["CA_FILE"])
opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=ctx))  # proxies from the environment
for url in sys.argv[1:]:
    try:
        data = b"python" if url.endswith("/post") else None
        with opener.open(url, data=data, timeout=20) as r:
            print(r.status, r.read().decode())
    except urllib.error.HTTPError as e:
        print(e.code, e.headers.get("` + DeniedHeader + `"))
    except Exception as e:
        print("ERR", type(e).__name__, e)
`

func TestPythonUrllib(t *testing.T) {
	need(t, "python3")
	w := newWorld(t)
	env := append(w.env, "CA_FILE="+w.caFile)
	out, code := w.run(t, env, "python3", "-c", pythonClient,
		w.plainURL+"/get", w.plainURL+"/post", w.secureURL+"/tls",
		fmt.Sprintf("http://evil.example.test:%d/", w.port), fmt.Sprintf("http://rebind.example.test:%d/", w.port))
	if code != 0 {
		t.Fatalf("python3: exit %d\n%s", code, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	want := []string{
		fmt.Sprintf("200 GET plain.example.test:%d /get ", w.port),
		fmt.Sprintf("200 POST plain.example.test:%d /post python", w.port),
		"200 GET secure.example.test:",
		"403 " + ReasonNotAllowed,
		"403 " + ReasonNonPublic,
	}
	if len(lines) != len(want) {
		t.Fatalf("python3 printed %q, want %d lines", out, len(want))
	}
	for i := range want {
		if !strings.HasPrefix(lines[i], want[i]) {
			t.Errorf("python3 line %d: %q, want %q...", i, lines[i], want[i])
		}
	}
}

func TestGitClone(t *testing.T) {
	need(t, "git")
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Fatal(err)
	}
	backend := filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		t.Skipf("git-http-backend not found (%v): the git clone test needs it", err)
	}
	root := t.TempDir()
	env := cleanEnv(t)
	git := func(dir string, args ...string) {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, append(env, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.test", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.test")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	src := filepath.Join(root, "src")
	os.Mkdir(src, 0o755)
	git(src, "init", "-q", "-b", "main")
	os.WriteFile(filepath.Join(src, "README"), []byte("through the proxy\n"), 0o644)
	git(src, "add", "README")
	git(src, "commit", "-q", "-m", "first")
	git(root, "clone", "-q", "--bare", src, filepath.Join(root, "srv", "repo.git"))

	srv := httptest.NewServer(&cgi.Handler{
		Path: backend,
		Env:  []string{"GIT_PROJECT_ROOT=" + filepath.Join(root, "srv"), "GIT_HTTP_EXPORT_ALL=1"},
	})
	defer srv.Close()
	f := newFakeNet(t)
	port := f.Host("git.example.test", srv.Listener.Addr().String())
	p, paddr := startProxy(t, f, Rule{Host: "git.example.test", Port: port})
	url := fmt.Sprintf("http://git.example.test:%d/repo.git", port)

	// With http.proxy, and with the environment variables.
	for i, how := range [][]string{{"-c", "http.proxy=http://" + paddr}, nil} {
		dest := filepath.Join(root, fmt.Sprintf("clone%d", i))
		cmd := exec.Command("git", append(how, "clone", "-q", url, dest)...)
		cmd.Env = env
		if how == nil {
			cmd.Env = append(env, Env(netip.MustParseAddrPort(paddr), nil)...)
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("git clone %v through the proxy: %v\n%s", how, err, out)
			continue
		}
		if b, err := os.ReadFile(filepath.Join(dest, "README")); err != nil || string(b) != "through the proxy\n" {
			t.Errorf("cloned README: %q, %v", b, err)
		}
	}

	// A git host not on the list.
	cmd := exec.Command("git", "-c", "http.proxy=http://"+paddr, "clone", "-q",
		fmt.Sprintf("http://evil.example.test:%d/repo.git", port), filepath.Join(root, "evil"))
	cmd.Env = env
	out, err = cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "403") {
		t.Errorf("git clone from a host not on the list: %v %q, want a failure naming 403", err, out)
	}
	d := p.Denied()
	if len(d) == 0 || d[len(d)-1].Host != "evil.example.test" {
		t.Errorf("denials %+v, want the clone from evil.example.test", d)
	}
}
