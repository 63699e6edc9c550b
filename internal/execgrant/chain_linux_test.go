package execgrant

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestInterpreterOfFIFO: a FIFO on the exec allowlist has no interpreter,
// and looking for one must not wait for a writer.
func TestInterpreterOfFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("cannot make a FIFO here:", err)
	}
	done := make(chan []string, 1)
	go func() { done <- interpretersOf(fifo, 0, nil) }()
	select {
	case got := <-done:
		if len(got) != 0 {
			t.Errorf("interpreters of a FIFO: %v", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("interpretersOf blocked on a FIFO")
	}
}

// TestInterpreterOfHugePTInterp: an ELF whose PT_INTERP claims a terabyte
// (a file a confined program can write, then have the caller wrap) names
// no interpreter, and reading it does not allocate what it claims: the
// caller would die of it. A real program's interpreter is still read.
func TestInterpreterOfHugePTInterp(t *testing.T) {
	orig, err := os.ReadFile("/bin/true")
	if err != nil {
		t.Skip("no /bin/true to copy:", err)
	}
	ef, err := elf.NewFile(bytes.NewReader(orig))
	if err != nil || ef.Class != elf.ELFCLASS64 {
		t.Skip("/bin/true is not a 64-bit ELF here")
	}
	phoff := binary.LittleEndian.Uint64(orig[0x20:])
	phentsize := uint64(binary.LittleEndian.Uint16(orig[0x36:]))
	found := false
	for i, p := range ef.Progs {
		if p.Type != elf.PT_INTERP {
			continue
		}
		// Elf64_Phdr: p_filesz at offset 32.
		binary.LittleEndian.PutUint64(orig[phoff+uint64(i)*phentsize+32:], 1<<40)
		found = true
	}
	if !found {
		t.Skip("/bin/true has no PT_INTERP here (static)")
	}
	if got, _ := InterpreterOf("/bin/true"); got == "" {
		t.Fatal("the real /bin/true names no interpreter: the control fails")
	}
	bad := filepath.Join(t.TempDir(), "huge")
	if err := os.WriteFile(bad, orig, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, script := InterpreterOf(bad); got != "" || script {
		t.Errorf("a PT_INTERP of 1 TiB names %q (script %v); want none", got, script)
	}
}
