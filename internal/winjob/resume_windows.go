//go:build windows

package winjob

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/windows"
)

// ResumeSuspendedProcess resumes the main thread of process pid, created with
// CREATE_SUSPENDED, whose handle is process. The handle keeps the process ID
// from being reused while this runs.
//
// Go's os.StartProcess closes the thread handle CreateProcess returns, so the
// thread is found with a CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD) of the
// threads whose owner is pid. A process created suspended has exactly one
// thread; anything else (a thread injected from outside, a process that
// already ran) is an error and nothing is resumed. The thread is opened by
// its ID, and the handle is checked to name a thread of pid
// (GetProcessIdOfThread): between the snapshot and OpenThread the thread
// could have ended and its ID been reused by a thread of another process.
// The process is checked to be still alive (so that its only thread, which
// is suspended and cannot exit by itself, is still the one the handle
// names), and the thread is resumed. ResumeThread must report a previous suspend count of exactly
// 1: 0 means the process was running already, more means it stays
// suspended; both are errors.
func ResumeSuspendedProcess(process windows.Handle, pid uint32) error {
	tids, err := threadsOf(pid)
	if err != nil {
		return err
	}
	if len(tids) != 1 {
		return fmt.Errorf("process %d has %d threads, want exactly 1 (the suspended main thread)", pid, len(tids))
	}
	th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME|windows.THREAD_QUERY_LIMITED_INFORMATION, false, tids[0])
	if err != nil {
		return fmt.Errorf("OpenThread(%d): %w", tids[0], err)
	}
	defer windows.CloseHandle(th)
	if owner, err := processIDOfThread(th); err != nil {
		return err
	} else if owner != pid {
		return fmt.Errorf("thread %d belongs to process %d, not %d: its ID was reused", tids[0], owner, pid)
	}
	ev, err := windows.WaitForSingleObject(process, 0)
	switch {
	case err != nil:
		return fmt.Errorf("WaitForSingleObject(process %d): %w", pid, err)
	case ev != uint32(windows.WAIT_TIMEOUT):
		return fmt.Errorf("process %d has exited", pid)
	}
	prev, err := windows.ResumeThread(th)
	if err != nil {
		return fmt.Errorf("ResumeThread(%d): %w", tids[0], err)
	}
	switch {
	case prev == 0:
		return fmt.Errorf("main thread %d of process %d was not suspended: the process ran before it was assigned to the job", tids[0], pid)
	case prev > 1:
		return fmt.Errorf("main thread %d of process %d was suspended %d times and is still suspended", tids[0], pid, prev)
	}
	return nil
}

// threadsOf lists the IDs of the threads owned by pid.
func threadsOf(pid uint32) ([]uint32, error) {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return nil, fmt.Errorf("CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD): %w", err)
	}
	defer windows.CloseHandle(snap)
	var te windows.ThreadEntry32
	te.Size = uint32(unsafe.Sizeof(te))
	var tids []uint32
	for err = windows.Thread32First(snap, &te); err == nil; err = windows.Thread32Next(snap, &te) {
		if te.OwnerProcessID == pid {
			tids = append(tids, te.ThreadID)
		}
	}
	if !errors.Is(err, windows.ERROR_NO_MORE_FILES) {
		return nil, fmt.Errorf("Thread32Next: %w", err)
	}
	return tids, nil
}

// procGetProcessIdOfThread is kernel32's GetProcessIdOfThread, which
// x/sys/windows does not wrap.
var procGetProcessIdOfThread = windows.NewLazySystemDLL("kernel32.dll").NewProc("GetProcessIdOfThread")

// processIDOfThread returns the ID of the process that owns the thread.
func processIDOfThread(thread windows.Handle) (uint32, error) {
	r, _, err := procGetProcessIdOfThread.Call(uintptr(thread))
	if r == 0 {
		return 0, fmt.Errorf("GetProcessIdOfThread: %w", err)
	}
	return uint32(r), nil
}
