//go:build linux

package linux

import (
	"slices"
	"testing"

	"golang.org/x/net/bpf"

	"github.com/openparallax/sandbox/internal/seccomp"
	"github.com/openparallax/sandbox/internal/trampoline"
)

// TestWrapExecNoncePatch: patched, which WrapCommand uses, writes the
// nonce into the program exactly as seccomp.PatchExecNonce does (the one
// the seccomp package's tests run through a BPF VM), so that the nonce the
// child puts in the execve registers is the one the filter compares; each
// call draws a new nonce; and the cached program keeps its placeholder.
// A different word order in patched (say the two words of one argument
// swapped) makes the programs differ, unless those two random words are
// equal (probability 2^-32).
func TestWrapExecNoncePatch(t *testing.T) {
	for _, pol := range []seccomp.Policy{
		{AllowExec: true, ExecNonce: true},
		{AllowExec: true, ExecNonce: true, AllowTCP: true, DenySetsid: true, DenyPdeathsigChange: true},
	} {
		f, err := seccomp.Build(pol)
		if err != nil {
			t.Skipf("no seccomp program for this architecture: %v", err)
		}
		slots, err := seccomp.ExecNonceSlots(f.Program)
		if err != nil {
			t.Fatal(err)
		}
		c, err := trampolineFilter(pol)
		if err != nil {
			t.Fatal(err)
		}
		cached := slices.Clone(c.prog)
		if !slices.Equal(cached, sockFilters(f.Program)) {
			t.Fatalf("%+v: the cached program is not seccomp.Build's", pol)
		}

		var nonces [][2]uint64
		for range 2 {
			nonce, err := newNonce()
			if err != nil {
				t.Fatal(err)
			}
			prog := c.patched(nonce)
			want := slices.Clone(f.Program)
			if err := seccomp.PatchExecNonce(want, slots, nonce); err != nil {
				t.Fatal(err)
			}
			// Both sides must have replaced the placeholder, or an
			// unpatched program would equal an unpatched program.
			if _, err := seccomp.ExecNonceSlots(want); err == nil {
				t.Fatalf("%+v: PatchExecNonce left the placeholder", pol)
			}
			if got := sockFilters(want); !slices.Equal(prog, got) {
				for i := range min(len(prog), len(got)) {
					if prog[i] != got[i] {
						t.Errorf("%+v: instruction %d: patched wrote %+v, PatchExecNonce %+v", pol, i, prog[i], got[i])
					}
				}
				t.Fatalf("%+v: patched's program (%d instructions) is not PatchExecNonce's (%d) for nonce %#x", pol, len(prog), len(got), nonce)
			}
			nonces = append(nonces, nonce)
		}
		if nonces[0] == nonces[1] {
			t.Errorf("%+v: two calls gave the same nonce %#x", pol, nonces[0])
		}
		if !slices.Equal(c.prog, cached) {
			t.Errorf("%+v: patched changed the cached program", pol)
		}
		if again, err := trampolineFilter(pol); err != nil || again != c {
			t.Errorf("%+v: the cache did not return the same filter: %v", pol, err)
		}
	}
}

func sockFilters(prog []bpf.RawInstruction) []trampoline.SockFilter {
	out := make([]trampoline.SockFilter, len(prog))
	for i, ins := range prog {
		out[i] = trampoline.SockFilter{Code: ins.Op, Jt: ins.Jt, Jf: ins.Jf, K: ins.K}
	}
	return out
}
