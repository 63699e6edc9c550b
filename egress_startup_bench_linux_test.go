//go:build linux

package sandbox_test

import (
	"context"
	"testing"

	"github.com/openparallax/sandbox"
)

// BenchmarkRunEgressStartup is Run of /bin/true with one connect entry:
// port-only (no namespace); the namespace and the proxy alone; a host entry
// where the transparent path is in force (its routes and sockets, the
// caller's relay and resolver, the mount layer for resolv.conf), each a
// sub-benchmark, so that the start-up cost of each mode reads as a
// difference.
func BenchmarkRunEgressStartup(b *testing.B) {
	requireSandboxB(b)
	for _, c := range []struct {
		name, entry string
		bind        []uint16
		mode        string
		shm         bool
	}{
		{"port-only", "*:443", nil, "", false},
		// The mount layer alone (a private /dev/shm asks for it): the
		// part of the transparent path's cost that binds resolv.conf.
		{"port-only+mount-layer", "*:443", nil, "", true},
		// A destination port the program may also bind keeps the proxy
		// alone: the namespace without the transparent path.
		{"proxy-only", "localhost:8080", []uint16{8080}, sandbox.EgressProxy, false},
		{"transparent", "api.example.test:443", nil, sandbox.EgressTransparent, false},
	} {
		cfg := sandbox.Config{AllowedTCPConnect: []string{c.entry}, AllowedTCPBind: c.bind, AllowSharedMemory: c.shm}
		if p, _ := sandbox.PlanFor(cfg); c.mode != "" && (p.Egress == nil || p.Egress.Mode != c.mode) {
			b.Skipf("%s: mode %+v here", c.name, p.Egress)
		}
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				res, err := sandbox.Run(context.Background(), cfg, "/bin/true", nil, sandbox.RunOptions{})
				if err != nil || res.ExitCode != 0 {
					b.Fatal(err, res)
				}
			}
		})
	}
}
