package seccomp

import (
	"errors"
	"fmt"
	"runtime"

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
	chain int                 // with links: where its chain starts in the program
}

// fixed reports whether a rule without conditions has set the answer: every
// rule's action is an errno, so final is ALLOW until one does.
func (d *decision) fixed() bool { return d.final != retAllow }

// maxSyscallNr bounds the numbers a rule may name (decide indexes its
// decisions by number): amd64's and arm64's are below 512 (go-seccomp-bpf's
// tables end at 453, the newest calls at 470).
const maxSyscallNr = 1023

// decide turns specs into one decision per system call number any rule
// names, sorted by number. The first rule that matches a call decides: a
// rule with conditions adds a link to the call's chain, a rule without ends
// the chain; rules after that cannot change the answer and are left out.
//
// The decisions are made in one allocation and found by number in a
// table indexed by it, which also gives their order; a map and a sort did
// the same with an allocation per number.
func decide(specs []filterSpec, t target) ([]*decision, error) {
	most := 0 // a decision per name and per number at most
	for _, spec := range specs {
		for _, r := range spec.rules {
			most += len(r.names)
		}
		most += len(spec.byNumber)
	}
	made := make([]decision, 0, most)
	at := make([]uint16, 512) // at[nr]: 1 + the index of nr's decision in made, 0 for none
	get := func(nr uint32) (*decision, error) {
		if nr > maxSyscallNr {
			return nil, fmt.Errorf("system call number %d is above %d", nr, maxSyscallNr)
		}
		if int(nr) >= len(at) {
			at = append(at, make([]uint16, int(nr)+1-len(at))...)
		}
		if i := at[nr]; i != 0 {
			return &made[i-1], nil
		}
		made = append(made, decision{nr: nr, final: retAllow})
		at[nr] = uint16(len(made))
		return &made[len(made)-1], nil
	}
	var loads lowLoads
	for _, spec := range specs {
		action := retErrno | uint32(spec.errno)
		for _, r := range spec.rules {
			if r.conditional() && len(r.names) != 1 {
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
				d, err := get(uint32(nr))
				if err != nil {
					return nil, fmt.Errorf("%s: %s: %w", spec.name, name, err)
				}
				if d.fixed() {
					continue
				}
				if !r.conditional() {
					d.final = action
					continue
				}
				var link []bpf.Instruction
				switch {
				case r.low32 != nil:
					link, err = low32Link(r.low32, action, &loads)
				case lowBitsOnly(r.clauses):
					link, err = bitsLink(r.clauses, action, &loads)
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
			d, err := get(nr)
			if err != nil {
				return nil, fmt.Errorf("%s: %s: %w", spec.name, n.name, err)
			}
			if !d.fixed() {
				d.final = action
			}
		}
	}
	if len(made) == 0 {
		return nil, errors.New("no system call to filter")
	}
	ds := make([]*decision, 0, len(made))
	for _, i := range at {
		if i != 0 {
			ds = append(ds, &made[i-1])
		}
	}
	return ds, nil
}

// assemble builds the program for specs (see the top of this file) and
// checks it. The search is laid out first (searchTree), then the program is
// written once, into a slice of its final length.
func assemble(specs []filterSpec, t target) ([]bpf.RawInstruction, error) {
	ds, err := decide(specs, t)
	if err != nil {
		return nil, err
	}
	prelude := []bpf.Instruction{
		bpf.LoadAbsolute{Off: offArch, Size: 4},
		bpf.JumpIf{Cond: bpf.JumpEqual, Val: uint32(t.info.ID), SkipTrue: 1},
		bpf.RetConstant{Val: retErrno | errnoEPERM},
		bpf.LoadAbsolute{Off: offNr, Size: 4},
	}
	if t.info.ID == arch.X86_64.ID {
		prelude = append(prelude,
			bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: x32Bit, SkipFalse: 1},
			bpf.RetConstant{Val: retErrno | errnoENOSYS},
		)
	}
	s := newSearchTree(ds)
	if err := s.build(0, len(ds)); err != nil {
		return nil, err
	}
	exitsAt := len(prelude) + len(s.jumps)
	if err := s.resolve(len(prelude), exitsAt); err != nil {
		return nil, err
	}

	// The chains follow the exits, in number order: each is its links,
	// then the call's final RET.
	size := exitsAt + len(s.exits)
	for _, d := range ds {
		if len(d.links) == 0 {
			continue
		}
		d.chain = size
		for _, link := range d.links {
			size += len(link)
		}
		size++
	}
	prog := make([]bpf.Instruction, 0, size)
	prog = append(prog, prelude...)
	for _, j := range s.jumps {
		prog = append(prog, j)
	}
	for _, e := range s.exits {
		if e.chain != nil {
			prog = append(prog, bpf.Jump{Skip: uint32(e.chain.chain - len(prog) - 1)})
		} else {
			prog = append(prog, bpf.RetConstant{Val: e.ret})
		}
	}
	for _, d := range ds {
		if len(d.links) == 0 {
			continue
		}
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

// searchTree lays out the binary search over the numbers of ds. Its
// compares jump, when the number is equal, to an exit placed after the
// search: a RET shared by every number with that answer, or, for a number
// with links, a jump to its chain. A number no rule names falls through its
// leaf to the exit RET ALLOW. The compares are kept as values until their
// skips are known, so that each is written once.
type searchTree struct {
	ds     []*decision
	jumps  []bpf.JumpIf
	toExit []exitJump
	exits  []exit
	rets   []int // the exits that are a RET, by index in exits
}

// exit is a target of the search: RET ret, or a jump to chain's chain.
type exit struct {
	ret   uint32
	chain *decision
}

// exitJump is a compare of the search (at, an index in jumps) whose true
// branch, or false branch with onFalse, goes to exits[exit].
type exitJump struct {
	at, exit int32 // a program has at most bpfMaxInsns instructions
	onFalse  bool
}

func newSearchTree(ds []*decision) *searchTree {
	// A compare per number and one per inner node; there are fewer inner
	// nodes than leaves, and leaves of at most leafSize numbers but at
	// least two (a split of more than leafSize).
	n := len(ds) + len(ds)/2 + 1
	return &searchTree{
		ds:     ds,
		jumps:  make([]bpf.JumpIf, 0, n),
		toExit: make([]exitJump, 0, n),
		exits:  append(make([]exit, 0, 16), exit{ret: retAllow}),
		rets:   append(make([]int, 0, 8), 0),
	}
}

// exitOf returns the index of d's exit, adding it if needed.
func (s *searchTree) exitOf(d *decision) int {
	if len(d.links) == 0 {
		for _, e := range s.rets {
			if s.exits[e].ret == d.final {
				return e
			}
		}
		s.rets = append(s.rets, len(s.exits))
		s.exits = append(s.exits, exit{ret: d.final})
	} else {
		s.exits = append(s.exits, exit{chain: d})
	}
	return len(s.exits) - 1
}

// build lays out the search over ds[lo:hi].
func (s *searchTree) build(lo, hi int) error {
	if hi-lo <= leafSize {
		for i := lo; i < hi; i++ {
			at := int32(len(s.jumps))
			s.toExit = append(s.toExit, exitJump{at: at, exit: int32(s.exitOf(s.ds[i]))})
			if i == hi-1 {
				s.toExit = append(s.toExit, exitJump{at: at, exit: 0, onFalse: true})
			}
			s.jumps = append(s.jumps, bpf.JumpIf{Cond: bpf.JumpEqual, Val: s.ds[i].nr})
		}
		return nil
	}
	mid := (lo + hi) / 2
	at := len(s.jumps)
	s.jumps = append(s.jumps, bpf.JumpIf{}) // nr >= ds[mid].nr: skip the lower half
	if err := s.build(lo, mid); err != nil {
		return err
	}
	skip := len(s.jumps) - at - 1
	if skip > 255 {
		return fmt.Errorf("search: a conditional jump over %d instructions", skip)
	}
	s.jumps[at] = bpf.JumpIf{Cond: bpf.JumpGreaterOrEqual, Val: s.ds[mid].nr, SkipTrue: uint8(skip)}
	return s.build(mid, hi)
}

// resolve sets the skips of the compares that go to an exit, for a search
// placed at index base of the program and exits placed at exitsAt.
func (s *searchTree) resolve(base, exitsAt int) error {
	for _, j := range s.toExit {
		skip := exitsAt + int(j.exit) - (base + int(j.at)) - 1
		if skip > 255 {
			return fmt.Errorf("search: a conditional jump over %d instructions", skip)
		}
		if j.onFalse {
			s.jumps[j.at].SkipFalse = uint8(skip)
		} else {
			s.jumps[j.at].SkipTrue = uint8(skip)
		}
	}
	return nil
}
