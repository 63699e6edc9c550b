package seccomp

import (
	"math/bits"

	seccompbpf "github.com/elastic/go-seccomp-bpf"
)

// Argument conditions, and which bits of an argument they look at.
//
// seccomp_data gives every argument as 64 bits. For arguments the kernel
// declares int or unsigned int (socket family, type and protocol, ioctl
// request, send flags; clone flags go through lower_32_bits too), the kernel
// uses only the low 32 bits. A condition that DENIES a value must therefore
// look at the low 32 bits only, or a caller could set upper bits to slip
// past it while the kernel still acts on the value. A condition that denies
// everything but an exact list of values may compare all 64 bits: upper bits
// then make the value differ, and it is denied.
//
// go-seccomp-bpf compares 64-bit arguments as two 32-bit words: Equal and
// NotEqual both words; BitsSet is "(arg & mask) != 0" and BitsNotSet
// "(arg & mask) == 0", each tested on both words, so with a mask whose
// upper word is 0 they ignore the upper 32 bits. Conditions inside one
// ArgumentConditions are ANDed.

// argEqual holds when all 64 bits of argument arg equal v.
func argEqual(arg uint32, v uint64) seccompbpf.Condition {
	return seccompbpf.Condition{Argument: arg, Operation: seccompbpf.Equal, Value: v}
}

// argNotEqual holds when any of the 64 bits of argument arg differs from v.
func argNotEqual(arg uint32, v uint64) seccompbpf.Condition {
	return seccompbpf.Condition{Argument: arg, Operation: seccompbpf.NotEqual, Value: v}
}

// noneOf holds when the 64-bit argument arg equals none of vals. As part of a
// deny clause it denies everything outside an exact allow list, including any
// allowed value with upper bits set.
func noneOf(arg uint32, vals ...uint64) seccompbpf.ArgumentConditions {
	conds := make(seccompbpf.ArgumentConditions, 0, len(vals))
	for _, v := range vals {
		conds = append(conds, argNotEqual(arg, v))
	}
	return conds
}

// low32AnySet holds when the low 32 bits of argument arg have any bit of
// mask set, whatever the upper 32 bits are.
func low32AnySet(arg uint32, mask uint32) seccompbpf.Condition {
	if mask == 0 {
		panic("seccomp: low32AnySet with an empty mask never holds")
	}
	// The upper word of the 64-bit mask is 0, so the library's test of the
	// upper word ("hi & 0 != 0") never holds and only the low word decides.
	return seccompbpf.Condition{Argument: arg, Operation: seccompbpf.BitsSet, Value: uint64(mask)}
}

// low32NoneSet holds when the low 32 bits of argument arg have no bit of
// mask set, whatever the upper 32 bits are.
func low32NoneSet(arg uint32, mask uint32) seccompbpf.Condition {
	if mask == 0 {
		panic("seccomp: low32NoneSet with an empty mask always holds")
	}
	// As in low32AnySet: the upper word of the mask is 0, so the library's
	// "hi & 0 != 0 → no match" never fires and only the low word decides.
	return seccompbpf.Condition{Argument: arg, Operation: seccompbpf.BitsNotSet, Value: uint64(mask)}
}

// low32Equals returns conditions that hold exactly when uint32(arg) == v,
// whatever the upper 32 bits of the argument are: no bit outside v is set in
// the low word, and each bit of v is set (the library's BitsSet means "any
// bit of the mask", so every bit of v needs its own condition).
func low32Equals(arg uint32, v uint32) seccompbpf.ArgumentConditions {
	return low32MaskedEquals(arg, 0xffffffff, v)
}

// low32MaskedEquals returns conditions that hold exactly when
// uint32(arg)&mask == v (v must lie within mask), whatever the upper 32
// bits are: no bit of mask outside v is set, and each bit of v is set.
func low32MaskedEquals(arg uint32, mask, v uint32) seccompbpf.ArgumentConditions {
	if v&^mask != 0 {
		panic("seccomp: low32MaskedEquals with a value outside its mask never holds")
	}
	conds := make(seccompbpf.ArgumentConditions, 0, 1+bits.OnesCount32(v))
	if mask&^v != 0 {
		conds = append(conds, low32NoneSet(arg, mask&^v))
	}
	for rest := v; rest != 0; rest &= rest - 1 {
		conds = append(conds, low32AnySet(arg, rest&-rest))
	}
	return conds
}

// low32NotEqual returns clauses (any of which holds) that hold exactly
// when uint32(arg) != v: some bit outside v is set, or some bit of v is
// clear. A deny rule lists them among its clauses.
func low32NotEqual(arg uint32, v uint32) []seccompbpf.ArgumentConditions {
	var out []seccompbpf.ArgumentConditions
	if ^v != 0 {
		out = append(out, seccompbpf.ArgumentConditions{low32AnySet(arg, ^v)})
	}
	for rest := v; rest != 0; rest &= rest - 1 {
		out = append(out, seccompbpf.ArgumentConditions{low32NoneSet(arg, rest&-rest)})
	}
	return out
}
