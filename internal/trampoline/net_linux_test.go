//go:build linux

package trampoline

// netStep for real: a re-executed child born in a new network namespace
// (as root; and in a new user namespace mapped to nobody) runs it, and the
// parent serves the listener it receives. Nothing is sent outside
// 127.0.0.0/8: that no other destination is reachable is shown by the
// namespace having no interface but lo and no route, never by connecting
// out.

import (
	"bufio"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/openparallax/sandbox/internal/egress"
)

const (
	envNetChild  = "TRAMPOLINE_NET_CHILD"  // the test the child runs
	envNetCaller = "TRAMPOLINE_NET_CALLER" // a server on the caller's loopback, host:port
	netStepPort  = 3128
)

func TestNetStep(t *testing.T) {
	variants := []struct {
		name  string
		owner int
		attr  func() *syscall.SysProcAttr
	}{
		{"root", 0, func() *syscall.SysProcAttr {
			return &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
		}},
		{"userns-nobody", 65534, func() *syscall.SysProcAttr {
			return &syscall.SysProcAttr{
				Cloneflags:  syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET,
				UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: 65534, Size: 1}},
				GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: 65534, Size: 1}},
				Credential:  &syscall.Credential{Uid: 0, Gid: 0, NoSetGroups: true},
			}
		}},
	}
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			if os.Getenv(envNetChild) == t.Name() {
				netStepChild(t)
				return
			}
			if os.Geteuid() != 0 {
				t.Skip("needs root to make the namespaces (or to map the child to nobody)")
			}
			bin, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			if v.owner != 0 {
				// nobody must be able to execute the test binary.
				dir := t.TempDir()
				os.Chmod(filepath.Dir(dir), 0o755)
				os.Chmod(dir, 0o755)
				data, err := os.ReadFile(bin)
				if err != nil {
					t.Fatal(err)
				}
				bin = filepath.Join(dir, "trampoline.test")
				if err := os.WriteFile(bin, data, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			// A server on the caller's loopback that the child must not
			// reach.
			caller, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer caller.Close()
			go func() {
				for {
					c, err := caller.Accept()
					if err != nil {
						return
					}
					c.Write([]byte("caller's loopback\n"))
					c.Close()
				}
			}()

			parentEnd, childEnd, err := egress.SocketPair()
			if err != nil {
				t.Fatal(err)
			}
			defer parentEnd.Close()
			cmd := exec.Command(bin, "-test.run=^TestNetStep$/^"+v.name+"$", "-test.v", "-test.count=1", "-test.timeout=60s")
			cmd.Env = append(os.Environ(), envNetChild+"="+t.Name(), envNetCaller+"="+caller.Addr().String())
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
			l, err := egress.ReceiveListener(parentEnd, 30*time.Second)
			if err != nil {
				cmd.Wait()
				t.Fatalf("%v; child output:\n%s", err, out.String())
			}
			defer l.Close()
			if got := l.Addr().String(); got != "127.0.0.1:"+strconv.Itoa(netStepPort) {
				t.Errorf("received a listener on %s, want 127.0.0.1:%d", got, netStepPort)
			}
			// Serve it from here, the caller's side.
			go func() {
				for {
					c, err := l.Accept()
					if err != nil {
						return
					}
					line, _ := bufio.NewReader(c).ReadString('\n')
					c.Write([]byte("served by the caller: " + line))
					c.Close()
				}
			}()
			if err := cmd.Wait(); err != nil {
				t.Fatalf("child: %v\n%s", err, out.String())
			}
			if !strings.Contains(out.String(), "PASS") {
				t.Fatalf("child did not pass:\n%s", out.String())
			}
			t.Logf("child:\n%s", out.String())
		})
	}
}

