//go:build windows

package winjob_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/openparallax/sandbox/internal/childtest"
	"github.com/openparallax/sandbox/internal/winjob"
)

// The helper child: the test binary re-executed with envHelper naming what
// it should do (the pattern of x/sys's GO_WANT_HELPER_PROCESS).
const envHelper = "WINJOB_TEST_HELPER"

func TestHelperChild(t *testing.T) {
	switch os.Getenv(envHelper) {
	case "":
		return // not a helper: nothing to test
	case "hello":
		fmt.Println("hello from helper")
	case "sleep":
		time.Sleep(2 * time.Minute)
	case "spawn":
		fmt.Println(trySpawn(0))
		fmt.Println(trySpawn(windows.CREATE_BREAKAWAY_FROM_JOB))
	default:
		t.Fatalf("unknown helper %q", os.Getenv(envHelper))
	}
}

// helper returns a command running the helper child in the given mode.
func helper(mode string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperChild$")
	cmd.Env = append(os.Environ(), envHelper+"="+mode)
	return cmd
}

// trySpawn starts a "hello" helper with the creation flags and reports the
// outcome as one line (childtest.TrySpawn).
func trySpawn(flags uint32) string {
	return childtest.TrySpawn(helper("hello"), flags, "hello from helper")
}

// handle returns the process handle of a started command; valid until Wait.
func handle(t *testing.T, cmd *exec.Cmd) windows.Handle {
	t.Helper()
	var h windows.Handle
	if err := cmd.Process.WithHandle(func(p uintptr) { h = windows.Handle(p) }); err != nil {
		t.Fatalf("WithHandle: %v", err)
	}
	return h
}

func killOnCleanup(t *testing.T, cmd *exec.Cmd) {
	t.Cleanup(func() { cmd.Process.Kill() })
}

// waitWithin waits for cmd, failing the test if it takes longer than d.
func waitWithin(t *testing.T, cmd *exec.Cmd, d time.Duration) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("process %d still running after %v", cmd.Process.Pid, d)
		return nil
	}
}

// startInJob starts mode suspended, assigns it to job and resumes it.
func startInJob(t *testing.T, job *winjob.Job, mode string, stdout *bytes.Buffer) *exec.Cmd {
	t.Helper()
	cmd := helper(mode)
	cmd.Stdout, cmd.Stderr = stdout, stdout
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_SUSPENDED}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killOnCleanup(t, cmd)
	h := handle(t, cmd)
	if err := job.Assign(h); err != nil {
		t.Fatal(err)
	}
	if err := winjob.ResumeSuspendedProcess(h, uint32(cmd.Process.Pid)); err != nil {
		t.Fatal(err)
	}
	return cmd
}

func TestSupported(t *testing.T) {
	if err := winjob.Supported(); err != nil {
		t.Fatal(err)
	}
	t.Logf("under Wine: %v", winjob.UnderWine())
}

func TestLimitsReadBack(t *testing.T) {
	for _, o := range []winjob.Options{{ActiveProcessLimit: 1}, {}} {
		job, err := winjob.Create(o)
		if err != nil {
			t.Fatal(err)
		}
		defer job.Close()
		got, err := job.Limits()
		if err != nil {
			t.Fatal(err)
		}
		if winjob.UnderWine() && got == (winjob.Limits{}) {
			t.Skip("Wine does not read job limits back (QueryInformationJobObject returned all limits as 0); " +
				"the limits that Wine enforces are tested by their effect")
		}
		want := uint32(winjob.BaseLimitFlags)
		if o.ActiveProcessLimit > 0 {
			want |= windows.JOB_OBJECT_LIMIT_ACTIVE_PROCESS
		}
		if got.LimitFlags != want || got.ActiveProcessLimit != o.ActiveProcessLimit {
			t.Errorf("limits = %#x/%d, want %#x/%d", got.LimitFlags, got.ActiveProcessLimit, want, o.ActiveProcessLimit)
		}
		if got.LimitFlags&winjob.BreakawayFlags != 0 {
			t.Errorf("breakaway allowed: limit flags %#x", got.LimitFlags)
		}
		ui, err := job.UIRestrictions()
		if err != nil {
			t.Fatal(err)
		}
		if ui != winjob.UIRestrictions {
			t.Errorf("UI restrictions = %#x, want %#x", ui, winjob.UIRestrictions)
		}
	}
}

