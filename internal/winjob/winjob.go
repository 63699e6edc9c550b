//go:build windows

package winjob

import (
	"errors"
	"fmt"
	"sync"
	"unsafe"

	"golang.org/x/sys/windows"
)

// Access rights of a job handle (winnt.h), missing from x/sys/windows.
const (
	JOB_OBJECT_ASSIGN_PROCESS          = 0x0001
	JOB_OBJECT_SET_ATTRIBUTES          = 0x0002
	JOB_OBJECT_QUERY                   = 0x0004
	JOB_OBJECT_TERMINATE               = 0x0008
	JOB_OBJECT_SET_SECURITY_ATTRIBUTES = 0x0010
)

// BaseLimitFlags are set on every job this package makes.
const BaseLimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE |
	windows.JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION

// BreakawayFlags are never set on a job this package makes.
const BreakawayFlags = windows.JOB_OBJECT_LIMIT_BREAKAWAY_OK |
	windows.JOB_OBJECT_LIMIT_SILENT_BREAKAWAY_OK

// UIRestrictions are the JOBOBJECT_BASIC_UI_RESTRICTIONS set on every job
// this package makes: all of them (see the package doc for why).
const UIRestrictions = windows.JOB_OBJECT_UILIMIT_DESKTOP |
	windows.JOB_OBJECT_UILIMIT_DISPLAYSETTINGS |
	windows.JOB_OBJECT_UILIMIT_EXITWINDOWS |
	windows.JOB_OBJECT_UILIMIT_GLOBALATOMS |
	windows.JOB_OBJECT_UILIMIT_HANDLES |
	windows.JOB_OBJECT_UILIMIT_READCLIPBOARD |
	windows.JOB_OBJECT_UILIMIT_SYSTEMPARAMETERS |
	windows.JOB_OBJECT_UILIMIT_WRITECLIPBOARD

// Options are the limits that vary between jobs.
type Options struct {
	// ActiveProcessLimit is the most processes the job may hold at once; 0
	// sets no limit. 1 denies creating processes to the one process put in
	// the job.
	ActiveProcessLimit uint32
}

// limitFlags returns the JOBOBJECT_BASIC_LIMIT_INFORMATION.LimitFlags for o.
func (o Options) limitFlags() uint32 {
	f := uint32(BaseLimitFlags)
	if o.ActiveProcessLimit > 0 {
		f |= windows.JOB_OBJECT_LIMIT_ACTIVE_PROCESS
	}
	return f
}

// Job is an unnamed Job Object made by [Create]. Its methods are safe for
// concurrent use; after Close they return [ErrClosed].
type Job struct {
	mu sync.Mutex
	h  windows.Handle
}

// ErrClosed is returned by the methods of a closed [Job].
var ErrClosed = errors.New("winjob: job is closed")

// Create makes an unnamed, non-inheritable Job Object with the limits in the
// package doc. Nothing is in it yet.
func Create(o Options) (*Job, error) {
	h, err := newJob(o)
	if err != nil {
		return nil, err
	}
	return &Job{h: h}, nil
}

func newJob(o Options) (windows.Handle, error) {
	// A nil SECURITY_ATTRIBUTES makes the handle non-inheritable, and a nil
	// name keeps other processes from opening the job with OpenJobObject.
	h, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, fmt.Errorf("CreateJobObject: %w", err)
	}
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	info.BasicLimitInformation.LimitFlags = o.limitFlags()
	info.BasicLimitInformation.ActiveProcessLimit = o.ActiveProcessLimit
	if _, err := windows.SetInformationJobObject(h, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(h)
		return 0, fmt.Errorf("SetInformationJobObject(JobObjectExtendedLimitInformation): %w", err)
	}
	ui := windows.JOBOBJECT_BASIC_UI_RESTRICTIONS{UIRestrictionsClass: UIRestrictions}
	if _, err := windows.SetInformationJobObject(h, windows.JobObjectBasicUIRestrictions,
		uintptr(unsafe.Pointer(&ui)), uint32(unsafe.Sizeof(ui))); err != nil {
		windows.CloseHandle(h)
		return 0, fmt.Errorf("SetInformationJobObject(JobObjectBasicUIRestrictions): %w", err)
	}
	return h, nil
}

