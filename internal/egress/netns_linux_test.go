//go:build linux

package egress

// The namespace prototype, in Go, of what the child half of WrapCommand
// will do in C: a re-executed child born in a new network namespace (and,
// unprivileged, a new user namespace) brings lo up, listens on 127.0.0.1,
// hands the listener to the parent over SCM_RIGHTS, and from then on can
// reach nothing but the parent's proxy. The tests send nothing outside
// 127.0.0.0/8 and ::1: that other destinations are unreachable is shown by
// the namespace having no interface but lo and no route through anything
// else, never by connecting out.

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openparallax/sandbox/internal/childtest"
)

const (
	envNSChild    = "EGRESS_NETNS_CHILD"    // the test the child runs
	envNSUpstream = "EGRESS_NETNS_UPSTREAM" // the caller's loopback service, host:port
	envNSOwner    = "EGRESS_NETNS_OWNER"    // the host uid the child must run as
)

// nsVariant is how the child enters its network namespace.
type nsVariant struct {
	name  string
	attr  func() *syscall.SysProcAttr
	owner int // host uid the child runs as
}

var nsVariants = []nsVariant{
	{"root", func() *syscall.SysProcAttr {
		return &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	}, 0},
	// An unprivileged caller's way: a user namespace owning the network
	// namespace, the child mapped to nobody on the host.
	{"userns-nobody", func() *syscall.SysProcAttr {
		return &syscall.SysProcAttr{
			Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: 65534, Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: 65534, Size: 1}},
			// setuid(0) inside the new user namespace: host uid 65534,
			// without it the child stays host root, unmapped and without
			// capabilities over its namespace.
			Credential: &syscall.Credential{Uid: 0, Gid: 0, NoSetGroups: true},
		}
	}, 65534},
}

func TestNamespaceProxy(t *testing.T) {
	for _, v := range nsVariants {
		t.Run(v.name, func(t *testing.T) {
			if os.Getenv(envNSChild) == t.Name() {
				namespaceChild(t)
				return
			}
			namespaceParent(t, v)
		})
	}
}

// namespaceParent starts the child in its namespace, receives its listener,
// serves the proxy on it while the child runs, and forwards the child's
// verdict.
func namespaceParent(t *testing.T, v nsVariant) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to make the namespaces (or to map the child to nobody)")
	}
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if v.owner != 0 {
		// nobody must be able to execute the test binary: copy it into a
		// directory every user can traverse.
		dir := t.TempDir()
		os.Chmod(filepath.Dir(dir), 0o755)
		os.Chmod(dir, 0o755)
		data, err := os.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		bin = filepath.Join(dir, "egress.test")
		if err := os.WriteFile(bin, data, 0o755); err != nil {
			t.Fatal(err)
		}
	}

	f := newFakeNet(t)
	s, upstream := echoServer(t)
	port := f.Host("allowed.example.test", s.Listener.Addr().String())
	a, _ := NewAllowlist([]Rule{{Host: "allowed.example.test", Port: port}})
	p, err := New(Options{Allow: a, Resolve: f.Resolve, Dial: f.Dial})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	parentEnd, childEnd, err := SocketPair()
	if err != nil {
		t.Fatal(err)
	}
	defer parentEnd.Close()
	cmd := exec.Command(bin, "-test.run="+childtest.Pattern(t.Name()), "-test.v", "-test.count=1", "-test.timeout=60s")
	cmd.Env = append(os.Environ(), envNSChild+"="+t.Name(), envNSUpstream+"="+s.Listener.Addr().String(), fmt.Sprintf("%s=%d", envNSOwner, v.owner))
	cmd.ExtraFiles = []*os.File{childEnd}
	cmd.SysProcAttr = v.attr()
	cmd.Dir = "/"
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		childEnd.Close()
		t.Skipf("cannot start a child in a new network namespace here (%v): nothing to test", err)
	}
	childEnd.Close()
	l, err := ReceiveListener(parentEnd, 30*time.Second)
	if err != nil {
		cmd.Wait()
		t.Fatalf("%v; child output:\n%s", err, out.String())
	}
	served := make(chan error, 1)
	go func() { served <- p.Serve(l) }()
	werr := cmd.Wait()
	p.Close()
	<-served

	childtest.Forward(t, "the child", []byte(out.String()), werr)
	d := p.Denied()
	if len(d) == 0 || d[0].Host != "denied.example.test" || d[0].Reason != ReasonNotAllowed {
		t.Errorf("denials %+v, want the child's request for denied.example.test first", d)
	}
	// Only requests through the proxy reached the caller's service: the
	// child's direct connect to its address did not.
	if got, want := upstream.n.Load(), f.Dials(); got != want {
		t.Errorf("the caller's service accepted %d connections, the proxy made %d", got, want)
	}
}

