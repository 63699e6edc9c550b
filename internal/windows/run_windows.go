//go:build windows

package windows

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

// Proc is a started, wrapped command of Run: a process in its own Job
// Object, which holds every process it creates.
type Proc struct {
	cmd  *exec.Cmd
	jobs *Jobs
	// stdinW feeds a console standard input through a pipe; closed by
	// Release.
	stdinW  *os.File
	killErr error
}

// Start starts cmd, which jobs has just wrapped (suspended), and calls
// jobs.PostStart, which assigns it to its job and resumes it. On any error
// jobs is closed and no process of cmd runs.
//
// A console handle as standard input is not passed to the program: it is
// copied through a pipe, so that the program cannot write keystrokes into
// the caller's console with WriteConsoleInput (the copy ends when Run
// returns; a Read of the console still blocked then ends with the next
// line typed, which is lost). Wrap keeps the program off the caller's
// console otherwise (DETACHED_PROCESS or CREATE_NO_WINDOW).
func Start(cmd *exec.Cmd, jobs *Jobs) (*Proc, error) {
	path := cmd.Path
	p := &Proc{cmd: cmd, jobs: jobs}
	var stdinR *os.File
	if f, ok := cmd.Stdin.(*os.File); ok && isConsole(f) {
		r, w, err := os.Pipe()
		if err != nil {
			jobs.Close()
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
		jobs.Close()
		return nil, fmt.Errorf("sandbox: Run %s: %w", path, err)
	}
	if err := jobs.PostStart(cmd.Process.Pid); err != nil {
		p.closeStdin()
		jobs.Close()
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

func (p *Proc) closeStdin() {
	if p.stdinW != nil {
		p.stdinW.Close()
	}
}

// WaitExit waits until the program (the process Start started) has exited;
// processes it created may still run.
func (p *Proc) WaitExit() {
	p.cmd.Process.WithHandle(func(h uintptr) {
		windows.WaitForSingleObject(windows.Handle(h), windows.INFINITE)
	})
}

// Kill terminates the job: every process in it ends.
func (p *Proc) Kill() { p.KillRest() }

// KillRest terminates the job and waits until it holds no process, so that
// Run returns only after every process of the job is gone. An error is
// kept for Release.
func (p *Proc) KillRest() {
	if err := p.jobs.TerminateAndWait(jobDrainTimeout); err != nil {
		p.killErr = err
	}
}

// Release closes the console copy and the jobs, returning the error of
// KillRest, if any, and of closing the jobs.
func (p *Proc) Release() error {
	p.closeStdin()
	return errors.Join(p.killErr, p.jobs.Close())
}

// OutputPipe returns a pipe whose read end (Run's) is opened for overlapped
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
func OutputPipe() (r, w *os.File, err error) {
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