func TestAssignAndResume(t *testing.T) {
	job, err := winjob.Create(winjob.Options{ActiveProcessLimit: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer job.Close()

	var out bytes.Buffer
	cmd := helper("hello")
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_SUSPENDED}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killOnCleanup(t, cmd)
	h, pid := handle(t, cmd), uint32(cmd.Process.Pid)
	if in, err := winjob.InJob(h, job.Handle()); err != nil || in {
		t.Fatalf("before Assign: InJob = %v, %v; want false", in, err)
	}
	if err := job.Assign(h); err != nil {
		t.Fatal(err)
	}
	if in, err := winjob.InJob(h, job.Handle()); err != nil || !in {
		t.Fatalf("after Assign: InJob = %v, %v; want true", in, err)
	}
	if ids, err := job.ProcessIDs(); err != nil || !slices.Contains(ids, pid) {
		t.Fatalf("ProcessIDs = %v, %v; want %d in it", ids, err, pid)
	}
	if n, err := job.ActiveProcesses(); err != nil || n != 1 {
		t.Fatalf("ActiveProcesses = %d, %v; want 1", n, err)
	}
	time.Sleep(200 * time.Millisecond)
	if out.Len() != 0 {
		t.Fatalf("suspended child wrote %q", out.String())
	}
	if err := winjob.ResumeSuspendedProcess(h, pid); err != nil {
		t.Fatal(err)
	}
	if err := waitWithin(t, cmd, time.Minute); err != nil {
		t.Fatalf("child: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "hello from helper") {
		t.Fatalf("child output %q", out.String())
	}
	if n, err := job.ActiveProcesses(); err != nil || n != 0 {
		t.Fatalf("after exit: ActiveProcesses = %d, %v; want 0", n, err)
	}
}

func TestResumeRefusesRunningProcess(t *testing.T) {
	cmd := helper("sleep")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killOnCleanup(t, cmd)
	time.Sleep(500 * time.Millisecond) // let the runtime start its threads
	err := winjob.ResumeSuspendedProcess(handle(t, cmd), uint32(cmd.Process.Pid))
	if err == nil || !strings.Contains(err.Error(), "was not suspended") {
		t.Fatalf("ResumeSuspendedProcess(running process) = %v, want a not-suspended error", err)
	}
	t.Logf("refused as expected: %v", err)
}

// TestResumeWithInjectedThread: security software may create a thread in
// a process at its creation. A second thread (here one created suspended
// with CreateRemoteThread, so that it never runs) must not keep the main
// thread from being resumed: the program runs in its job.
func TestResumeWithInjectedThread(t *testing.T) {
	job, err := winjob.Create(winjob.Options{ActiveProcessLimit: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer job.Close()
	var out bytes.Buffer
	cmd := helper("hello")
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_SUSPENDED}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killOnCleanup(t, cmd)
	h := handle(t, cmd)
	k32 := windows.NewLazySystemDLL("kernel32.dll")
	exitThread := k32.NewProc("ExitThread")
	if err := exitThread.Find(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond) // a later creation time than the main thread's
	var tid uint32
	th, _, err := k32.NewProc("CreateRemoteThread").Call(uintptr(h), 0, 0, exitThread.Addr(), 0,
		windows.CREATE_SUSPENDED, uintptr(unsafe.Pointer(&tid)))
	if th == 0 {
		t.Fatalf("CreateRemoteThread: %v", err)
	}
	windows.CloseHandle(windows.Handle(th))
	if err := job.Assign(h); err != nil {
		t.Fatal(err)
	}
	if err := winjob.ResumeSuspendedProcess(h, uint32(cmd.Process.Pid)); err != nil {
		t.Fatalf("ResumeSuspendedProcess with an injected thread (%d): %v", tid, err)
	}
	if err := waitWithin(t, cmd, time.Minute); err != nil || !strings.Contains(out.String(), "hello from helper") {
		t.Fatalf("child: %v\n%s", err, out.String())
	}
}

func TestResumeRefusesDoubleSuspension(t *testing.T) {
	// A process whose main thread is suspended twice must not be reported
	// as resumed: it would still be suspended.
	cmd := helper("hello")
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_SUSPENDED}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killOnCleanup(t, cmd)
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer windows.CloseHandle(snap)
	var te windows.ThreadEntry32
	te.Size = uint32(unsafe.Sizeof(te))
	suspended := 0
	for err = windows.Thread32First(snap, &te); err == nil; err = windows.Thread32Next(snap, &te) {
		if te.OwnerProcessID != uint32(cmd.Process.Pid) {
			continue
		}
		th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, te.ThreadID)
		if err != nil {
			t.Fatal(err)
		}
		// x/sys/windows does not wrap SuspendThread; the test binds it.
		r, _, err := windows.NewLazySystemDLL("kernel32.dll").NewProc("SuspendThread").Call(uintptr(th))
		if r == 0xFFFFFFFF {
			t.Fatalf("SuspendThread: %v", err)
		}
		windows.CloseHandle(th)
		suspended++
	}
	if suspended != 1 {
		t.Fatalf("suspended %d threads, want 1", suspended)
	}
	err = winjob.ResumeSuspendedProcess(handle(t, cmd), uint32(cmd.Process.Pid))
	if err == nil || !strings.Contains(err.Error(), "still suspended") {
		t.Fatalf("ResumeSuspendedProcess = %v, want a still-suspended error", err)
	}
}

func TestKillOnClose(t *testing.T) {
	job, err := winjob.Create(winjob.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd := startInJob(t, job, "sleep", &out)
	time.Sleep(200 * time.Millisecond)
	if err := job.Close(); err != nil {
		t.Fatal(err)
	}
	waitWithin(t, cmd, 10*time.Second)
	if err := job.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := job.Assign(windows.CurrentProcess()); !errors.Is(err, winjob.ErrClosed) {
		t.Fatalf("Assign after Close = %v, want ErrClosed", err)
	}
}

// spawnResults runs the "spawn" helper in a job with o and returns its two
// result lines: a plain spawn and a CREATE_BREAKAWAY_FROM_JOB spawn.
func spawnResults(t *testing.T, o winjob.Options) (plain, breakaway string) {
	job, err := winjob.Create(o)
	if err != nil {
		t.Fatal(err)
	}
	defer job.Close()
	var out bytes.Buffer
	cmd := startInJob(t, job, "spawn", &out)
	if err := waitWithin(t, cmd, time.Minute); err != nil {
		t.Fatalf("child: %v\n%s", err, out.String())
	}
	for l := range strings.Lines(out.String()) {
		switch {
		case strings.HasPrefix(l, "spawn(0x0)"):
			plain = strings.TrimSpace(l)
		case strings.HasPrefix(l, fmt.Sprintf("spawn(%#x)", windows.CREATE_BREAKAWAY_FROM_JOB)):
			breakaway = strings.TrimSpace(l)
		}
	}
	if plain == "" || breakaway == "" {
		t.Fatalf("child output lacks results:\n%s", out.String())
	}
	return plain, breakaway
}

func errnoLine(e syscall.Errno) string { return fmt.Sprintf(": errno %d:", uint32(e)) }

func TestBreakawayDenied(t *testing.T) {
	plain, breakaway := spawnResults(t, winjob.Options{})
	if !strings.HasSuffix(plain, ": ok") {
		t.Errorf("spawn without a limit: %s", plain)
	}
	if !strings.Contains(breakaway, errnoLine(windows.ERROR_ACCESS_DENIED)) {
		t.Errorf("breakaway not denied with ERROR_ACCESS_DENIED: %s", breakaway)
	}
}

func TestActiveProcessLimit(t *testing.T) {
	plain, breakaway := spawnResults(t, winjob.Options{ActiveProcessLimit: 1})
	if !strings.Contains(breakaway, errnoLine(windows.ERROR_ACCESS_DENIED)) &&
		!strings.Contains(breakaway, errnoLine(windows.ERROR_NOT_ENOUGH_QUOTA)) {
		t.Errorf("breakaway spawn not denied: %s", breakaway)
	}
	if winjob.UnderWine() && strings.HasSuffix(plain, ": ok") {
		t.Skipf("Wine does not enforce the job's active-process limit: a process in a job limited to 1 started a child (%s)", plain)
	}
	if !strings.Contains(plain, errnoLine(windows.ERROR_NOT_ENOUGH_QUOTA)) {
		t.Errorf("spawn not denied with ERROR_NOT_ENOUGH_QUOTA: %s", plain)
	}
}

func TestConfineSelf(t *testing.T) {
	childtest.Run(t, func(t *testing.T) {
		self := windows.CurrentProcess()
		q, err := winjob.ConfineSelf(winjob.Options{ActiveProcessLimit: 1})
		if err != nil {
			t.Fatal(err)
		}
		if in, err := winjob.InJob(self, q); err != nil || !in {
			t.Fatalf("InJob(self, job) = %v, %v; want true", in, err)
		}
		// The handle left is query-only: the limits cannot be lifted
		// through it.
		var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
		_, err = windows.SetInformationJobObject(q, windows.JobObjectExtendedLimitInformation,
			uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)))
		if !errors.Is(err, windows.ERROR_ACCESS_DENIED) {
			t.Fatalf("SetInformationJobObject through the kept handle = %v, want ERROR_ACCESS_DENIED", err)
		}
		if err := windows.AssignProcessToJobObject(q, self); !errors.Is(err, windows.ERROR_ACCESS_DENIED) {
			t.Fatalf("AssignProcessToJobObject through the kept handle = %v, want ERROR_ACCESS_DENIED", err)
		}
		breakaway := trySpawn(windows.CREATE_BREAKAWAY_FROM_JOB)
		if !strings.Contains(breakaway, errnoLine(windows.ERROR_ACCESS_DENIED)) &&
			!strings.Contains(breakaway, errnoLine(windows.ERROR_NOT_ENOUGH_QUOTA)) {
			t.Errorf("breakaway spawn not denied: %s", breakaway)
		}
		plain := trySpawn(0)
		if winjob.UnderWine() && strings.HasSuffix(plain, ": ok") {
			t.Skipf("Wine does not enforce the job's active-process limit: the confined process started a child (%s)", plain)
		}
		if !strings.Contains(plain, errnoLine(windows.ERROR_NOT_ENOUGH_QUOTA)) {
			t.Errorf("spawn after ConfineSelf not denied with ERROR_NOT_ENOUGH_QUOTA: %s", plain)
		}
	})
}