// netStepChild runs in the namespace.
func netStepChild(t *testing.T) {
	if f, ok := netStep(NetStep{FD: 3, Port: netStepPort}); !ok {
		t.Fatalf("netStep: %v", f)
	}
	// The handoff socket and the listener are gone: the target would hold
	// neither.
	if _, _, e := syscall.RawSyscall(syscall.SYS_FCNTL, 3, syscall.F_GETFD, 0); e != syscall.EBADF {
		t.Errorf("fd 3 (the handoff socket) after netStep: fcntl answered %v, want EBADF", e)
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if link, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && strings.HasPrefix(link, "socket:") {
			t.Errorf("fd %s is still a socket (%s) after netStep", e.Name(), link)
		}
	}

	// Only lo, and it is up; no route through anything else.
	dev, err := os.ReadFile("/proc/self/net/dev")
	if err != nil {
		t.Fatal(err)
	}
	var ifaces []string
	for _, line := range strings.Split(string(dev), "\n")[2:] {
		if name, _, ok := strings.Cut(line, ":"); ok {
			ifaces = append(ifaces, strings.TrimSpace(name))
		}
	}
	if len(ifaces) != 1 || ifaces[0] != "lo" {
		t.Errorf("interfaces in the namespace: %v, want only lo", ifaces)
	}
	if lo, err := net.InterfaceByName("lo"); err != nil || lo.Flags&net.FlagUp == 0 {
		t.Errorf("lo is not up after netStep (%v, %v)", lo, err)
	}
	route, err := os.ReadFile("/proc/self/net/route")
	if err != nil {
		t.Fatal(err)
	}
	if lines := strings.Split(strings.TrimSpace(string(route)), "\n"); len(lines) != 1 {
		t.Errorf("IPv4 routes in the namespace (want none):\n%s", route)
	}
	if r6, err := os.ReadFile("/proc/self/net/ipv6_route"); err == nil {
		for _, line := range strings.Split(strings.TrimSpace(string(r6)), "\n") {
			if f := strings.Fields(line); len(f) > 0 && f[len(f)-1] != "lo" {
				t.Errorf("an IPv6 route through %s in the namespace: %s", f[len(f)-1], line)
			}
		}
	}

	// The listener answers from the caller's side.
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(netStepPort), 5*time.Second)
	if err != nil {
		t.Fatalf("connect to the handed-over listener: %v", err)
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	c.Write([]byte("ping\n"))
	line, err := bufio.NewReader(c).ReadString('\n')
	c.Close()
	if line != "served by the caller: ping\n" {
		t.Errorf("through the listener: %q, %v", line, err)
	}

	// The caller's loopback is not this namespace's: nothing listens at
	// the caller's server's address here.
	_, err = net.DialTimeout("tcp", os.Getenv(envNetCaller), 5*time.Second)
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Errorf("connect to the caller's loopback server %s from the namespace: %v, want ECONNREFUSED", os.Getenv(envNetCaller), err)
	}
}

// TestNetStepRefusesCallersNamespace: where lo is up (the test's own
// namespace, as a child whose SysProcAttr lost CLONE_NEWNET would be in),
// netStep refuses before listening or sending anything, and touches
// nothing (lo is only read).
func TestNetStepRefusesCallersNamespace(t *testing.T) {
	if lo, err := net.InterfaceByName("lo"); err != nil || lo.Flags&net.FlagUp == 0 {
		t.Skipf("lo is not up in the test's namespace (%v): nothing to refuse", err)
	}
	parentEnd, childEnd, err := egress.SocketPair()
	if err != nil {
		t.Fatal(err)
	}
	defer parentEnd.Close()
	defer childEnd.Close()
	f, ok := netStep(NetStep{FD: int(childEnd.Fd()), Port: netStepPort})
	if ok || f.Step != "network step" || !strings.Contains(f.Detail, "not a new network namespace") {
		t.Fatalf("netStep in the caller's namespace: %v, %v; want a refusal", f, ok)
	}
	if f.ExitCode() != ExitSetup {
		t.Errorf("exit code %d, want %d", f.ExitCode(), ExitSetup)
	}
	childEnd.Close()
	if l, err := egress.ReceiveListener(parentEnd, 5*time.Second); err == nil {
		l.Close()
		t.Error("netStep sent a listener from the caller's namespace")
	}
}
