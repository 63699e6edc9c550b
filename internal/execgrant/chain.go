package execgrant

// What the kernel must also be allowed to execute to run a granted file:
// its "#!" interpreter chain and its ELF interpreter, read from the file
// (cached by its version) and checked by Grantable.

import (
	"debug/elf"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// Chain returns what the kernel must also be allowed to execute to run
// path: its ELF PT_INTERP, or a script's "#!" interpreter (and that one's
// interpreters, at most three deep), each with symlinks resolved, and
// which one of the chain is an ELF interpreter (PT_INTERP: the dynamic
// loader), or "". There is at most one: the chain ends with the first ELF
// file's interpreter. Unreadable or unrecognised files have none. path
// should already be resolved: a symlink at its last step is not followed.
//
// What a file names is untrusted text: an interpreter is returned, and
// looked into, only when Grantable allows it (a regular executable file
// outside every one of writePaths, resolved). A path it refuses is never
// read, and the chain stops there.
func Chain(path string, writePaths []string) (chain []string, loader string) {
	return interpreterChain(path, 0, writePaths)
}

// interpretersOf returns what the kernel must also be allowed to execute to
// run path: its ELF PT_INTERP, or a script's "#!" interpreter (and that
// one's interpreters), each with symlinks resolved. Unreadable or
// unrecognised files have none. An interpreter is returned, and looked
// into, only when Grantable (interpreter.go, the rule the macOS policy
// uses too) allows it: a regular executable file outside every one of
// writePaths (resolved). A path it refuses is never read by the host.
func interpretersOf(path string, depth int, writePaths []string) []string {
	chain, _ := interpreterChain(path, depth, writePaths)
	return chain
}

// interpreterChain is interpretersOf, and also says which of the chain is
// an ELF interpreter (PT_INTERP: the dynamic loader), or "". There is at
// most one: the chain ends with the first ELF file's interpreter.
func interpreterChain(path string, depth int, writePaths []string) (chain []string, loader string) {
	if depth > 2 {
		return nil, ""
	}
	interp, script := InterpreterOf(path)
	if interp == "" {
		return nil, ""
	}
	resolved, err := Grantable(interp, writePaths)
	if err != nil {
		return nil, ""
	}
	if script {
		rest, loader := interpreterChain(resolved, depth+1, writePaths)
		return append([]string{resolved}, rest...), loader
	}
	return []string{resolved}, resolved
}

type interpreter struct {
	path   string
	script bool
}

// interpreters caches InterpreterOf by file version: parsing the ELF
// headers of the target was a third of WrapCommand's time, for an answer
// that changes only when the file does. (Timestamps may be as coarse as a
// clock tick, so a same-size rewrite within one tick can keep a version.
// The stale answer is then what the file said a moment before: it grants
// nothing the file's writer could not have had it grant, and a missing
// interpreter makes the exec fail, closed. The file can change between
// WrapCommand and Start anyway.) Bounded: emptied when full.
var interpreters = struct {
	sync.Mutex
	m map[fileVersion]interpreter
}{m: map[fileVersion]interpreter{}}

const maxCachedInterpreters = 256

// InterpreterOf returns path's own interpreter: a script's "#!" interpreter
// (script true), or an ELF file's PT_INTERP; "" for anything else and for
// a file that is not regular. path is expected resolved: where open has
// O_NOFOLLOW (unix), a symlink at its last step was put in since and is
// not followed. Opening does not wait for a FIFO's writer. Of a script
// only the first 256 bytes are read, and a "#!" path that is not absolute
// counts as none.
//
// The answer is the file's text, unchecked: the file may be one the
// confined process wrote, so the caller must pass it through Grantable
// before granting or opening it (Chain does).
func InterpreterOf(path string) (interp string, script bool) {
	// O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
	// writer, for ever. (It changes nothing for a regular file.)
	//
	// O_NOFOLLOW: path is already resolved (by the root package's
	// resolve, or by Grantable); a symlink here was put in since, and is
	// not followed.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|openNoFollow, 0)
	if err != nil {
		return "", false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return "", false
	}
	// The version comes from the open file, so the answer cached under
	// it is read from the same file.
	v, cacheable := versionOf(fi)
	if cacheable {
		interpreters.Lock()
		in, ok := interpreters.m[v]
		interpreters.Unlock()
		if ok {
			return in.path, in.script
		}
	}
	in := readInterpreter(f)
	if cacheable {
		interpreters.Lock()
		if len(interpreters.m) >= maxCachedInterpreters {
			clear(interpreters.m)
		}
		interpreters.m[v] = in
		interpreters.Unlock()
	}
	return in.path, in.script
}

// maxInterpLen is PATH_MAX, the longest PT_INTERP the kernel execs.
const maxInterpLen = 4096

// elfHeadLen is how much of a file readInterpreter reads at once: the
// first 256 bytes hold a script's "#!" line, and the first page the ELF
// header, the program headers and PT_INTERP of an ordinary program, which
// elf.NewFile would otherwise read with a pread each.
const elfHeadLen = 4096

func readInterpreter(f *os.File) interpreter {
	buf := make([]byte, elfHeadLen)
	n, _ := f.ReadAt(buf, 0)
	buf = buf[:n]
	// Of a script only the first 256 bytes count, as before.
	if head := buf[:min(n, 256)]; strings.HasPrefix(string(head), "#!") {
		line, _, _ := strings.Cut(string(head[2:]), "\n")
		fields := strings.Fields(line)
		if len(fields) == 0 || !filepath.IsAbs(fields[0]) {
			return interpreter{}
		}
		return interpreter{path: fields[0], script: true}
	}
	if off, size, ok, err := elfInterpPlace(buf); err == nil {
		if !ok {
			return interpreter{}
		}
		return readPTInterp(f, buf, off, size)
	}
	// A program header table beyond the first page, or a header this
	// reading does not take: parsed by debug/elf, as before.
	ef, err := elf.NewFile(headReaderAt{head: buf, f: f})
	if err != nil {
		return interpreter{}
	}
	defer ef.Close()
	for _, prog := range ef.Progs {
		if prog.Type == elf.PT_INTERP {
			return readPTInterp(f, buf, prog.Off, prog.Filesz)
		}
	}
	return interpreter{}
}

// readPTInterp reads the PT_INTERP string of size bytes at off in f, whose
// first bytes are head (served from memory when it lies within them).
// The size is the file's own word: a file the program wrote can claim a
// terabyte, and allocating that ends the caller (the runtime's
// out-of-memory is fatal, not a panic). The kernel refuses to exec an ELF
// whose PT_INTERP is longer than PATH_MAX or shorter than 2 bytes
// (binfmt_elf), so such a file names no interpreter to grant.
func readPTInterp(f io.ReaderAt, head []byte, off, size uint64) interpreter {
	if size < 2 || size > maxInterpLen || off > 1<<62 {
		return interpreter{}
	}
	buf := make([]byte, size)
	if _, err := (headReaderAt{head: head, f: f}).ReadAt(buf, int64(off)); err != nil {
		return interpreter{}
	}
	return interpreter{path: strings.TrimRight(string(buf), "\x00")}
}

// headReaderAt reads f, serving what lies within head (f's first bytes,
// already read) from memory: the same bytes, without a system call.
type headReaderAt struct {
	head []byte
	f    io.ReaderAt
}

func (r headReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off >= 0 && off+int64(len(p)) <= int64(len(r.head)) {
		return copy(p, r.head[off:]), nil
	}
	return r.f.ReadAt(p, off)
}