// raise tries to raise h to access with DuplicateHandle and closes what it
// gets; the error says whether the job's security descriptor refused.
func raise(h windows.Handle, access uint32) error {
	self := windows.CurrentProcess()
	var r windows.Handle
	err := windows.DuplicateHandle(self, h, self, &r, access, false, 0)
	if err == nil {
		windows.CloseHandle(r)
	}
	return err
}

const jobAllAccess = windows.STANDARD_RIGHTS_REQUIRED | windows.SYNCHRONIZE | 0x3F // JOB_OBJECT_ALL_ACCESS

// checkCannotRaise fails the test unless h cannot be raised to a handle
// that changes the job's limits or its security descriptor.
func checkCannotRaise(t *testing.T, h windows.Handle) {
	t.Helper()
	for _, a := range []struct {
		name   string
		access uint32
	}{
		{"JOB_OBJECT_ALL_ACCESS", jobAllAccess},
		{"JOB_OBJECT_SET_ATTRIBUTES", winjob.JOB_OBJECT_SET_ATTRIBUTES},
		{"JOB_OBJECT_SET_SECURITY_ATTRIBUTES", winjob.JOB_OBJECT_SET_SECURITY_ATTRIBUTES},
	} {
		if err := raise(h, a.access); !errors.Is(err, windows.ERROR_ACCESS_DENIED) {
			t.Errorf("DuplicateHandle(job, %s) = %v, want ERROR_ACCESS_DENIED", a.name, err)
		}
	}
	err := raise(h, windows.WRITE_DAC)
	switch {
	case errors.Is(err, windows.ERROR_ACCESS_DENIED):
	case err == nil && winjob.UnderWine():
		t.Log("Wine ignores the OWNER RIGHTS entry and grants the owner WRITE_DAC: only Windows proves " +
			"that the owner cannot rewrite the job's DACL (and then raise a handle to full access)")
	default:
		t.Errorf("DuplicateHandle(job, WRITE_DAC) = %v, want ERROR_ACCESS_DENIED", err)
	}
}