// namespaceChild runs in the new namespace.
func namespaceChild(t *testing.T) {
	if owner := os.Getenv(envNSOwner); owner != "0" {
		m, err := os.ReadFile("/proc/self/uid_map")
		if f := strings.Fields(string(m)); err != nil || os.Getuid() != 0 || len(f) != 3 || f[0] != "0" || f[1] != owner {
			t.Fatalf("uid %d, uid_map %q (%v): want uid 0 mapped to host %s", os.Getuid(), m, err, owner)
		}
	}
	if err := LoopbackUp(); err != nil {
		t.Fatalf("LoopbackUp: %v", err)
	}
	if err := LoopbackUp(); err != nil { // already up: left alone
		t.Fatalf("LoopbackUp again: %v", err)
	}
	checkOnlyLoopback(t)

	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lf, err := l.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	if err := SendListener(3, int(lf.Fd())); err != nil {
		t.Fatal(err)
	}
	// The parent serves the listener now; the child lets go of it, as the
	// child half does before the target starts.
	lf.Close()
	paddr := l.Addr().String()
	l.Close()
	syscall.Close(3)

	upstream := os.Getenv(envNSUpstream)
	_, port, _ := net.SplitHostPort(upstream)

	// The caller's loopback service is not reachable directly: 127.0.0.1
	// here is the namespace's own loopback, where nothing listens.
	c, err := net.DialTimeout("tcp", upstream, 5*time.Second)
	if err == nil {
		c.Close()
		t.Fatalf("connected to %s, the caller's loopback service, from inside the namespace", upstream)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("direct connect to %s: %v, want ECONNREFUSED (nothing listens on this namespace's loopback)", upstream, err)
	}

	// Through the proxy: the allowed name is served, another is refused.
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(&url.URL{Scheme: "http", Host: paddr})}, Timeout: 10 * time.Second}
	get := func(host string) (int, string, string) {
		resp, err := client.Get(fmt.Sprintf("http://%s:%s/ns", host, port))
		if err != nil {
			t.Fatalf("GET %s through the proxy: %v", host, err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get(DeniedHeader), string(body)
	}
	if code, _, _ := get("denied.example.test"); code != 403 {
		t.Errorf("denied.example.test through the proxy: %d, want 403", code)
	}
	if code, _, body := get("allowed.example.test"); code != 200 || !strings.HasPrefix(body, "GET allowed.example.test:") {
		t.Errorf("allowed.example.test through the proxy: %d %q", code, body)
	}

	// A real program in the namespace: curl reaches the allowed host
	// through the proxy variables, and nothing without them.
	if _, err := exec.LookPath("curl"); err != nil {
		t.Log("curl not installed: the curl half of this test did not run")
		return
	}
	cmd := exec.Command("curl", "-sS", "--max-time", "10", fmt.Sprintf("http://allowed.example.test:%s/curl-ns", port))
	cmd.Env = append(os.Environ(), "http_proxy=http://"+paddr)
	if out, err := cmd.CombinedOutput(); err != nil || !strings.HasPrefix(string(out), "GET allowed.example.test:") {
		t.Errorf("curl through the proxy in the namespace: %v %q", err, out)
	}
	cmd = exec.Command("curl", "-sS", "--noproxy", "*", "--max-time", "10", "http://"+upstream+"/direct")
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 7 { // 7: failed to connect
		t.Errorf("curl straight to the caller's %s: %v %q, want exit 7 (could not connect)", upstream, err, out)
	}
}

// checkOnlyLoopback asserts that this network namespace has no interface
// but lo, and that every route (IPv4 main table, every IPv6 table) goes
// through lo: no packet can leave it.
func checkOnlyLoopback(t *testing.T) {
	ifs, err := net.Interfaces()
	if err != nil {
		t.Fatal(err)
	}
	if len(ifs) != 1 || ifs[0].Name != "lo" || ifs[0].Flags&net.FlagUp == 0 {
		t.Fatalf("interfaces %v, want lo (up) only", ifs)
	}
	routes := func(path string, devField int) []string {
		fh, err := os.Open(path)
		if err != nil {
			t.Fatalf("%v", err)
		}
		defer fh.Close()
		var devs []string
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) <= devField || fields[0] == "Iface" {
				continue
			}
			devs = append(devs, fields[devField])
		}
		return devs
	}
	if r := routes("/proc/self/net/route", 0); len(r) != 0 {
		t.Errorf("IPv4 routes through %v, want none", r)
	}
	if _, err := os.Stat("/proc/self/net/ipv6_route"); err == nil {
		for _, dev := range routes("/proc/self/net/ipv6_route", 9) {
			if dev != "lo" {
				t.Errorf("an IPv6 route through %s, want lo only", dev)
			}
		}
	}
}

