package seccomp

import (
	"fmt"

	seccompbpf "github.com/elastic/go-seccomp-bpf"
	"golang.org/x/net/bpf"
)

// The chain links: per rule with argument conditions on one system call, a
// program "RET action when the conditions hold, else RET ALLOW" that
// assemble links into the call's chain (see assemble.go).

// assembleLink has go-seccomp-bpf assemble the program "deny name with
// action when any of clauses holds, else ALLOW" for the running
// architecture. It starts by loading seccomp_data.arch and nr itself.
func assembleLink(name string, clauses []seccompbpf.ArgumentConditions, action uint32) ([]bpf.Instruction, error) {
	// ActionErrno|errno passes through the library unchanged (only the bare
	// ActionErrno is turned into EPERM).
	group := seccompbpf.SyscallGroup{Action: seccompbpf.Action(action)}
	group.NamesWithCondtions = make([]seccompbpf.NameWithConditions, 0, len(clauses))
	for _, c := range clauses {
		group.NamesWithCondtions = append(group.NamesWithCondtions, seccompbpf.NameWithConditions{Name: name, Conditions: c})
	}
	policy := seccompbpf.Policy{DefaultAction: seccompbpf.ActionAllow, Syscalls: []seccompbpf.SyscallGroup{group}}
	prog, err := policy.Assemble()
	if err != nil {
		return nil, fmt.Errorf("go-seccomp-bpf: %w", err)
	}
	if len(prog) > maxLibraryProgram {
		return nil, fmt.Errorf("go-seccomp-bpf assembled %d instructions, more than the %d this package allows", len(prog), maxLibraryProgram)
	}
	return prog, nil
}

// lowLoads holds, per argument, go-seccomp-bpf's load of the argument's
// low word (its assembler picks the offset for the byte order), assembled
// the first time a link of one Build needs it: the instruction depends on
// nothing but the argument and the architecture. A nil *lowLoads
// assembles every time.
type lowLoads [6]bpf.Instruction

// get returns the load of argument arg's low word.
func (l *lowLoads) get(arg uint32) (bpf.Instruction, error) {
	if l != nil && int(arg) < len(l) && l[arg] != nil {
		return l[arg], nil
	}
	p := seccompbpf.NewProgram()
	p.LdLo(arg)
	ld, err := p.Assemble()
	if err != nil {
		return nil, err
	}
	if len(ld) != 1 {
		return nil, fmt.Errorf("go-seccomp-bpf's LdLo assembled %d instructions, want 1", len(ld))
	}
	if l != nil && int(arg) < len(l) {
		l[arg] = ld[0]
	}
	return ld[0], nil
}

// low32Link assembles the link "RET action when the low 32 bits of
// argument m.arg are one of m.vals, or equal m.masked[i].val under
// m.masked[i].mask, else ALLOW": a load of the argument's low word (placed
// by go-seccomp-bpf's assembler, see lowLoads), a compare per value, and
// per range a reload, an AND and a compare. The library's own conditions
// can only say "the low word equals v" one bit at a time, 4 to 60
// instructions per value. The link need not check the architecture or the
// number: the prelude and the search did before they jumped to its chain.
func low32Link(m *low32In, action uint32, loads *lowLoads) ([]bpf.Instruction, error) {
	load, err := loads.get(m.arg)
	if err != nil {
		return nil, err
	}
	// Layout: load, len(vals) compares, then 3 instructions per range,
	// RET ALLOW, RET action. Every compare jumps forward to the last.
	n := 1 + len(m.vals) + 3*len(m.masked) + 2
	if n > maxLibraryProgram {
		return nil, fmt.Errorf("%d values and %d ranges make a link of %d instructions, more than %d", len(m.vals), len(m.masked), n, maxLibraryProgram)
	}
	match := n - 1
	prog := make([]bpf.Instruction, 1, n)
	prog[0] = load
	for _, v := range m.vals {
		prog = append(prog, bpf.JumpIf{Cond: bpf.JumpEqual, Val: v, SkipTrue: uint8(match - len(prog) - 1)})
	}
	for _, r := range m.masked {
		prog = append(prog, load, bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: r.mask})
		prog = append(prog, bpf.JumpIf{Cond: bpf.JumpEqual, Val: r.val, SkipTrue: uint8(match - len(prog) - 1)})
	}
	prog = append(prog, bpf.RetConstant{Val: retAllow}, bpf.RetConstant{Val: action})
	return prog, nil
}