// The job ApplySelf makes cannot be undone from inside: the query-only
// handle the process keeps cannot be raised to one that lifts a limit.
func TestConfineSelfCannotBeUndone(t *testing.T) {
	childtest.Run(t, func(t *testing.T) {
		q, err := winjob.ConfineSelf(winjob.Options{ActiveProcessLimit: 1})
		if err != nil {
			t.Fatal(err)
		}
		checkCannotRaise(t, q)
	})
}

// The handle the caller of Create holds (and a process that steals it
// with PROCESS_DUP_HANDLE gets) cannot change a limit.
func TestCreatedJobCannotBeChanged(t *testing.T) {
	job, err := winjob.Create(winjob.Options{ActiveProcessLimit: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer job.Close()
	var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
	info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_SILENT_BREAKAWAY_OK
	_, err = windows.SetInformationJobObject(job.Handle(), windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)))
	if !errors.Is(err, windows.ERROR_ACCESS_DENIED) {
		t.Fatalf("SetInformationJobObject(silent breakaway) through the job's handle = %v, want ERROR_ACCESS_DENIED", err)
	}
	checkCannotRaise(t, job.Handle())
	if err := job.Seal(); err != nil {
		t.Fatal(err)
	}
	if err := job.Assign(windows.CurrentProcess()); !errors.Is(err, windows.ERROR_ACCESS_DENIED) {
		t.Fatalf("Assign after Seal = %v, want ERROR_ACCESS_DENIED", err)
	}
	if n, err := job.ActiveProcesses(); err != nil || n != 0 {
		t.Fatalf("ActiveProcesses after Seal = %d, %v; want 0, nil", n, err)
	}
	checkCannotRaise(t, job.Handle())
}

