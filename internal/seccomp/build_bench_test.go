package seccomp

import "testing"

// BenchmarkBuild is Build for the Policy ApplySelf(Config{}) uses and for
// the one a WrapCommand of a single program uses (exec nonce, setsid and
// parent-death signal rules). ApplySelf builds once, in a process that has
// not run this code before, so allocations (-benchmem) say more about its
// cost than the warm time per build:
//
//	go test -run '^$' -bench Build -benchmem ./internal/seccomp
func BenchmarkBuild(b *testing.B) {
	for _, c := range []struct {
		name string
		p    Policy
	}{
		{"applyself", Policy{DenyPathMetadata: true, DenyChownXattr: true}},
		{"wrap", Policy{AllowExec: true, ExecNonce: true, DenySetsid: true, DenyPdeathsigChange: true, DenyChownXattr: true}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Build(c.p); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