// lowBitsOnly reports whether every condition of clauses tests bits of
// the low 32 bits of an argument only (low32AnySet, low32NoneSet, and so
// low32Equals and low32MaskedEquals): bitsLink can then compile them.
func lowBitsOnly(clauses []seccompbpf.ArgumentConditions) bool {
	for _, c := range clauses {
		for _, cond := range c {
			if cond.Operation != seccompbpf.BitsSet && cond.Operation != seccompbpf.BitsNotSet || cond.Value>>32 != 0 || cond.Value == 0 {
				return false
			}
		}
	}
	return len(clauses) > 0
}

// bitsLink compiles "RET action when any clause holds, else ALLOW" for
// clauses of low-word bit tests (lowBitsOnly): per condition a load of the
// argument's low word (see lowLoads) when the clause has not loaded it
// yet, and one JSET. What go-seccomp-bpf assembles for the same clauses
// also checks the architecture and the number again and tests the upper
// word against a zero mask, three times the instructions and, with many
// rules, most of Build's time. TestMatchesRulesOneByOne checks every such
// link against the library's assembly of its clauses.
func bitsLink(clauses []seccompbpf.ArgumentConditions, action uint32, loads *lowLoads) ([]bpf.Instruction, error) {
	conds := 0
	for _, c := range clauses {
		conds += len(c)
	}
	// Jumps are resolved once every clause is placed: starts[i] is the
	// index of clause i's first instruction (starts[len(clauses)] that of
	// RET ALLOW), matchAt that of RET action.
	prog := make([]bpf.Instruction, 0, 2*conds+2) // at most a load per test
	type jump struct {
		at            int
		val           uint32 // the JSET's mask
		clause        int    // a failing test goes to the start of clause+1
		failWhenSet   bool   // NoneSet: bits set means the clause fails
		matchAtTheEnd bool   // the last test of a clause: success goes to match
	}
	jumps := make([]jump, 0, conds)
	starts := make([]int, len(clauses)+1)
	for i, c := range clauses {
		starts[i] = len(prog)
		loaded, have := uint32(0), false
		for j, cond := range c {
			if !have || loaded != cond.Argument {
				ld, err := loads.get(cond.Argument)
				if err != nil {
					return nil, err
				}
				prog = append(prog, ld)
				loaded, have = cond.Argument, true
			}
			jumps = append(jumps, jump{at: len(prog), val: uint32(cond.Value), clause: i, failWhenSet: cond.Operation == seccompbpf.BitsNotSet, matchAtTheEnd: j == len(c)-1})
			prog = append(prog, nil) // the JSET, once its skips are known
		}
	}
	allowAt := len(prog)
	starts[len(clauses)] = allowAt
	matchAt := allowAt + 1
	prog = append(prog, bpf.RetConstant{Val: retAllow}, bpf.RetConstant{Val: action})
	if len(prog) > maxLibraryProgram {
		return nil, fmt.Errorf("%d instructions, more than %d", len(prog), maxLibraryProgram)
	}
	for _, j := range jumps {
		fail := starts[j.clause+1] - j.at - 1
		pass := 0 // the next test of the clause follows
		if j.matchAtTheEnd {
			pass = matchAt - j.at - 1
		}
		ins := bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: j.val}
		if j.failWhenSet {
			ins.SkipTrue, ins.SkipFalse = uint8(fail), uint8(pass)
		} else {
			ins.SkipTrue, ins.SkipFalse = uint8(pass), uint8(fail)
		}
		prog[j.at] = ins
	}
	return prog, nil
}
