//go:build linux

package linux

import (
	"testing"

	"github.com/openparallax/sandbox/internal/spec"
	"golang.org/x/sys/unix"
)

// TestUDPContainmentHere: in the test's own network namespace (which has
// more than lo, or routes that leave it) a UDP socket is not contained:
// the probe must fail, not count it as blocked. Nothing is sent.
func TestUDPContainmentHere(t *testing.T) {
	if ifs := interfaces(); len(ifs) == 1 && ifs[0] == "lo" {
		t.Skip("this test's namespace has only lo: nothing to tell apart")
	}
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Skipf("no UDP socket here: %v", err)
	}
	defer unix.Close(fd)
	if r := udpContainment(fd); r.Status != spec.ProbeFailed {
		t.Errorf("udp probe on the host's network: %+v, want failed", r)
	}
}
