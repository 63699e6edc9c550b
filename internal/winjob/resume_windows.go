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
// main thread is found with a CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD) of
// the threads whose owner is pid: the first one listed, checked by creation
// time (see mainThread). Other threads may be there (security software
// injects one at creation): they are neither refused nor resumed.
//
// The main thread is opened by its ID, and the handle is checked to name a
// thread of pid (GetProcessIdOfThread): between the snapshot and OpenThread
// the thread could have ended and its ID been reused by another process's
// thread. Its creation time is read through that handle, so the check of
// mainThread is about the thread resumed. The process is checked to be
// still alive, and the thread is resumed. ResumeThread must report a previous suspend count of exactly 1: 0
// means the process was running already, more means it stays suspended; both
// are errors (see resumed), and the caller then terminates the process.
func ResumeSuspendedProcess(process windows.Handle, pid uint32) error {
	tids, err := threadsOf(pid)
	if err != nil {
		return err
	}
	if len(tids) == 0 {
		return fmt.Errorf("process %d has no thread", pid)
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
	facts := []threadFacts{{tid: tids[0]}}
	facts[0].created, _ = threadCreated(th)
	for _, tid := range tids[1:] {
		facts = append(facts, threadFacts{tid: tid, created: createdByID(tid)})
	}
	main, err := mainThread(pid, facts)
	if err != nil {
		return err
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
		return fmt.Errorf("ResumeThread(%d): %w", main, err)
	}
	return resumed(pid, main, prev)
}

// threadsOf lists the IDs of the threads owned by pid, in the snapshot's
// order.
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

var (
	kernel32 = windows.NewLazySystemDLL("kernel32.dll")
	// procGetProcessIdOfThread and procGetThreadTimes are kernel32's
	// GetProcessIdOfThread and GetThreadTimes, which x/sys/windows does
	// not wrap.
	procGetProcessIdOfThread = kernel32.NewProc("GetProcessIdOfThread")
	procGetThreadTimes       = kernel32.NewProc("GetThreadTimes")
)

// processIDOfThread returns the ID of the process that owns the thread.
func processIDOfThread(thread windows.Handle) (uint32, error) {
	r, _, err := procGetProcessIdOfThread.Call(uintptr(thread))
	if r == 0 {
		return 0, fmt.Errorf("GetProcessIdOfThread: %w", err)
	}
	return uint32(r), nil
}

// threadCreated returns the thread's creation time in 100 ns units.
func threadCreated(thread windows.Handle) (int64, error) {
	var created, exited, kernel, user windows.Filetime
	r, _, err := procGetThreadTimes.Call(uintptr(thread), uintptr(unsafe.Pointer(&created)),
		uintptr(unsafe.Pointer(&exited)), uintptr(unsafe.Pointer(&kernel)), uintptr(unsafe.Pointer(&user)))
	if r == 0 {
		return 0, fmt.Errorf("GetThreadTimes: %w", err)
	}
	return int64(created.HighDateTime)<<32 | int64(created.LowDateTime), nil
}

// createdByID returns the creation time of thread tid, or 0 when it cannot
// be read.
func createdByID(tid uint32) int64 {
	th, err := windows.OpenThread(windows.THREAD_QUERY_LIMITED_INFORMATION, false, tid)
	if err != nil {
		return 0
	}
	defer windows.CloseHandle(th)
	t, _ := threadCreated(th)
	return t
}
