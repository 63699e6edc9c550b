package seccomp

import (
	"cmp"
	"errors"
	"fmt"
	"runtime"
	"slices"

	seccompbpf "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
)

// The whole policy is one classic BPF program:
//
//	prelude    foreign architecture → EPERM; on amd64, x32 (nr ≥ 0x40000000)
//	           → ENOSYS; then the system call number in the accumulator
//	search     a binary search over the numbers of every system call a rule
//	           names, whose compares jump to
//	exits      one RET per answer (ALLOW for a number no rule names, each
//	           errno of a call denied whatever its arguments), and one jump
//	           per call with argument conditions to its chain
//	chains     per system call with argument conditions: the checks of each
//	           rule that names it, in rule order, each assembled by
//	           go-seccomp-bpf; a rule that does not match goes on to the
//	           next; after the last, the call's final answer
//
// One program rather than one filter per errno: the kernel prepares its
// action cache per loaded filter by running the filter for every system call
// number, and runs every filter on each filtered system call. Loading also
// costs per instruction (the kernel translates the program and compiles it
// to machine code). Ten stacked linear filters took 0.23 ms to load on the
// reference machine. This program decides any number in at most 14
// instructions and, for the default Config, is about 430 instructions long
// (about 200 before the rules of issue 13; the 0.06 ms load time measured
// then, of which 0.016 ms is what any filter costs, has not been measured
// again on an idle machine).
//
// Why the search and the chain links are ours: go-seccomp-bpf v1.4.0
// assembles a group as "checks; RET default; RET action", so a second group
// in one policy is never reached; it tests system call numbers one after
// another; and after a system call whose arguments it compared, it compares
// the next system call number against the accumulator, which then holds an
// argument word (TestGoSeccompBPFStaleAccumulator). So each chain link is a
// separate go-seccomp-bpf program for one system call and one errno, which
// reloads the architecture and the number itself; linking replaces its
// "RET ALLOW" (no match) by a jump to the next link. A rule on the low 32
// bits of an argument (low32Link), and a rule whose conditions all test
// bits of low words (bitsLink), is one such program too, written here
// rather than by the library's conditions (the library would spend three
// times the instructions, and most of Build's time, on them); the tests
// compare both with the library's assembly of the same conditions. The prelude, the search
// and the links use only loads of nr and arch, compare-with-constant jumps,
// unconditional jumps and RETs, so that the kernel's action cache can decide
// every system call no rule names without running the filter.

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

// x32Bit marks x32-ABI system call numbers on amd64 (__X32_SYSCALL_BIT).
const x32Bit = 0x40000000

// maxLibraryProgram bounds the length of what go-seccomp-bpf assembles for
// one chain link. Within it no jump needs to skip more than 255
// instructions, so the library never takes its long-jump paths (which insert
// instructions into the program while resolving jumps); links keep the
// simple layout the tests exercise.
const maxLibraryProgram = 256

// bpfMaxInsns is BPF_MAXINSNS, the kernel's limit on a classic BPF program.
const bpfMaxInsns = 4096

// leafSize is the most system call numbers the search compares one by one.
const leafSize = 4

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

// decision is what the program does for one system call number.
type decision struct {
	nr    uint32
	links [][]bpf.Instruction // argument checks, in rule order
	final uint32              // the answer when no link matches
	exit  int                 // with links: the exit that jumps to them
}

// fixed reports whether a rule without conditions has set the answer: every
// rule's action is an errno, so final is ALLOW until one does.
func (d *decision) fixed() bool { return d.final != retAllow }