// Supported reports whether jobs with this package's limits can be made here,
// by making one and closing it.
func Supported() error {
	h, err := newJob(Options{ActiveProcessLimit: 1})
	if err != nil {
		return err
	}
	return windows.CloseHandle(h)
}

// with runs f with the job handle held open.
func (j *Job) with(f func(h windows.Handle) error) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.h == 0 {
		return ErrClosed
	}
	return f(j.h)
}

// Handle returns the job handle, or 0 after Close. It stays valid only until
// Close; it is meant for checks such as [InJob].
func (j *Job) Handle() windows.Handle {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.h
}

// Assign puts the process behind the handle into the job. The handle needs
// PROCESS_SET_QUOTA and PROCESS_TERMINATE (a handle from CreateProcess has
// every right).
func (j *Job) Assign(process windows.Handle) error {
	return j.with(func(h windows.Handle) error {
		if err := windows.AssignProcessToJobObject(h, process); err != nil {
			return fmt.Errorf("AssignProcessToJobObject: %w", err)
		}
		return nil
	})
}

// Terminate ends every process in the job with the exit code.
func (j *Job) Terminate(exitCode uint32) error {
	return j.with(func(h windows.Handle) error {
		if err := windows.TerminateJobObject(h, exitCode); err != nil {
			return fmt.Errorf("TerminateJobObject: %w", err)
		}
		return nil
	})
}

// Close closes the job handle. Being the only handle, closing it terminates
// every process still in the job (KILL_ON_JOB_CLOSE). Close is idempotent.
func (j *Job) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.h == 0 {
		return nil
	}
	err := windows.CloseHandle(j.h)
	j.h = 0
	if err != nil {
		return fmt.Errorf("CloseHandle(job): %w", err)
	}
	return nil
}

// accountingInfo is JOBOBJECT_BASIC_ACCOUNTING_INFORMATION (winnt.h), which
// x/sys/windows does not define.
type accountingInfo struct {
	TotalUserTime             int64
	TotalKernelTime           int64
	ThisPeriodTotalUserTime   int64
	ThisPeriodTotalKernelTime int64
	TotalPageFaultCount       uint32
	TotalProcesses            uint32
	ActiveProcesses           uint32
	TotalTerminatedProcesses  uint32
}

// ActiveProcesses returns how many processes are in the job now.
func (j *Job) ActiveProcesses() (uint32, error) {
	var info accountingInfo
	err := j.with(func(h windows.Handle) error {
		return windows.QueryInformationJobObject(h, windows.JobObjectBasicAccountingInformation,
			uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)), nil)
	})
	if err != nil {
		return 0, fmt.Errorf("QueryInformationJobObject(JobObjectBasicAccountingInformation): %w", err)
	}
	return info.ActiveProcesses, nil
}

// ProcessIDs returns the IDs of the processes in the job (at most 64).
func (j *Job) ProcessIDs() ([]uint32, error) {
	// JOBOBJECT_BASIC_PROCESS_ID_LIST with room for 64 IDs.
	var list struct {
		NumberOfAssignedProcesses uint32
		NumberOfProcessIdsInList  uint32
		ProcessIdList             [64]uintptr
	}
	err := j.with(func(h windows.Handle) error {
		return windows.QueryInformationJobObject(h, windows.JobObjectBasicProcessIdList,
			uintptr(unsafe.Pointer(&list)), uint32(unsafe.Sizeof(list)), nil)
	})
	if err != nil && !errors.Is(err, windows.ERROR_MORE_DATA) {
		return nil, fmt.Errorf("QueryInformationJobObject(JobObjectBasicProcessIdList): %w", err)
	}
	n := min(int(list.NumberOfProcessIdsInList), len(list.ProcessIdList))
	ids := make([]uint32, n)
	for i := range n {
		ids[i] = uint32(list.ProcessIdList[i])
	}
	return ids, nil
}

// Limits is what a job reports about its own limits.
type Limits struct {
	LimitFlags         uint32
	ActiveProcessLimit uint32
}

// Limits reads the job's limits back. Wine 8.0 reads them as 0.
func (j *Job) Limits() (Limits, error) {
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	err := j.with(func(h windows.Handle) error {
		return windows.QueryInformationJobObject(h, windows.JobObjectExtendedLimitInformation,
			uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)), nil)
	})
	if err != nil {
		return Limits{}, fmt.Errorf("QueryInformationJobObject(JobObjectExtendedLimitInformation): %w", err)
	}
	return Limits{
		LimitFlags:         info.BasicLimitInformation.LimitFlags,
		ActiveProcessLimit: info.BasicLimitInformation.ActiveProcessLimit,
	}, nil
}

