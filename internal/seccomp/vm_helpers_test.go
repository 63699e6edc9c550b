package seccomp

import (
	"encoding/binary"
	"fmt"
	"runtime"
	"sync"
	"testing"

	seccompbpf "github.com/elastic/go-seccomp-bpf"
	"github.com/elastic/go-seccomp-bpf/arch"
	"golang.org/x/net/bpf"
)

// Audit architectures used as seccomp_data.arch in the tests.
const (
	auditArchX86_64  = 0xc000003e
	auditArchI386    = 0x40000003
	auditArchAARCH64 = 0xc00000b7
)

// Expected seccomp return values.
const (
	allow           = retAllow
	eperm           = retErrno | errnoEPERM
	enosys          = retErrno | errnoENOSYS
	enotty          = retErrno | errnoENOTTY
	eprotonosupport = retErrno | errnoEPROTONOSUPPORT
)

// retName renders a seccomp return value for messages.
func retName(r uint32) string {
	switch r {
	case allow:
		return "ALLOW"
	case eperm:
		return "ERRNO(EPERM)"
	case enosys:
		return "ERRNO(ENOSYS)"
	case enotty:
		return "ERRNO(ENOTTY)"
	case eprotonosupport:
		return "ERRNO(EPROTONOSUPPORT)"
	}
	return fmt.Sprintf("%#x", r)
}

// seccompData is struct seccomp_data.
type seccompData struct {
	nr   int32
	arch uint32
	ip   uint64
	args [6]uint64
}

func (d seccompData) String() string {
	return fmt.Sprintf("{nr=%d arch=%#x args=%#x}", d.nr, d.arch, d.args)
}

// vmBytes serialises d for golang.org/x/net/bpf's VM.
//
// The kernel passes filters struct seccomp_data in native byte order, and the
// programs were assembled for little-endian amd64: an argument's low 32-bit
// word at offset 16+8*i, its high word at 16+8*i+4. The VM, however, decodes
// every 32-bit load as big-endian (network order). So the struct is laid out
// word by word as on a little-endian machine, and each 32-bit word is written
// big-endian: every "ld [k]" in the VM then yields exactly the value the
// kernel's load yields on amd64. TestVMBytesLayout checks this.
func (d seccompData) vmBytes() []byte {
	b := make([]byte, 64)
	put := func(off int, v uint32) { binary.BigEndian.PutUint32(b[off:], v) }
	put(0, uint32(d.nr))
	put(4, d.arch)
	put(8, uint32(d.ip))
	put(12, uint32(d.ip>>32))
	for i, a := range d.args {
		put(16+8*i, uint32(a))
		put(20+8*i, uint32(a>>32))
	}
	return b
}

// call returns native (x86_64) seccomp_data for a system call by name.
func call(t testing.TB, name string, args ...uint64) seccompData {
	t.Helper()
	nr, ok := arch.X86_64.SyscallNames[name]
	if !ok {
		t.Fatalf("no system call %q in the x86_64 table", name)
	}
	d := seccompData{nr: int32(nr), arch: auditArchX86_64, ip: 0x401000}
	copy(d.args[:], args)
	return d
}

// requireAMD64 skips tests whose inputs are amd64 system call numbers and
// whose programs must have been assembled for amd64.
func requireAMD64(t testing.TB) {
	t.Helper()
	if runtime.GOARCH != "amd64" {
		t.Skipf("VM tests use x86_64 system call numbers and need filters built for amd64; Build targets GOARCH=%s", runtime.GOARCH)
	}
}

// vmFilter is one built filter, ready to run.
type vmFilter struct {
	name string
	raw  []bpf.RawInstruction
	vm   *bpf.VM
}

func (f vmFilter) run(t testing.TB, d seccompData) uint32 {
	t.Helper()
	r, err := f.vm.Run(d.vmBytes())
	if err != nil {
		t.Fatalf("filter %s on %v: %v", f.name, d, err)
	}
	return uint32(r)
}

var (
	builtMu sync.Mutex
	built   = map[Policy][]vmFilter{}
)

// buildVM builds the filters for p (cached) and prepares a VM for each.
func buildVM(t testing.TB, p Policy) []vmFilter {
	t.Helper()
	builtMu.Lock()
	defer builtMu.Unlock()
	if fs, ok := built[p]; ok {
		return fs
	}
	filter, err := Build(p)
	if err != nil {
		t.Fatalf("Build(%+v): %v", p, err)
	}
	var fs []vmFilter
	for _, f := range []Filter{filter} {
		insts, allDecoded := bpf.Disassemble(f.Program)
		if !allDecoded {
			t.Fatalf("filter %s: instructions x/net/bpf cannot decode", f.Name)
		}
		vm, err := bpf.NewVM(insts)
		if err != nil {
			t.Fatalf("filter %s: %v", f.Name, err)
		}
		fs = append(fs, vmFilter{name: f.Name, raw: f.Program, vm: vm})
	}
	built[p] = fs
	return fs
}