// TestReceiveListenerRefuses hands over what the child half must never
// send and checks that the parent refuses it and keeps no descriptor.
func TestReceiveListenerRefuses(t *testing.T) {
	before := openFDs()
	tcpListener := func(addr string) *os.File {
		l, err := net.Listen("tcp4", addr)
		if err != nil {
			t.Fatal(err)
		}
		f, _ := l.(*net.TCPListener).File()
		l.Close()
		return f
	}
	for _, c := range []struct {
		name string
		send func(sock int)
		want string
	}{
		{"nothing", func(int) {}, "without sending"},
		{"wildcard listener", func(s int) {
			f := tcpListener("0.0.0.0:0") // bound, never connected: sends nothing
			defer f.Close()
			SendListener(s, int(f.Fd()))
		}, "loopback"},
		{"connected socket", func(s int) {
			l, _ := net.Listen("tcp", "127.0.0.1:0")
			defer l.Close()
			c, _ := net.Dial("tcp", l.Addr().String())
			defer c.Close()
			f, _ := c.(*net.TCPConn).File()
			defer f.Close()
			SendListener(s, int(f.Fd()))
		}, "not a listening TCP socket"},
		{"a file", func(s int) {
			f, _ := os.Open("/dev/null")
			defer f.Close()
			SendListener(s, int(f.Fd()))
		}, "not a socket"},
		{"two descriptors", func(s int) {
			a, b := tcpListener("127.0.0.1:0"), tcpListener("127.0.0.1:0")
			defer a.Close()
			defer b.Close()
			syscall.Sendmsg(s, []byte{handoffTag}, syscall.UnixRights(int(a.Fd()), int(b.Fd())), nil, 0)
		}, "2 descriptors"},
		{"wrong tag", func(s int) { syscall.Sendmsg(s, []byte{'X'}, nil, nil, 0) }, "unexpected"},
	} {
		parent, child, err := SocketPair()
		if err != nil {
			t.Fatal(err)
		}
		c.send(int(child.Fd()))
		child.Close()
		l, err := ReceiveListener(parent, 5*time.Second)
		parent.Close()
		if err == nil {
			l.Close()
			t.Errorf("%s: accepted", c.name)
		} else if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want it to say %q", c.name, err, c.want)
		}
	}
	if after := openFDs(); after > before {
		t.Errorf("%d socket descriptors open after the refusals, %d before", after, before)
	}
}

// BenchmarkSpawnNamespace measures what a new network namespace adds to
// starting a process: /bin/true plain, in a new network namespace (root),
// and in a new user + network namespace (unprivileged). The Go prototype's
// lo-up and listener handoff add two ioctls, a listen and a sendmsg on top;
// the figures for the real child half belong to its own benchmark.
func BenchmarkSpawnNamespace(b *testing.B) {
	truePath, err := exec.LookPath("true")
	if err != nil {
		b.Skip("no true(1) to spawn")
	}
	for _, c := range []struct {
		name string
		attr *syscall.SysProcAttr
	}{
		{"plain", nil},
		{"netns", &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}},
		{"userns+netns", &syscall.SysProcAttr{
			Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}},
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				cmd := exec.Command(truePath)
				cmd.SysProcAttr = c.attr
				if err := cmd.Run(); err != nil {
					b.Skipf("cannot spawn with %s here: %v", c.name, err)
				}
			}
		})
	}
}
