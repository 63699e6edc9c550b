package execgrant

// PT_INTERP read from the first page of an ELF file, as the kernel's
// binfmt_elf reads it: the ELF header, the program header table, the
// first PT_INTERP entry. debug/elf.NewFile also reads and checks the
// section headers and their string table (three reads and some hundred
// allocations a file), which the kernel never looks at; an `--exec
// /usr/bin` grant reads the head of some 130 targets on every first scan,
// and every `sandbox run` is a first.

import (
	"encoding/binary"
	"errors"
)

const (
	elfPTInterp    = 3  // elf.PT_INTERP
	elfPhdr32Size  = 32 // sizeof(Elf32_Phdr)
	elfPhdr64Size  = 56 // sizeof(Elf64_Phdr)
	elfEhdr64Size  = 64 // sizeof(Elf64_Ehdr): the larger header
	maxPhdrTableSz = 65536
)

// errELFHead means the head does not hold a well-formed ELF header and
// program header table: the caller falls back to debug/elf, which answers
// as before for such a file.
var errELFHead = errors.New("ELF program headers not in the head")

// elfInterpPlace finds the PT_INTERP entry of the ELF file whose first
// bytes are head: its offset and size in the file, ok false when the file
// has none. It reads only head and checks every offset against it; any
// inconsistency (a bad magic, class or byte order, a program header entry
// size other than the class's, a table beyond head) is errELFHead, and
// the caller parses the file the old way.
func elfInterpPlace(head []byte) (off, size uint64, ok bool, err error) {
	if len(head) < elfEhdr64Size || string(head[:4]) != "\x7fELF" || head[6] != 1 {
		return 0, 0, false, errELFHead
	}
	var bo binary.ByteOrder
	switch head[5] { // EI_DATA
	case 1:
		bo = binary.LittleEndian
	case 2:
		bo = binary.BigEndian
	default:
		return 0, 0, false, errELFHead
	}
	var phoff, entsize, num uint64
	switch head[4] { // EI_CLASS
	case 1:
		phoff, entsize, num = uint64(bo.Uint32(head[0x1c:])), uint64(bo.Uint16(head[0x2a:])), uint64(bo.Uint16(head[0x2c:]))
		if entsize != elfPhdr32Size {
			return 0, 0, false, errELFHead
		}
	case 2:
		phoff, entsize, num = bo.Uint64(head[0x20:]), uint64(bo.Uint16(head[0x36:])), uint64(bo.Uint16(head[0x38:]))
		if entsize != elfPhdr64Size {
			return 0, 0, false, errELFHead
		}
	default:
		return 0, 0, false, errELFHead
	}
	// num ≤ 0xffff and entsize ≤ 56: no overflow; phoff is checked
	// against head before it is added to.
	if num == 0 || num*entsize > maxPhdrTableSz || phoff > uint64(len(head)) || num*entsize > uint64(len(head))-phoff {
		return 0, 0, false, errELFHead
	}
	for i := range num {
		p := head[phoff+i*entsize:]
		if bo.Uint32(p) != elfPTInterp {
			continue
		}
		if head[4] == 1 {
			return uint64(bo.Uint32(p[4:])), uint64(bo.Uint32(p[16:])), true, nil
		}
		return bo.Uint64(p[8:]), bo.Uint64(p[32:]), true, nil
	}
	return 0, 0, false, nil
}