// decide turns specs into one decision per system call number any rule
// names, sorted by number. The first rule that matches a call decides: a
// rule with conditions adds a link to the call's chain, a rule without ends
// the chain; rules after that cannot change the answer and are left out.
func decide(specs []filterSpec, t target) ([]*decision, error) {
	byNr := make(map[uint32]*decision, 64)
	get := func(nr uint32) *decision {
		d, ok := byNr[nr]
		if !ok {
			d = &decision{nr: nr, final: retAllow}
			byNr[nr] = d
		}
		return d
	}
	for _, spec := range specs {
		action := retErrno | uint32(spec.errno)
		for _, r := range spec.rules {
			if len(r.clauses) > 0 && len(r.names) != 1 {
				return nil, fmt.Errorf("%s: a rule with argument conditions must name one system call, not %v", spec.name, r.names)
			}
			for _, name := range r.names {
				nr, ok := t.info.SyscallNames[name]
				if !ok {
					if _, ok := t.absent[name]; ok {
						continue
					}
					return nil, fmt.Errorf("%s: system call %q is not in go-seccomp-bpf's %s table", spec.name, name, t.info.Name)
				}
				d := get(uint32(nr))
				if d.fixed() {
					continue
				}
				if len(r.clauses) == 0 {
					d.final = action
					continue
				}
				var link []bpf.Instruction
				var err error
				switch {
				case r.low32 != nil:
					link, err = low32Link(r.low32, action)
				case lowBitsOnly(r.clauses):
					link, err = bitsLink(r.clauses, action)
				default:
					link, err = assembleLink(name, r.clauses, action)
				}
				if err != nil {
					return nil, fmt.Errorf("%s: %s: %w", spec.name, name, err)
				}
				d.links = append(d.links, link)
			}
		}
		for _, n := range spec.byNumber {
			nr := n.nr
			if known, ok := t.info.SyscallNames[n.name]; ok {
				nr = uint32(known) // a newer table knows it
			} else if other, ok := t.info.SyscallNumbers[int(nr)]; ok {
				return nil, fmt.Errorf("%s: %s: number %d is %q in the %s table", spec.name, n.name, nr, other, t.info.Name)
			}
			if d := get(nr); !d.fixed() {
				d.final = action
			}
		}
	}
	if len(byNr) == 0 {
		return nil, errors.New("no system call to filter")
	}
	ds := make([]*decision, 0, len(byNr))
	for _, d := range byNr {
		ds = append(ds, d)
	}
	slices.SortFunc(ds, func(a, b *decision) int { return cmp.Compare(a.nr, b.nr) })
	return ds, nil
}

