//go:build linux

package spawnhelper

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/openparallax/sandbox/internal/trampoline"
)

var (
	made    sync.Once
	memfd   *os.File
	madeWhy string

	// The decision, under mu: decided once the helper's probe ran or
	// Proven was called.
	mu      sync.Mutex
	decided bool
	sealed  *os.File
	reason  string
	// probeRuns counts the helper's own probes (ProbeRuns).
	probeRuns int
)

// Executable returns the sealed memfd that holds the helper, made once per
// process, or nil and why the helper cannot be used here (the caller then
// uses the Go trampoline). The file is close-on-exec and never closed; pass
// it to a child only through exec.Cmd.ExtraFiles.
//
// The helper is usable once it has been executed from the memfd and has
// answered: by its own probe (probe), run here unless a caller has
// already seen it answer for another purpose (Proven).
func Executable() (*os.File, string) {
	mu.Lock()
	defer mu.Unlock()
	if !decided {
		f, why := Unproven()
		if f != nil {
			probeRuns++
			if why = probe(f); why != "" {
				// Not closed: a caller of Unproven may hold it.
				f = nil
			}
		}
		sealed, reason, decided = f, why, true
	}
	return sealed, reason
}

// Unproven returns the sealed memfd, checked to hold the helper, before
// anything has executed it, or nil and why it could not be made. Only a
// caller that then executes it and reads an answer that only the helper
// gives may use it, and says so with Proven; any other use goes through
// Executable.
func Unproven() (*os.File, string) {
	made.Do(func() { memfd, madeWhy = create() })
	return memfd, madeWhy
}

// Proven records that f, as Unproven returned it, was executed from its
// memfd and answered as only the helper does (the namespace probe's child
// reported its namespace step): the question the helper's own probe asks,
// whether this process can execute it, is answered yes, and Executable
// returns f without asking it again. Nothing changes if Executable has
// already decided. An answer seen once stays true for the process: the
// memfd is sealed, and a noexec policy, a seccomp filter or an LSM that
// would refuse its execution is one this process runs under from then on
// (each only ever tightens, and then the spawn fails to start: closed).
func Proven(f *os.File) {
	if f == nil {
		return
	}
	mu.Lock()
	defer mu.Unlock()
	if !decided {
		sealed, reason, decided = f, "", true
	}
}

// ProbeRuns is how many times this process executed the helper's own
// probe: at most once, none when Proven answered first (the tests check
// that a namespace probe saves it).
func ProbeRuns() int {
	mu.Lock()
	defer mu.Unlock()
	return probeRuns
}

// Decided reports whether Executable's answer is known (its probe ran, or
// Proven was called).
func Decided() bool {
	mu.Lock()
	defer mu.Unlock()
	return decided
}

// Image is the helper's executable for this architecture, nil where there
// is none.
func Image() []byte { return image }

// Path is what exec.Cmd.Path must be for a child that has the helper at
// descriptor fd: the kernel resolves /proc/self in the child, after
// exec.Cmd placed its ExtraFiles.
func Path(fd int) string { return "/proc/self/fd/" + strconv.Itoa(fd) }

func create() (*os.File, string) {
	if len(image) == 0 {
		return nil, "no helper for this architecture"
	}
	const name = "openparallax-sandbox-helper"
	flags := unix.MFD_CLOEXEC | unix.MFD_ALLOW_SEALING
	fd, err := unix.MemfdCreate(name, flags|unix.MFD_EXEC)
	if err == unix.EINVAL {
		fd, err = unix.MemfdCreate(name, flags) // Linux < 6.3: no MFD_EXEC, always executable
	}
	if err != nil {
		if err == unix.EACCES {
			return nil, "memfd_create(MFD_EXEC) refused (vm.memfd_noexec=2?): " + err.Error()
		}
		return nil, "memfd_create: " + err.Error()
	}
	f := os.NewFile(uintptr(fd), name)
	fail := func(why string) (*os.File, string) {
		f.Close()
		return nil, why
	}
	for b := image; len(b) > 0; {
		n, err := unix.Write(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return fail("writing the helper to its memfd: " + err.Error())
		}
		b = b[n:]
	}
	seals := unix.F_SEAL_WRITE | unix.F_SEAL_GROW | unix.F_SEAL_SHRINK | unix.F_SEAL_SEAL
	if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, seals|unix.F_SEAL_EXEC); err == unix.EINVAL {
		_, err = unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, seals) // Linux < 6.3: no F_SEAL_EXEC
		if err != nil {
			return fail("sealing the helper's memfd: " + err.Error())
		}
	} else if err != nil {
		return fail("sealing the helper's memfd: " + err.Error())
	}
	// Check what the kernel holds: the seals, the size, the bytes.
	got, err := unix.FcntlInt(uintptr(fd), unix.F_GET_SEALS, 0)
	if err != nil || got&seals != seals {
		return fail(fmt.Sprintf("the helper's memfd is not sealed (seals %#x, %v)", got, err))
	}
	back := make([]byte, len(image)+1)
	n, err := unix.Pread(fd, back, 0)
	if err != nil || n != len(image) || !bytes.Equal(back[:n], image) {
		return fail("the helper's memfd does not hold the helper")
	}
	return f, ""
}

// probe executes the helper once without a payload: it must answer, with
// exit status 125 and its message, that it was started without its
// environment. Anything else (execve refused: a noexec policy, a seccomp
// filter or an LSM of the caller) means the helper cannot be used here.
func probe(f *os.File) string {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, Path(3))
	cmd.Args = []string{trampoline.Arg0, "probe"}
	cmd.Env = []string{}
	cmd.ExtraFiles = []*os.File{f}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) && ee.ExitCode() == trampoline.ExitSetup && strings.Contains(stderr.String(), "without its environment") {
		return ""
	}
	return fmt.Sprintf("executing the helper from its memfd failed (%v, %q)", err, stderr.String())
}