// runAll evaluates the stacked filters the way the kernel does
// (kernel/seccomp.c, seccomp_run_filters): it walks from the filter loaded
// last to the first, and keeps a result only if its action is strictly more
// restrictive than the one kept so far, comparing the action bits as a
// signed 32-bit value (ACTION_ONLY). Ties therefore go to the filter loaded
// last.
func runAll(t testing.TB, fs []vmFilter, d seccompData) uint32 {
	t.Helper()
	ret := retAllow
	for i := len(fs) - 1; i >= 0; i-- {
		cur := fs[i].run(t, d)
		if int32(cur&0xffff0000) < int32(ret&0xffff0000) {
			ret = cur
		}
	}
	return ret
}

// constAllow emulates the kernel's seccomp action cache check
// (kernel/seccomp.c, seccomp_is_const_allow): run the classic program with
// only nr and arch known, and give up (false) on any other load, including
// any load of the arguments (offset >= 16), or on any instruction outside
// the few it understands. It is true only when the program reaches
// RET ALLOW that way, in which case the kernel caches ALLOW for nr and
// never runs the filter for it.
func constAllow(prog []bpf.RawInstruction, nr, auditArch uint32) (bool, error) {
	_, ret, err := constRun(prog, nr, auditArch)
	return err == nil && ret == retAllow, err
}

// constRun runs prog as constAllow does and returns how many instructions
// it executed and what it returned; err is set when it stopped on a load it
// cannot emulate (an argument) or an instruction it does not know.
func constRun(prog []bpf.RawInstruction, nr, auditArch uint32) (steps int, ret uint32, err error) {
	const (
		ldWAbs = 0x20 // BPF_LD|BPF_W|BPF_ABS
		retK   = 0x06 // BPF_RET|BPF_K
		ja     = 0x05 // BPF_JMP|BPF_JA
		jeqK   = 0x15
		jgtK   = 0x25
		jgeK   = 0x35
		jsetK  = 0x45
		andK   = 0x54 // BPF_ALU|BPF_AND|BPF_K
	)
	var a uint32
	for pc := 0; pc < len(prog); pc++ {
		steps++
		ins := prog[pc]
		switch ins.Op {
		case ldWAbs:
			switch ins.K {
			case offNr:
				a = nr
			case offArch:
				a = auditArch
			default:
				return steps, 0, fmt.Errorf("load from offset %d at %d", ins.K, pc)
			}
		case retK:
			return steps, ins.K, nil
		case ja:
			pc += int(ins.K)
		case jeqK, jgtK, jgeK, jsetK:
			var res bool
			switch ins.Op {
			case jeqK:
				res = a == ins.K
			case jgtK:
				res = a > ins.K
			case jgeK:
				res = a >= ins.K
			case jsetK:
				res = a&ins.K != 0
			}
			if res {
				pc += int(ins.Jt)
			} else {
				pc += int(ins.Jf)
			}
		case andK:
			a &= ins.K
		default:
			return steps, 0, fmt.Errorf("instruction %#x at %d", ins.Op, pc)
		}
	}
	return steps, 0, fmt.Errorf("fell off the end")
}

// allPolicies returns every combination of the first six fields, each
// with the later fields all off, all on, and in a pattern that varies
// with the combination (every Policy would be 2^10, too many for the VM
// grids).
func allPolicies() []Policy {
	var ps []Policy
	seen := map[Policy]bool{}
	for i := range 64 {
		for _, j := range []int{0, 15, i % 16, (i / 4) % 16} {
			p := Policy{
				AllowSpawn:          i&1 != 0,
				AllowExec:           i&2 != 0,
				AllowUnixSockets:    i&4 != 0,
				AllowTCP:            i&8 != 0,
				AllowUDP:            i&16 != 0,
				DenySetsid:          i&32 != 0,
				DenyPathMetadata:    j&1 != 0,
				DenyChownXattr:      j&2 != 0,
				AllowSysVIPC:        j&4 != 0,
				DenyPdeathsigChange: j&8 != 0,
			}
			if !seen[p] {
				seen[p] = true
				ps = append(ps, p)
			}
		}
	}
	return ps
}

// expect checks the stacked result for d under p.
func expect(t *testing.T, p Policy, d seccompData, want uint32, what string) {
	t.Helper()
	if got := runAll(t, buildVM(t, p), d); got != want {
		t.Errorf("%s %v under %+v: got %s, want %s", what, d, p, retName(got), retName(want))
	}
}

// assembleLibrary assembles a go-seccomp-bpf policy on its own.
func assembleLibrary(t *testing.T, groups ...seccompbpf.SyscallGroup) vmFilter {
	t.Helper()
	pol := seccompbpf.Policy{DefaultAction: seccompbpf.ActionAllow, Syscalls: groups}
	insts, err := pol.Assemble()
	if err != nil {
		t.Fatal(err)
	}
	vm, err := bpf.NewVM(insts)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := bpf.Assemble(insts)
	if err != nil {
		t.Fatal(err)
	}
	return vmFilter{name: "library", raw: raw, vm: vm}
}
