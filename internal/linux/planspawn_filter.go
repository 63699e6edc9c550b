package linux

// The seccomp program of a spawn: built once per policy and cached, with
// the exec nonce written into a copy of it. Pure: seccomp.Build touches no
// kernel interface.

import (
	"fmt"
	"slices"
	"sync"

	"github.com/openparallax/sandbox/internal/seccomp"
	"github.com/openparallax/sandbox/internal/spec"
	"github.com/openparallax/sandbox/internal/trampoline"
)

// filterCache maps a seccomp.Policy to its *cachedFilter. The program
// depends on nothing but the policy and the architecture, and assembling it
// costs about as much as the rest of WrapCommand.
var filterCache sync.Map

// cachedFilter is a program, never modified once stored, and where the
// exec nonce goes into a copy of it (Policy.ExecNonce).
type cachedFilter struct {
	prog  []trampoline.SockFilter
	slots [4][]int
}

func trampolineFilter(p seccomp.Policy) (*cachedFilter, error) {
	if v, ok := filterCache.Load(p); ok {
		return v.(*cachedFilter), nil
	}
	f, err := seccomp.Build(p)
	if err != nil {
		return nil, fmt.Errorf("%w: building seccomp filter: %w", spec.ErrUnavailable, err)
	}
	c := &cachedFilter{prog: make([]trampoline.SockFilter, len(f.Program))}
	for i, ins := range f.Program {
		c.prog[i] = trampoline.SockFilter{Code: ins.Op, Jt: ins.Jt, Jf: ins.Jf, K: ins.K}
	}
	if p.AllowExec && p.ExecNonce {
		if c.slots, err = seccomp.ExecNonceSlots(f.Program); err != nil {
			return nil, fmt.Errorf("%w: building seccomp filter: %w", spec.ErrUnavailable, err)
		}
	}
	filterCache.Store(p, c)
	return c, nil
}

// patched returns a copy of the program with the exec nonce in it. The
// words are written the way seccomp.PatchExecNonce writes them
// (TestWrapExecNoncePatch compares the two).
func (c *cachedFilter) patched(nonce [2]uint64) []trampoline.SockFilter {
	words := [4]uint32{uint32(nonce[0]), uint32(nonce[0] >> 32), uint32(nonce[1]), uint32(nonce[1] >> 32)}
	prog := slices.Clone(c.prog)
	for w, s := range c.slots {
		for _, i := range s {
			prog[i].K = words[w]
		}
	}
	return prog
}
