package seccomp

import (
	"errors"
	"fmt"

	seccompbpf "github.com/elastic/go-seccomp-bpf"
	"golang.org/x/net/bpf"
)

// The exec nonce: exec once, then never again.
//
// Under sandbox.WrapCommand and sandbox.Run with neither spawning nor an
// exec allowlist, the target must be the only program that ever runs in its
// process. The filter is loaded before the target's execve, so it must let
// that one execve through and refuse every later one. It does so without
// state: with Policy.ExecNonce it refuses execveat outright, and execve
// unless its fourth and fifth arguments (registers execve does not read:
// r10 and r8 on amd64, x3 and x4 on arm64) hold a 128-bit random value
// that the filter compares against. The child half of WrapCommand puts the
// value in those registers for its one execve of the target; the kernel
// clears every general-purpose register when the new image starts, and the
// old image's memory is gone, so the target starts without it.
//
// Build assembles the comparison with a fixed placeholder (ExecNonceWords)
// so that the program can be cached per Policy; PatchExecNonce writes a
// fresh value into a copy for each spawn.
//
// Weaknesses, for a reviewer:
//   - Reading one's own filter: PTRACE_SECCOMP_GET_FILTER needs
//     CAP_SYS_ADMIN (the child drops every capability) and ptrace, which
//     the filter refuses; /proc/self/... exposes no filter contents.
//   - /proc/PID/syscall shows a task's system call arguments while it is
//     blocked in one, including the child's execve while it loads the
//     target. Reading it needs ptrace access to the task
//     (PTRACE_MODE_ATTACH): the target itself afterwards only sees its
//     current call; another process of the same user outside the sandbox
//     could read the nonce during that window, but such a process is not
//     confined anyway and could start any program itself.
//   - The payload: the nonce travels to the child half in the payload
//     (trampoline.Payload.ExecNonce, and patched into the filter program
//     the payload carries), which is the child half's environment:
//     base64 chunks OPENPARALLAX_SANDBOX_P0, _P1, ... that WrapCommand
//     puts in cmd.Env. Two places hold it:
//     (a) the child half's environment, from its start until its execve
//     of the target, readable through /proc/PID/environ. Opening that
//     file is a ptrace access check against the child (PTRACE_MODE_READ:
//     the child's user and every capability the child holds, or
//     CAP_SYS_PTRACE; Landlock lets only a process in the child's domain
//     or an enclosing one through), the same gate as /proc/PID/syscall
//     above except that Yama restricts only ATTACH, so with ptrace_scope
//     1 any same-user process outside a sandbox can read it, not only an
//     ancestor. The target cannot: it does not exist yet, and once it
//     does, its execve has replaced the address space the chunks were in
//     (an environ file opened earlier then reads nothing: its old mm has
//     no users). The target's own /proc/self/environ shows the
//     environment the child passed to execve, Payload.Env (cmd.Environ()
//     as WrapCommand found it, less OPENPARALLAX_SANDBOX_TRAMPOLINE),
//     never the chunks.
//     Whoever passes the check is in no sandbox, or in the caller's own
//     Landlock domain or one enclosing it: confined no more than the
//     caller, which knows the nonce anyway.
//     (b) cmd.Env after WrapCommand (and the payload while WrapCommand
//     builds it), in the calling process's own memory: the caller chose
//     the nonce. Reading another process's memory (/proc/PID/mem,
//     process_vm_readv, ptrace) needs PTRACE_MODE_ATTACH on it, and the
//     target's Landlock domain and filter refuse ptrace of the caller.
//     A nonce that leaks is of use only to a process that runs under
//     this filter: the child half for its one execve, then the target
//     alone.
//   - Siblings: a process with the same filter (none exists: without
//     spawning the target is alone) would share the nonce; a sandboxed
//     process in another Landlock domain cannot ptrace the target (scoped
//     by Landlock and refused by this filter).
//   - Guessing: 2^128 values, one attempt per execve system call.
//   - The nonce protects against new programs only; it does not stop the
//     target from reading or mapping executable files it may read (a
//     userspace loader): that is what no-exec Landlock rules and the rest
//     of the sandbox bound.
const argNonce0, argNonce1 = 3, 4

// ExecNonceWords is the placeholder Build compares against: the low and
// high words of argument 3, then of argument 4. No other instruction of a
// program uses these values (Build checks it).
var ExecNonceWords = [4]uint32{0x5eed0a11, 0x5eed0b22, 0x5eed0c33, 0x5eed0d44}

func execNonceRules() []rule {
	n0 := uint64(ExecNonceWords[1])<<32 | uint64(ExecNonceWords[0])
	n1 := uint64(ExecNonceWords[3])<<32 | uint64(ExecNonceWords[2])
	return []rule{
		unconditional("Policy.ExecNonce: only the child's own execve, which is an execve, may run", "execveat"),
		{
			names: []string{"execve"},
			clauses: []seccompbpf.ArgumentConditions{
				{argNotEqual(argNonce0, n0)},
				{argNotEqual(argNonce1, n1)},
			},
			desc: "execve unless its 4th and 5th arguments hold the filter's 128-bit exec nonce (Policy.ExecNonce: the target is started once and never executes anything)",
		},
	}
}

// ExecNonceSlots returns, for each word of ExecNonceWords, the indexes of
// the instructions that compare against it. It fails unless each word is
// compared at least once, only by BPF_JMP|BPF_JEQ|BPF_K instructions.
func ExecNonceSlots(prog []bpf.RawInstruction) ([4][]int, error) {
	var slots [4][]int
	const jeqK = 0x05 | 0x10 | 0x00 // BPF_JMP | BPF_JEQ | BPF_K
	for i, ins := range prog {
		for w, v := range ExecNonceWords {
			if ins.K != v {
				continue
			}
			if ins.Op != jeqK {
				return slots, fmt.Errorf("seccomp: exec nonce placeholder %#x in instruction %d (op %#x), not a compare", v, i, ins.Op)
			}
			slots[w] = append(slots[w], i)
		}
	}
	for w, s := range slots {
		if len(s) == 0 {
			return slots, fmt.Errorf("seccomp: exec nonce word %d is never compared", w)
		}
	}
	return slots, nil
}

// PatchExecNonce writes nonce (argument 3, argument 4) into prog at slots
// (from ExecNonceSlots of the same program).
func PatchExecNonce(prog []bpf.RawInstruction, slots [4][]int, nonce [2]uint64) error {
	if nonce[0] == 0 && nonce[1] == 0 {
		return errors.New("seccomp: exec nonce is zero")
	}
	words := [4]uint32{uint32(nonce[0]), uint32(nonce[0] >> 32), uint32(nonce[1]), uint32(nonce[1] >> 32)}
	for w, s := range slots {
		for _, i := range s {
			prog[i].K = words[w]
		}
	}
	return nil
}