// Close ends the job's processes even when another handle to the job is
// open (a copy stolen by a process of the same user would otherwise keep
// KILL_ON_JOB_CLOSE from firing).
func TestCloseTerminatesDespiteOtherHandle(t *testing.T) {
	job, err := winjob.Create(winjob.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	cmd := startInJob(t, job, "sleep", &out)
	self := windows.CurrentProcess()
	var other windows.Handle
	if err := windows.DuplicateHandle(self, job.Handle(), self, &other, 0, false, windows.DUPLICATE_SAME_ACCESS); err != nil {
		t.Fatal(err)
	}
	defer windows.CloseHandle(other)
	if err := job.Close(); err != nil {
		t.Fatal(err)
	}
	waitWithin(t, cmd, 10*time.Second)
}

func TestTerminateAndWait(t *testing.T) {
	job, err := winjob.Create(winjob.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer job.Close()
	var out bytes.Buffer
	cmd := startInJob(t, job, "sleep", &out)
	if err := job.TerminateAndWait(1, 10*time.Second); err != nil {
		t.Fatal(err)
	}
	if n, err := job.ActiveProcesses(); err != nil || n != 0 {
		t.Fatalf("ActiveProcesses after TerminateAndWait = %d, %v; want 0", n, err)
	}
	if ev, err := windows.WaitForSingleObject(handle(t, cmd), 0); err != nil || ev != windows.WAIT_OBJECT_0 {
		t.Fatalf("process still running after TerminateAndWait (wait = %#x, %v)", ev, err)
	}
}

func TestNoUIRestrictions(t *testing.T) {
	job, err := winjob.Create(winjob.Options{NoUIRestrictions: true})
	if err != nil {
		t.Fatal(err)
	}
	defer job.Close()
	ui, err := job.UIRestrictions()
	if err != nil && winjob.UnderWine() {
		t.Skipf("Wine cannot read UI restrictions back (%v): only Windows proves a job made for a process "+
			"in a job has none (and that Windows refuses to nest one that has them)", err)
	}
	if err != nil || ui != 0 {
		t.Fatalf("UI restrictions = %#x, %v; want none", ui, err)
	}
}
