package seccomp

import (
	"slices"
	"testing"

	"golang.org/x/net/bpf"
)

// nonceVM builds p, patches nonce into a copy and returns a VM for it.
func nonceVM(t *testing.T, p Policy, nonce [2]uint64) vmFilter {
	t.Helper()
	f, err := Build(p)
	if err != nil {
		t.Fatal(err)
	}
	slots, err := ExecNonceSlots(f.Program)
	if err != nil {
		t.Fatal(err)
	}
	prog := slices.Clone(f.Program)
	if err := PatchExecNonce(prog, slots, nonce); err != nil {
		t.Fatal(err)
	}
	if _, err := ExecNonceSlots(prog); err == nil {
		t.Fatal("a patched program still holds the placeholder")
	}
	insts, ok := bpf.Disassemble(prog)
	if !ok {
		t.Fatal("undecodable instructions")
	}
	vm, err := bpf.NewVM(insts)
	if err != nil {
		t.Fatal(err)
	}
	return vmFilter{name: "nonce", raw: prog, vm: vm}
}

// TestExecNonce: with Policy.ExecNonce only an execve carrying the patched
// 128-bit value in arguments 3 and 4 passes; execveat never does; the
// placeholder itself does not; nothing else changes.
func TestExecNonce(t *testing.T) {
	requireAMD64(t)
	nonce := [2]uint64{0x0123456789abcdef, 0xfedcba9876543210}
	for _, base := range allPolicies() {
		if !base.AllowExec {
			continue
		}
		p := base
		p.ExecNonce = true
		f := nonceVM(t, p, nonce)
		check := func(d seccompData, want uint32, what string) {
			t.Helper()
			if got := f.run(t, d); got != want {
				t.Errorf("%s %v under %+v: got %s, want %s", what, d, p, retName(got), retName(want))
			}
		}
		check(call(t, "execve", 1, 2, 3, nonce[0], nonce[1]), allow, "execve with the nonce")
		check(call(t, "execve", 1, 2, 3, nonce[0], nonce[1], high), allow, "execve with the nonce (arg 5 unused)")
		check(call(t, "execve", 1, 2, 3), eperm, "execve without the nonce")
		for w := range 4 {
			n := nonce
			n[w/2] ^= 1 << (32*(w%2) + 7) // one bit of one word
			check(call(t, "execve", 1, 2, 3, n[0], n[1]), eperm, "execve with a nonce one bit off")
		}
		check(call(t, "execve", 1, 2, 3, nonce[1], nonce[0]), eperm, "execve with the nonce's halves swapped")
		ph0 := uint64(ExecNonceWords[1])<<32 | uint64(ExecNonceWords[0])
		ph1 := uint64(ExecNonceWords[3])<<32 | uint64(ExecNonceWords[2])
		check(call(t, "execve", 1, 2, 3, ph0, ph1), eperm, "execve with the placeholder")
		check(call(t, "execveat", 1, 2, 3, 4, 0x1000), eperm, "execveat")
		check(call(t, "execveat", 1, 2, 3, nonce[0], nonce[1]), eperm, "execveat with the nonce in its 4th and 5th arguments")
		// The rest of the policy is unchanged.
		for _, n := range alwaysDenied {
			check(call(t, n), eperm, n)
		}
		check(call(t, "getpid"), allow, "getpid")
		want := eperm
		if p.AllowSpawn {
			want = allow
		}
		for _, n := range spawnSyscalls {
			check(call(t, n), want, n)
		}
	}
	// Without AllowExec the field changes nothing; without the field there
	// is no placeholder to patch.
	for _, p := range []Policy{{ExecNonce: true}, {AllowExec: true}} {
		f, err := Build(p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ExecNonceSlots(f.Program); err == nil {
			t.Errorf("%+v: program has exec nonce slots", p)
		}
	}
	if err := PatchExecNonce(nil, [4][]int{}, [2]uint64{}); err == nil {
		t.Error("a zero nonce was accepted")
	}
}
