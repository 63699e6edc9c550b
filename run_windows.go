//go:build windows

package sandbox

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// jobDrainTimeout bounds how long Run waits for the processes of a
// terminated job to be gone.
const jobDrainTimeout = 10 * time.Second

// confinedProc is a started, wrapped command on Windows: a process in its
// own Job Object, which holds every process it creates.
type confinedProc struct {
	cmd *exec.Cmd
	sb  *windowsSandbox
	// stdinW feeds a console standard input through a pipe; closed by
	// release.
	stdinW  *os.File
	killErr error
}

// startConfined wraps cmd with a Sandbox of its own, starts it (suspended),
// and calls PostStart, which assigns it to its job and resumes it.
//
// A console handle as standard input is not passed to the program: it is
// copied through a pipe, so that the program cannot write keystrokes into
// the caller's console with WriteConsoleInput (the copy ends when Run
// returns; a Read of the console still blocked then ends with the next
// line typed, which is lost). WrapCommand keeps the program off the
// caller's console otherwise (DETACHED_PROCESS or CREATE_NO_WINDOW).
func startConfined(cmd *exec.Cmd, cfg Config, _ bool) (*confinedProc, error) {
	path := cmd.Path
	sb := &windowsSandbox{}
	if err := sb.WrapCommand(cmd, cfg); err != nil {
		return nil, err
	}
	p := &confinedProc{cmd: cmd, sb: sb}
	var stdinR *os.File
	if f, ok := cmd.Stdin.(*os.File); ok && isConsole(f) {
		r, w, err := os.Pipe()
		if err != nil {
			sb.Close()
			return nil, fmt.Errorf("sandbox: Run: %w", err)
		}
		cmd.Stdin, stdinR, p.stdinW = r, r, w
		go func() {
			io.Copy(w, f)
			w.Close()
		}()
	}
	err := cmd.Start()
	if stdinR != nil {
		stdinR.Close()
	}
	if err != nil {
		p.closeStdin()
		sb.Close()
		return nil, fmt.Errorf("sandbox: Run %s: %w", path, err)
	}
	if err := sb.PostStart(cmd.Process.Pid); err != nil {
		p.closeStdin()
		sb.Close()
		cmd.Wait()
		return nil, fmt.Errorf("sandbox: Run %s: %w", path, err)
	}
	return p, nil
}

// isConsole reports whether f is a console handle.
func isConsole(f *os.File) bool {
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	var mode uint32
	var cerr error
	if err := rc.Control(func(fd uintptr) { cerr = windows.GetConsoleMode(windows.Handle(fd), &mode) }); err != nil {
		return false
	}
	return cerr == nil
}

func (p *confinedProc) closeStdin() {
	if p.stdinW != nil {
		p.stdinW.Close()
	}
}

func (p *confinedProc) waitExit() {
	p.cmd.Process.WithHandle(func(h uintptr) {
		windows.WaitForSingleObject(windows.Handle(h), windows.INFINITE)
	})
}

// kill terminates the job: every process in it ends.
func (p *confinedProc) kill() { p.killRest() }

// killRest terminates the job and waits until it holds no process, so that
// Run returns only after every process of the job is gone.
func (p *confinedProc) killRest() {
	if err := p.sb.terminateAndWait(jobDrainTimeout); err != nil {
		p.killErr = err
	}
}

func (p *confinedProc) release() error {
	p.closeStdin()
	return errors.Join(p.killErr, p.sb.Close())
}

func (p *confinedProc) failure() error { return nil }

// outputPipe returns a pipe whose read end (Run's) is opened for overlapped
// I/O, so that the Go runtime polls it and SetReadDeadline works: an
// os.Pipe is synchronous on Windows, and a read from it blocks for ever
// while a copy of the write end lives in a process outside the job (one
// started by a same-user route, or one the program handed it to with
// DuplicateHandle). The write end, the program's, is an ordinary
// synchronous handle, as programs expect.
//
// It is a named pipe with a random name, one instance, remote clients
// rejected, and a security descriptor that grants only its owner access;
// the write end is opened at once, so no other process can connect.
func outputPipe() (r, w *os.File, err error) {
	var nonce [16]byte
	rand.Read(nonce[:])
	name := `\\.\pipe\openparallax-sandbox-run-` + hex.EncodeToString(nonce[:])
	name16, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return nil, nil, err
	}
	sd, err := windows.SecurityDescriptorFromString("D:P(A;;GA;;;OW)")
	if err != nil {
		return nil, nil, fmt.Errorf("pipe security descriptor: %w", err)
	}
	sa := windows.SecurityAttributes{SecurityDescriptor: sd}
	sa.Length = uint32(unsafe.Sizeof(sa))
	rh, err := windows.CreateNamedPipe(name16,
		windows.PIPE_ACCESS_INBOUND|windows.FILE_FLAG_OVERLAPPED|windows.FILE_FLAG_FIRST_PIPE_INSTANCE,
		windows.PIPE_TYPE_BYTE|windows.PIPE_READMODE_BYTE|windows.PIPE_WAIT|windows.PIPE_REJECT_REMOTE_CLIENTS,
		1, 64<<10, 64<<10, 0, &sa)
	if err != nil {
		return nil, nil, fmt.Errorf("CreateNamedPipe: %w", err)
	}
	wh, err := windows.CreateFile(name16, windows.GENERIC_WRITE, 0, nil, windows.OPEN_EXISTING, windows.FILE_ATTRIBUTE_NORMAL, 0)
	if err != nil {
		windows.CloseHandle(rh)
		return nil, nil, fmt.Errorf("opening the pipe's write end: %w", err)
	}
	// os.NewFile sees FILE_FLAG_OVERLAPPED and registers the read end with
	// the runtime's poller.
	return os.NewFile(uintptr(rh), "|0"), os.NewFile(uintptr(wh), "|1"), nil
}

// limitExceeded: no limit is enforced by Run here.
func (*confinedProc) limitExceeded() string { return "" }
