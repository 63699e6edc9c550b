package execgrant

import (
	"bytes"
	"debug/elf"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// interpByDebugELF is readInterpreter's answer by debug/elf alone (the
// reading before elfInterpPlace): the reference.
func interpByDebugELF(t *testing.T, b []byte) string {
	t.Helper()
	ef, err := elf.NewFile(bytes.NewReader(b))
	if err != nil {
		return ""
	}
	for _, p := range ef.Progs {
		if p.Type == elf.PT_INTERP {
			if p.Filesz < 2 || p.Filesz > maxInterpLen {
				return ""
			}
			buf := make([]byte, p.Filesz)
			if _, err := p.ReadAt(buf, 0); err != nil {
				return ""
			}
			return strings.TrimRight(string(buf), "\x00")
		}
	}
	return ""
}

// TestELFHeadAgreesWithDebugELF: the PT_INTERP read from the first page
// is debug/elf's for every ELF file in the system's program and library
// directories (executables, shared libraries, static programs), and a
// file whose program headers lie beyond the first page is still read
// (by debug/elf, the fallback).
func TestELFHeadAgreesWithDebugELF(t *testing.T) {
	n, interps := 0, 0
	for _, dir := range []string{"/usr/bin", "/usr/sbin", "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib/git-core"} {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			if !e.Type().IsRegular() || n >= 400 {
				continue
			}
			p := filepath.Join(dir, e.Name())
			b, err := os.ReadFile(p)
			if err != nil || !bytes.HasPrefix(b, []byte("\x7fELF")) {
				continue
			}
			n++
			want := interpByDebugELF(t, b)
			if want != "" {
				interps++
			}
			if got, _ := InterpreterOf(p); got != want {
				t.Errorf("%s: InterpreterOf = %q, debug/elf = %q", p, got, want)
			}
		}
	}
	if n < 20 || interps == 0 {
		t.Skipf("only %d ELF files (%d with PT_INTERP) found to compare: not a test here", n, interps)
	}

	// Program headers moved past the first page: the head holds no
	// table, so the fallback reads it.
	orig, err := os.ReadFile("/bin/true")
	if err != nil || interpByDebugELF(t, orig) == "" {
		t.Skip("no dynamic /bin/true to copy")
	}
	ef, err := elf.NewFile(bytes.NewReader(orig))
	if err != nil || ef.Class != elf.ELFCLASS64 || ef.ByteOrder.String() != "LittleEndian" {
		t.Skip("/bin/true is not a 64-bit little-endian ELF here")
	}
	phoff := ef.ByteOrder.Uint64(orig[0x20:])
	size := uint64(ef.ByteOrder.Uint16(orig[0x36:])) * uint64(ef.ByteOrder.Uint16(orig[0x38:]))
	moved := append(append([]byte{}, orig...), orig[phoff:phoff+size]...)
	ef.ByteOrder.PutUint64(moved[0x20:], uint64(len(orig)))
	p := filepath.Join(t.TempDir(), "moved")
	if err := os.WriteFile(p, moved, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := elfInterpPlace(moved[:elfHeadLen]); err == nil {
		t.Fatal("the head parser read a table beyond the head")
	}
	want := interpByDebugELF(t, moved)
	if got, _ := InterpreterOf(p); got != want || got == "" {
		t.Errorf("program headers beyond the first page: InterpreterOf = %q, debug/elf = %q", got, want)
	}
}

// TestELFHeadRefusesInconsistentTables: a program header table that
// overruns the head, an entry size other than the class's, or no entries
// is not read from the head.
func TestELFHeadRefusesInconsistentTables(t *testing.T) {
	h := make([]byte, elfHeadLen)
	copy(h, "\x7fELF\x02\x01\x01")
	le := func(off int, v uint64, n int) {
		for i := range n {
			h[off+i] = byte(v >> (8 * i))
		}
	}
	le(0x36, elfPhdr64Size, 2)
	for _, c := range []struct {
		name         string
		phoff, phnum uint64
		entsize      uint64
	}{
		{"table past the head", elfHeadLen - 10, 1, elfPhdr64Size},
		{"offset far past the head", 1 << 63, 2, elfPhdr64Size},
		{"wrong entry size", 64, 1, 40},
		{"no entries", 64, 0, elfPhdr64Size},
	} {
		le(0x20, c.phoff, 8)
		le(0x38, c.phnum, 2)
		le(0x36, c.entsize, 2)
		if _, _, _, err := elfInterpPlace(h); err == nil {
			t.Errorf("%s: read from the head", c.name)
		}
	}
	// The control: a consistent table with a PT_INTERP entry is read.
	le(0x20, 64, 8)
	le(0x38, 1, 2)
	le(0x36, elfPhdr64Size, 2)
	le(64, elfPTInterp, 4)
	le(64+8, 200, 8)
	le(64+32, 10, 8)
	if off, size, ok, err := elfInterpPlace(h); err != nil || !ok || off != 200 || size != 10 {
		t.Errorf("consistent table: off %d size %d ok %v err %v; want 200 10 true nil", off, size, ok, err)
	}
}
