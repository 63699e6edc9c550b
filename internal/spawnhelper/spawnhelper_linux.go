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
	once   sync.Once
	sealed *os.File
	reason string
)

// Executable returns the sealed memfd that holds the helper, made once per
// process, or nil and why the helper cannot be used here (the caller then
// uses the Go trampoline). The file is close-on-exec and never closed; pass
// it to a child only through exec.Cmd.ExtraFiles.
func Executable() (*os.File, string) {
	once.Do(func() { sealed, reason = create() })
	return sealed, reason
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
	if why := probe(f); why != "" {
		return fail(why)
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