// UIRestrictions reads the job's UI restrictions back. Wine 8.0 fails with
// ERROR_INVALID_FUNCTION.
func (j *Job) UIRestrictions() (uint32, error) {
	var ui windows.JOBOBJECT_BASIC_UI_RESTRICTIONS
	err := j.with(func(h windows.Handle) error {
		return windows.QueryInformationJobObject(h, windows.JobObjectBasicUIRestrictions,
			uintptr(unsafe.Pointer(&ui)), uint32(unsafe.Sizeof(ui)), nil)
	})
	if err != nil {
		return 0, fmt.Errorf("QueryInformationJobObject(JobObjectBasicUIRestrictions): %w", err)
	}
	return ui.UIRestrictionsClass, nil
}

// ConfineSelf puts the calling process into a new job with the limits in the
// package doc, irreversibly: Windows has no call that takes a process out of
// its job, and the only handle to the job left afterwards is the one
// returned, which has JOB_OBJECT_QUERY access only, so code running in the
// process cannot lift the limits through it (SetInformationJobObject needs
// JOB_OBJECT_SET_ATTRIBUTES). The job is unnamed, so it cannot be opened
// with more rights.
//
// The caller keeps the returned handle open for the life of the process:
// closing it kills the process and its children (KILL_ON_JOB_CLOSE), and it
// closes by itself when the process exits, which kills the children left in
// the job then.
//
// On error the process is not in the job and no handle is left open.
func ConfineSelf(o Options) (query windows.Handle, err error) {
	full, err := newJob(o)
	if err != nil {
		return 0, err
	}
	defer windows.CloseHandle(full)
	self := windows.CurrentProcess()
	// Reduce the handle before the process is in the job, so that no step
	// after the assignment can fail and leave a full-access handle behind.
	if err := windows.DuplicateHandle(self, full, self, &query, JOB_OBJECT_QUERY, false, 0); err != nil {
		return 0, fmt.Errorf("DuplicateHandle(job, JOB_OBJECT_QUERY): %w", err)
	}
	if err := windows.AssignProcessToJobObject(full, self); err != nil {
		windows.CloseHandle(query)
		return 0, fmt.Errorf("AssignProcessToJobObject(current process): %w", err)
	}
	return query, nil
}

// ResumeSuspendedProcess resumes the main thread of process pid, created with
// CREATE_SUSPENDED, whose handle is process. The handle keeps the process ID
// from being reused while this runs.
//
// Go's os.StartProcess closes the thread handle CreateProcess returns, so the
// thread is found with a CreateToolhelp32Snapshot(TH32CS_SNAPTHREAD) of the
// threads whose owner is pid. A process created suspended has exactly one
// thread; anything else (a thread injected from outside, a process that
// already ran) is an error and nothing is resumed. The thread is opened,
// the process is checked to be still alive (so that its only thread, which
// is suspended and cannot exit by itself, is the one the thread ID names),
// and resumed. ResumeThread must report a previous suspend count of exactly
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
	th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, tids[0])
	if err != nil {
		return fmt.Errorf("OpenThread(%d): %w", tids[0], err)
	}
	defer windows.CloseHandle(th)
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

// procIsProcessInJob is kernel32's IsProcessInJob, which x/sys/windows does
// not wrap; it is bound lazily from the system directory. It is used to
// verify a confinement, never to make one.
var procIsProcessInJob = windows.NewLazySystemDLL("kernel32.dll").NewProc("IsProcessInJob")

// InJob reports whether the process is in the job; with job 0, whether it is
// in any job.
func InJob(process, job windows.Handle) (bool, error) {
	var result int32 // BOOL
	r, _, err := procIsProcessInJob.Call(uintptr(process), uintptr(job), uintptr(unsafe.Pointer(&result)))
	if r == 0 {
		return false, fmt.Errorf("IsProcessInJob: %w", err)
	}
	return result != 0, nil
}

// UnderWine reports whether this process runs under Wine, by the ntdll
// export wine_get_version that Windows does not have.
func UnderWine() bool {
	return windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
}
