package seccomp

import (
	"errors"
	"fmt"
	"runtime"

	seccompbpf "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
)

// Offsets in struct seccomp_data.
const (
	offNr   = 0
	offArch = 4
)

// Seccomp return values (SECCOMP_RET_*). The action is in the upper 16 bits,
// an errno in the lower 16.
const (
	retAllow = uint32(seccompbpf.ActionAllow)
	retErrno = uint32(seccompbpf.ActionErrno)
)

// maxLibraryProgram bounds the length of what go-seccomp-bpf assembles for
// one filter. Within it no jump needs to skip more than 255 instructions, so
// the library never takes its long-jump paths (which insert instructions
// into the program while resolving jumps, and replace the architecture
// check by a two-instruction form); our programs keep the simple layout the
// tests exercise.
const maxLibraryProgram = 256

// bpfMaxInsns is BPF_MAXINSNS, the kernel's limit on a classic BPF program.
const bpfMaxInsns = 4096

// target is what Build needs to know about the running architecture.
type target struct {
	info   *arch.Info
	absent map[string]string // system calls that do not exist on it
}

// currentTarget returns the target for runtime.GOARCH, which is also the
// architecture go-seccomp-bpf assembles for (it has no other option).
func currentTarget() (target, error) {
	absent, reviewed := absentSyscalls[runtime.GOARCH]
	if !reviewed {
		return target{}, fmt.Errorf("seccomp: no filters for GOARCH %s: only amd64 and arm64 are supported "+
			"(on 386 socket calls go through socketcall(2), whose arguments seccomp cannot read)", runtime.GOARCH)
	}
	info, err := arch.GetInfo("")
	if err != nil {
		return target{}, fmt.Errorf("seccomp: no system call table for GOARCH %s: %w", runtime.GOARCH, err)
	}
	return target{info: info, absent: absent}, nil
}

// assemble turns one filterSpec into a checked classic BPF program: the
// prelude followed by what go-seccomp-bpf assembles for a policy with
// default action ALLOW and a single group with the spec's errno.
func assemble(spec filterSpec, t target) ([]bpf.RawInstruction, error) {
	action := retErrno | uint32(spec.errno)
	// ActionErrno|errno passes through the library unchanged (only the bare
	// ActionErrno is turned into EPERM).
	group := seccompbpf.SyscallGroup{Action: seccompbpf.Action(action)}
	conditional := ""
	for _, r := range spec.rules {
		if len(r.clauses) > 0 {
			// See the package documentation: after comparing arguments the
			// library compares the next system call number against an
			// argument word, so a second conditional system call in the same
			// group could match by accident.
			if len(r.names) != 1 || conditional != "" {
				return nil, errors.New("more than one system call with argument conditions")
			}
			conditional = r.names[0]
		}
		for _, name := range r.names {
			if _, ok := t.info.SyscallNames[name]; !ok {
				if _, ok := t.absent[name]; ok {
					continue
				}
				return nil, fmt.Errorf("system call %q is not in go-seccomp-bpf's %s table", name, t.info.Name)
			}
			if len(r.clauses) == 0 {
				group.Names = append(group.Names, name)
				continue
			}
			for _, c := range r.clauses {
				group.NamesWithCondtions = append(group.NamesWithCondtions, seccompbpf.NameWithConditions{Name: name, Conditions: c})
			}
		}
	}
	var denyNrs []uint32
	for _, n := range spec.byNumber {
		if _, ok := t.info.SyscallNames[n.name]; ok {
			group.Names = append(group.Names, n.name) // a newer table knows it
			continue
		}
		if other, ok := t.info.SyscallNumbers[int(n.nr)]; ok {
			return nil, fmt.Errorf("%s: number %d is %q in the %s table", n.name, n.nr, other, t.info.Name)
		}
		denyNrs = append(denyNrs, n.nr)
	}
	if len(group.Names) == 0 && len(group.NamesWithCondtions) == 0 {
		return nil, errors.New("no system call to filter")
	}

	policy := seccompbpf.Policy{DefaultAction: seccompbpf.ActionAllow, Syscalls: []seccompbpf.SyscallGroup{group}}
	body, err := policy.Assemble()
	if err != nil {
		return nil, fmt.Errorf("go-seccomp-bpf: %w", err)
	}
	if len(body) > maxLibraryProgram {
		return nil, fmt.Errorf("go-seccomp-bpf assembled %d instructions, more than the %d this package allows", len(body), maxLibraryProgram)
	}
	prog := append(prelude(uint32(t.info.ID), denyNrs, action), body...)
	if len(prog) > bpfMaxInsns {
		return nil, fmt.Errorf("%d instructions, more than BPF_MAXINSNS", len(prog))
	}
	// NewVM rejects jumps past the end and a program not ending in RET.
	if _, err := bpf.NewVM(prog); err != nil {
		return nil, fmt.Errorf("invalid program: %w", err)
	}
	raw, err := bpf.Assemble(prog)
	if err != nil {
		return nil, fmt.Errorf("bpf: %w", err)
	}
	return raw, nil
}

// prelude returns the hand-written instructions placed in front of every
// program go-seccomp-bpf assembles, for what the library cannot express:
//
//  1. Foreign architecture: EPERM. go-seccomp-bpf v1.4.0 does check
//     seccomp_data.arch, but sends a mismatch to the policy's default
//     action (its jump lands on the group's "RET default"), which is ALLOW
//     for a deny list: on amd64 every i386 system call made with int $0x80
//     would bypass the filter. After this guard the library's own check
//     always passes.
//  2. Deny by number (answering action) the system calls in denyNrs, which
//     are newer than the library's tables. x32 numbers (bit 0x40000000)
//     never equal them and still get the library's ENOSYS.
//
// Only loads of nr and arch, compare-with-constant jumps and RETs are used,
// so the kernel's action cache can still evaluate the filters for every
// system call without arguments.
func prelude(auditArch uint32, denyNrs []uint32, action uint32) []bpf.Instruction {
	insts := []bpf.Instruction{
		bpf.LoadAbsolute{Off: offArch, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: auditArch, SkipTrue: 1},
		bpf.RetConstant{Val: retErrno | errnoEPERM},
	}
	if len(denyNrs) > 0 {
		insts = append(insts, bpf.LoadAbsolute{Off: offNr, Size: 4})
		for _, nr := range denyNrs {
			insts = append(insts,
				bpf.JumpIf{Cond: bpf.JumpNotEqual, Val: nr, SkipTrue: 1},
				bpf.RetConstant{Val: action},
			)
		}
	}
	return insts
}
