//go:build windows

package winjob

import (
	"errors"
	"fmt"
	"sync"
	"time"
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

// EngineAccess is the access of the handle a [Job] made by [Create] holds
// until [Job.Seal]: enough to put the child in, read the job and end it, and
// not enough to change a limit (JOB_OBJECT_SET_ATTRIBUTES) or the job's
// security (WRITE_DAC): a process that steals this handle from the caller
// (OpenProcess with PROCESS_DUP_HANDLE on a process of the same user) cannot
// lift the limits with it, and [JobSecurity] refuses it more rights.
const EngineAccess = JOB_OBJECT_ASSIGN_PROCESS | JOB_OBJECT_QUERY | JOB_OBJECT_TERMINATE

// SealedAccess is the access a [Job] keeps after [Job.Seal]: read it, end it.
const SealedAccess = JOB_OBJECT_QUERY | JOB_OBJECT_TERMINATE

// JobSecurity is the security descriptor of every job this package makes,
// in SDDL: a protected DACL whose one entry grants the owner, through the
// OWNER RIGHTS SID (S-1-3-4, "OW"), READ_CONTROL and nothing else.
//
// The creator's handle is not checked against it (CreateJobObject grants
// the creator the access it asks for), so this package still sets the
// limits. Every later request for more access than a handle already has
// is checked against it and refused: DuplicateHandle of a reduced handle to
// JOB_OBJECT_ALL_ACCESS, JOB_OBJECT_SET_ATTRIBUTES or WRITE_DAC fails with
// ERROR_ACCESS_DENIED, for the user and for anyone else. Without the OWNER
// RIGHTS entry the owner would keep its implicit READ_CONTROL and WRITE_DAC,
// could rewrite this DACL through a handle raised to WRITE_DAC, and then
// raise a handle to full access: that is how a default security descriptor
// (which grants the user full access outright) lets a process undo its own
// job.
//
// What it does not stop: a caller that is elevated can take ownership with
// SeTakeOwnershipPrivilege and such; see the package doc. Wine 8.0 ignores
// the OWNER RIGHTS entry and grants the owner WRITE_DAC; it does refuse
// JOB_OBJECT_SET_ATTRIBUTES and JOB_OBJECT_ALL_ACCESS.
const JobSecurity = "D:P(A;;RC;;;OW)"

var jobSecurity = sync.OnceValues(func() (*windows.SECURITY_DESCRIPTOR, error) {
	return windows.SecurityDescriptorFromString(JobSecurity)
})

// Create makes an unnamed, non-inheritable Job Object with the limits in the
// package doc and the security descriptor [JobSecurity]. Nothing is in it
// yet. The Job holds a handle with [EngineAccess] only.
func Create(o Options) (*Job, error) {
	full, err := newJob(o)
	if err != nil {
		return nil, err
	}
	defer windows.CloseHandle(full)
	h, err := reduce(full, EngineAccess)
	if err != nil {
		return nil, err
	}
	return &Job{h: h}, nil
}

// reduce returns a new handle to the same job with access only.
func reduce(h windows.Handle, access uint32) (windows.Handle, error) {
	self := windows.CurrentProcess()
	var r windows.Handle
	if err := windows.DuplicateHandle(self, h, self, &r, access, false, 0); err != nil {
		return 0, fmt.Errorf("DuplicateHandle(job, %#x): %w", access, err)
	}
	return r, nil
}

// Seal reduces the job's handle to [SealedAccess], once the process is in
// the job: nothing can be assigned to it through this handle any more.
func (j *Job) Seal() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.h == 0 {
		return ErrClosed
	}
	h, err := reduce(j.h, SealedAccess)
	if err != nil {
		return err
	}
	windows.CloseHandle(j.h)
	j.h = h
	return nil
}

func newJob(o Options) (windows.Handle, error) {
	sd, err := jobSecurity()
	if err != nil {
		return 0, fmt.Errorf("security descriptor %s: %w", JobSecurity, err)
	}
	// InheritHandle false keeps the handle from children, and a nil name
	// keeps other processes from opening the job with OpenJobObject.
	sa := windows.SecurityAttributes{SecurityDescriptor: sd}
	sa.Length = uint32(unsafe.Sizeof(sa))
	h, err := windows.CreateJobObject(&sa, nil)
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
	if o.NoUIRestrictions {
		return h, nil
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

// TerminateAndWait ends every process in the job and waits, for at most
// timeout, until the job reports no active process. TerminateJobObject only
// starts the termination; a process still exiting could hold a pipe or a
// file a moment longer.
func (j *Job) TerminateAndWait(exitCode uint32, timeout time.Duration) error {
	if err := j.Terminate(exitCode); err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	for {
		n, err := j.ActiveProcesses()
		switch {
		case err != nil:
			return err
		case n == 0:
			return nil
		case time.Now().After(deadline):
			return fmt.Errorf("%d processes still in the job %v after TerminateJobObject", n, timeout)
		}
		time.Sleep(time.Millisecond)
	}
}

// Close terminates every process in the job (TerminateJobObject) and closes
// the job handle. Termination does not rely on KILL_ON_JOB_CLOSE alone: a
// copy of the handle taken by another process (see [EngineAccess]) would
// keep the job, and its processes, alive after this handle is closed. Close
// is idempotent.
func (j *Job) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.h == 0 {
		return nil
	}
	terr := windows.TerminateJobObject(j.h, 1)
	if terr != nil {
		terr = fmt.Errorf("TerminateJobObject: %w", terr)
	}
	err := windows.CloseHandle(j.h)
	j.h = 0
	if err != nil {
		return errors.Join(terr, fmt.Errorf("CloseHandle(job): %w", err))
	}
	return terr
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
// JOB_OBJECT_SET_ATTRIBUTES). Nor can it get a better handle: the job is
// unnamed, so it cannot be opened, and its security descriptor
// ([JobSecurity]) refuses DuplicateHandle to more access, to the owner too.
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
	if query, err = reduce(full, JOB_OBJECT_QUERY); err != nil {
		return 0, err
	}
	if err := windows.AssignProcessToJobObject(full, self); err != nil {
		windows.CloseHandle(query)
		return 0, fmt.Errorf("AssignProcessToJobObject(current process): %w", err)
	}
	return query, nil
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