// assembleLink has go-seccomp-bpf assemble the program "deny name with
// action when any of clauses holds, else ALLOW" for the running
// architecture. It starts by loading seccomp_data.arch and nr itself.
func assembleLink(name string, clauses []seccompbpf.ArgumentConditions, action uint32) ([]bpf.Instruction, error) {
	// ActionErrno|errno passes through the library unchanged (only the bare
	// ActionErrno is turned into EPERM).
	group := seccompbpf.SyscallGroup{Action: seccompbpf.Action(action)}
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

// low32Link assembles the link "RET action when the low 32 bits of
// argument m.arg are one of m.vals, or equal m.masked[i].val under
// m.masked[i].mask, else ALLOW": a load of the argument's low word (placed
// by go-seccomp-bpf's assembler, which picks its offset for the byte
// order), a compare per value, and per range a reload, an AND and a
// compare. The library's own conditions can only say "the low word equals
// v" one bit at a time, 4 to 60 instructions per value. The link need not
// check the architecture or the number: the prelude and the search did
// before they jumped to its chain.
func low32Link(m *low32In, action uint32) ([]bpf.Instruction, error) {
	p := seccompbpf.NewProgram()
	p.LdLo(m.arg)
	ld, err := p.Assemble()
	if err != nil {
		return nil, err
	}
	if len(ld) != 1 {
		return nil, fmt.Errorf("go-seccomp-bpf's LdLo assembled %d instructions, want 1", len(ld))
	}
	load := ld[0]
	// Layout: load, len(vals) compares, then 3 instructions per range,
	// RET ALLOW, RET action. Every compare jumps forward to the last.
	n := 1 + len(m.vals) + 3*len(m.masked) + 2
	if n > maxLibraryProgram {
		return nil, fmt.Errorf("%d values and %d ranges make a link of %d instructions, more than %d", len(m.vals), len(m.masked), n, maxLibraryProgram)
	}
	match := n - 1
	prog := []bpf.Instruction{load}
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
// argument's low word (placed by go-seccomp-bpf's assembler, as in
// low32Link) when the clause has not loaded it yet, and one JSET. What
// go-seccomp-bpf assembles for the same clauses also checks the
// architecture and the number again and tests the upper word against a
// zero mask, three times the instructions and, with many rules, most of
// Build's time. TestMatchesRulesOneByOne checks every such link against
// the library's assembly of its clauses.
func bitsLink(clauses []seccompbpf.ArgumentConditions, action uint32) ([]bpf.Instruction, error) {
	loads := map[uint32]bpf.Instruction{}
	load := func(arg uint32) (bpf.Instruction, error) {
		if ins, ok := loads[arg]; ok {
			return ins, nil
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
		loads[arg] = ld[0]
		return ld[0], nil
	}
	// Jumps are resolved once every clause is placed: nextClause[i] is the
	// index of clause i+1's first instruction (or of RET ALLOW), match
	// that of RET action.
	var prog []bpf.Instruction
	type jump struct {
		at            int
		clause        int  // a failing test goes to the start of clause+1
		failWhenSet   bool // NoneSet: bits set means the clause fails
		matchAtTheEnd bool // the last test of a clause: success goes to match
	}
	var jumps []jump
	starts := make([]int, len(clauses)+1)
	for i, c := range clauses {
		starts[i] = len(prog)
		loaded, have := uint32(0), false
		for j, cond := range c {
			if !have || loaded != cond.Argument {
				ld, err := load(cond.Argument)
				if err != nil {
					return nil, err
				}
				prog = append(prog, ld)
				loaded, have = cond.Argument, true
			}
			jumps = append(jumps, jump{at: len(prog), clause: i, failWhenSet: cond.Operation == seccompbpf.BitsNotSet, matchAtTheEnd: j == len(c)-1})
			prog = append(prog, bpf.JumpIf{Cond: bpf.JumpBitsSet, Val: uint32(cond.Value)})
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
		ins := prog[j.at].(bpf.JumpIf)
		if j.failWhenSet {
			ins.SkipTrue, ins.SkipFalse = uint8(fail), uint8(pass)
		} else {
			ins.SkipTrue, ins.SkipFalse = uint8(pass), uint8(fail)
		}
		prog[j.at] = ins
	}
	return prog, nil
}

// assemble builds the program for specs (see the top of this file) and
// checks it.
func assemble(specs []filterSpec, t target) ([]bpf.RawInstruction, error) {
	ds, err := decide(specs, t)
	if err != nil {
		return nil, err
	}
	prog := []bpf.Instruction{
		bpf.LoadAbsolute{Off: offArch, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(t.info.ID), SkipTrue: 1},
		bpf.RetConstant{Val: retErrno | errnoEPERM},
		bpf.LoadAbsolute{Off: offNr, Size: 4},
	}
	if t.info.ID == arch.X86_64.ID {
		prog = append(prog,
			bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: x32Bit, SkipFalse: 1},
			bpf.RetConstant{Val: retErrno | errnoENOSYS},
		)
	}

	// The search. Its compares jump, when the number is equal, to an exit
	// placed after the search: a RET shared by every number with that
	// answer, or, for a number with links, a jump to its chain. A number no
	// rule names falls through its leaf to the exit RET ALLOW.
	exits := []bpf.Instruction{bpf.RetConstant{Val: retAllow}}
	retExit := map[uint32]int{retAllow: 0}
	exitOf := func(d *decision) int {
		if len(d.links) > 0 {
			d.exit = len(exits)
			exits = append(exits, bpf.Jump{}) // resolved once the chains are placed
			return d.exit
		}
		e, ok := retExit[d.final]
		if !ok {
			e = len(exits)
			exits = append(exits, bpf.RetConstant{Val: d.final})
			retExit[d.final] = e
		}
		return e
	}
	type exitJump struct {
		at, exit int
		onFalse  bool // the compare's false branch, not its true branch
	}
	var toExit []exitJump
	var search func(lo, hi int) error
	search = func(lo, hi int) error {
		if hi-lo <= leafSize {
			for i := lo; i < hi; i++ {
				toExit = append(toExit, exitJump{at: len(prog), exit: exitOf(ds[i])})
				if i == hi-1 {
					toExit = append(toExit, exitJump{at: len(prog), exit: 0, onFalse: true})
				}
				prog = append(prog, bpf.JumpIf{Cond: bpf.JumpEqual, Val: ds[i].nr})
			}
			return nil
		}
		mid := (lo + hi) / 2
		at := len(prog)
		prog = append(prog, bpf.JumpIf{}) // nr >= ds[mid].nr: skip the lower half
		if err := search(lo, mid); err != nil {
			return err
		}
		skip := len(prog) - at - 1
		if skip > 255 {
			return fmt.Errorf("search: a conditional jump over %d instructions", skip)
		}
		prog[at] = bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: ds[mid].nr, SkipTrue: uint8(skip)}
		return search(mid, hi)
	}
	if err := search(0, len(ds)); err != nil {
		return nil, err
	}
	exitsAt := len(prog)
	prog = append(prog, exits...)
	for _, j := range toExit {
		skip := exitsAt + j.exit - j.at - 1
		if skip > 255 {
			return nil, fmt.Errorf("search: a conditional jump over %d instructions", skip)
		}
		jump := prog[j.at].(bpf.JumpIf)
		if j.onFalse {
			jump.SkipFalse = uint8(skip)
		} else {
			jump.SkipTrue = uint8(skip)
		}
		prog[j.at] = jump
	}

	for _, d := range ds {
		if len(d.links) == 0 {
			continue
		}
		at := exitsAt + d.exit
		prog[at] = bpf.Jump{Skip: uint32(len(prog) - at - 1)}
		for _, link := range d.links {
			end := len(prog) + len(link) // where the next link (or the final RET) starts
			for _, ins := range link {
				if r, ok := ins.(bpf.RetConstant); ok && r.Val == retAllow {
					ins = bpf.Jump{Skip: uint32(end - len(prog) - 1)}
				}
				prog = append(prog, ins)
			}
		}
		prog = append(prog, bpf.RetConstant{Val: d.final})
	}

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
