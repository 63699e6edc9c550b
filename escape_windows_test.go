//go:build windows

package sandbox_test

// Tests of the routes around a Job Object, and of what the library does
// about them: the parent-process route is reported (it cannot be closed
// without changing the token), the console is not shared, and Run neither
// hangs on a pipe held outside the job nor returns before the job is empty.

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/openparallax/sandbox"
	"github.com/openparallax/sandbox/internal/childtest"
	"github.com/openparallax/sandbox/internal/winjob"
)

// extraHelper runs the helper modes of this file; false for an unknown mode.
func extraHelper(t *testing.T, mode string) bool {
	switch mode {
	case "parent-escape":
		// Open the parent (the test process, outside the job) for
		// PROCESS_CREATE_PROCESS and name it as the parent of a new
		// process: the route around the active-process limit.
		pp, err := windows.OpenProcess(windows.PROCESS_CREATE_PROCESS|windows.PROCESS_DUP_HANDLE, false, uint32(os.Getppid()))
		if err != nil {
			fmt.Printf("open parent: %v\n", err)
			return true
		}
		cmd := helperCmd("sleep")
		cmd.SysProcAttr = &syscall.SysProcAttr{ParentProcess: syscall.Handle(pp)}
		if err := cmd.Start(); err != nil {
			fmt.Printf("start with parent: %v\n", err)
			return true
		}
		in := "?"
		cmd.Process.WithHandle(func(h uintptr) {
			if b, err := winjob.InJob(windows.Handle(h), 0); err == nil {
				in = strconv.FormatBool(b)
			}
		})
		fmt.Printf("escaped pid %d in-job %s\n", cmd.Process.Pid, in)
		// The canary, run here (its parent is the test process), must see
		// the route.
		for _, p := range sandbox.VerifyCanary().Probes {
			if p.Name == "process_spawn_parent" {
				fmt.Printf("canary %s %s: %s\n", p.Name, p.Status, p.Error)
			}
		}
	case "dup-stdout":
		// Hand a copy of standard output's write end to the parent (a
		// process outside the job), so that the pipe never reaches EOF.
		pp, err := windows.OpenProcess(windows.PROCESS_DUP_HANDLE, false, uint32(os.Getppid()))
		if err != nil {
			fmt.Printf("open parent: %v\n", err)
			return true
		}
		var h windows.Handle
		err = windows.DuplicateHandle(windows.CurrentProcess(), windows.Handle(os.Stdout.Fd()), pp, &h, 0, false, windows.DUPLICATE_SAME_ACCESS)
		fmt.Printf("duplicated %d %v\n", h, err)
	case "spawn-sleeper":
		cmd := helperCmd("sleep")
		if err := cmd.Start(); err != nil {
			fmt.Printf("start: %v\n", err)
			return true
		}
		fmt.Printf("sleeper pid %d\n", cmd.Process.Pid)
	case "steal-job":
		// Take every job handle the parent (the Engine: the test
		// process) holds, and try to lift the limits through it.
		pp, err := windows.OpenProcess(windows.PROCESS_DUP_HANDLE, false, uint32(os.Getppid()))
		if err != nil {
			fmt.Printf("open parent: %v\n", err)
			return true
		}
		self := windows.CurrentProcess()
		found, changed := 0, 0
		for v := 4; v < 1<<16; v += 4 {
			var h windows.Handle
			if windows.DuplicateHandle(pp, windows.Handle(v), self, &h, 0, false, windows.DUPLICATE_SAME_ACCESS) != nil {
				continue
			}
			var acct [64]byte
			if windows.QueryInformationJobObject(h, windows.JobObjectBasicAccountingInformation,
				uintptr(unsafe.Pointer(&acct[0])), uint32(len(acct)), nil) != nil {
				windows.CloseHandle(h)
				continue
			}
			found++
			var info windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION
			info.BasicLimitInformation.LimitFlags = windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE | windows.JOB_OBJECT_LIMIT_SILENT_BREAKAWAY_OK
			if _, err := windows.SetInformationJobObject(h, windows.JobObjectExtendedLimitInformation,
				uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err == nil {
				changed++
			}
			var r windows.Handle
			if windows.DuplicateHandle(self, h, self, &r, winjob.JOB_OBJECT_SET_ATTRIBUTES, false, 0) == nil {
				changed++
				windows.CloseHandle(r)
			}
			windows.CloseHandle(h)
		}
		fmt.Printf("stolen jobs %d changed %d\n", found, changed)
	case "console":
		var list [64]uint32
		r, _, err := windows.NewLazySystemDLL("kernel32.dll").NewProc("GetConsoleProcessList").
			Call(uintptr(unsafe.Pointer(&list[0])), uintptr(len(list)))
		fmt.Printf("console processes %v (%v)\n", list[:min(int(r), len(list))], err)
	case "orphan-start", "orphan-canary":
		canaryHelper(mode)
	default:
		return false
	}
	return true
}

// field returns the integer after prefix in out, or -1.
func field(out, prefix string) int {
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), prefix); ok {
			n, err := strconv.Atoi(strings.Fields(rest)[0])
			if err == nil {
				return n
			}
		}
	}
	return -1
}

// killPID ends a process this test started (through a helper) by its ID.
func killPID(t *testing.T, pid int) {
	h, err := windows.OpenProcess(windows.PROCESS_TERMINATE|windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		return
	}
	defer windows.CloseHandle(h)
	windows.TerminateProcess(h, 1)
	windows.WaitForSingleObject(h, 10000)
}

// TestParentProcessRouteIsReported: a wrapped process whose spawning is
// denied starts a process outside its job by naming its parent (a process
// of the same user) as the new process's parent. The job cannot stop that,
// so PlanFor must not report process_spawn as enforced, and the canary's
// process_spawn_parent probe must fail.
func TestParentProcessRouteIsReported(t *testing.T) {
	sb, ps := postStarter(t)
	var out strings.Builder
	cmd := helperCmd("parent-escape")
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := sb.WrapCommand(cmd, sandbox.Config{}); err != nil {
		t.Fatal(err)
	}
	start(t, cmd)
	if err := ps.PostStart(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if err := waitWithin(t, cmd, time.Minute); err != nil {
		t.Fatalf("child: %v\n%s", err, out.String())
	}
	pid := field(out.String(), "escaped pid ")
	if pid < 0 {
		t.Fatalf("the route did not work here, so this test proves nothing:\n%s", out.String())
	}
	t.Cleanup(func() { killPID(t, pid) })
	if err := ps.Close(); err != nil {
		t.Fatal(err)
	}
	h, err := windows.OpenProcess(windows.SYNCHRONIZE, false, uint32(pid))
	if err != nil {
		t.Fatalf("the escaped process %d is gone after Close (%v): the route did not escape", pid, err)
	}
	ev, _ := windows.WaitForSingleObject(h, 500)
	windows.CloseHandle(h)
	if ev != uint32(windows.WAIT_TIMEOUT) {
		t.Fatalf("the escaped process %d ended with the job: the route did not escape", pid)
	}
	t.Logf("a process in a job limited to 1 started process %d outside it (%s), which outlived Close",
		pid, strings.TrimSpace(out.String()))

	plan, err := sandbox.PlanFor(sandbox.Config{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range plan.Features {
		if f.Feature == sandbox.FeatureSpawn && (f.Enforced || !strings.Contains(f.Detail, "PROC_THREAD_ATTRIBUTE_PARENT_PROCESS")) {
			t.Errorf("process_spawn reported as %+v while the parent-process route works", f)
		}
	}
	if !strings.Contains(out.String(), "canary process_spawn_parent "+sandbox.ProbeFailed+":") {
		t.Errorf("the wrapped process's canary did not report process_spawn_parent failed while the route works:\n%s", out.String())
	}
}

// TestStolenJobHandleCannotLiftLimits: a wrapped process duplicates every
// job handle its Engine holds (OpenProcess with PROCESS_DUP_HANDLE, which a
// job does not stop) and tries to allow breakaway through each, directly and
// by raising the handle. The Engine keeps only a reduced handle and the
// job's security descriptor refuses more, so nothing changes.
func TestStolenJobHandleCannotLiftLimits(t *testing.T) {
	sb, ps := postStarter(t)
	var out strings.Builder
	cmd := helperCmd("steal-job")
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := sb.WrapCommand(cmd, sandbox.Config{}); err != nil {
		t.Fatal(err)
	}
	start(t, cmd)
	if err := ps.PostStart(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if err := waitWithin(t, cmd, 2*time.Minute); err != nil {
		t.Fatalf("child: %v\n%s", err, out.String())
	}
	found, changed := field(out.String(), "stolen jobs "), -1
	if i := strings.Index(out.String(), " changed "); i >= 0 {
		changed = field(out.String()[i:], " changed ")
	}
	if found < 1 {
		t.Fatalf("the child found no job handle in the Engine, so this test proves nothing:\n%s", out.String())
	}
	if changed != 0 {
		t.Fatalf("a stolen job handle lifted a limit or was raised (%d times):\n%s", changed, out.String())
	}
	t.Logf("the child took %d job handles from the Engine and could change none", found)
}

// TestRunReturnsWhenPipeHeldOutside: the program hands a copy of its
// standard output to a process outside the job (here the test process);
// Run must still return, after its drain time, instead of reading for ever.
func TestRunReturnsWhenPipeHeldOutside(t *testing.T) {
	env := append(os.Environ(), envWinHelper+"=dup-stdout")
	type result struct {
		res sandbox.RunResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := sandbox.Run(context.Background(), sandbox.Config{}, os.Args[0],
			[]string{"-test.run=^TestWindowsHelperChild$"}, sandbox.RunOptions{Env: env, Timeout: time.Minute})
		done <- result{res, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			t.Fatal(r.err)
		}
		out := string(r.res.Stdout)
		if h := field(out, "duplicated "); h > 0 {
			windows.CloseHandle(windows.Handle(h))
		}
		if !strings.Contains(out, "duplicated") || strings.Contains(out, "duplicated 0 ") {
			t.Fatalf("the program could not hand its pipe out, so this test proves nothing: %q %q", out, r.res.Stderr)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Run still reading 30s after the program exited: a write end held outside the job blocks it")
	}
}

// TestRunWaitsForTheJob: Run returns only when no process of the job is
// left, not merely after asking for their termination. Under Wine the test
// passes without the wait too (Wine's TerminateJobObject has ended the
// processes by the time it returns): only Windows, where termination
// completes asynchronously, can catch a Run that does not wait.
func TestRunWaitsForTheJob(t *testing.T) {
	env := append(os.Environ(), envWinHelper+"=spawn-sleeper")
	res, err := sandbox.Run(context.Background(), sandbox.Config{AllowProcessSpawn: true}, os.Args[0],
		[]string{"-test.run=^TestWindowsHelperChild$"}, sandbox.RunOptions{Env: env, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	pid := field(string(res.Stdout), "sleeper pid ")
	if pid < 0 {
		t.Fatalf("no sleeper started: %q %q", res.Stdout, res.Stderr)
	}
	h, err := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		return // gone (its ID could be reused, but not by a running sleeper of ours)
	}
	defer windows.CloseHandle(h)
	if ev, _ := windows.WaitForSingleObject(h, 0); ev != windows.WAIT_OBJECT_0 {
		windows.TerminateProcess(h, 1)
		t.Fatalf("process %d of the job was still running when Run returned", pid)
	}
}

// TestRunDetachesConsole: a program Run starts is not attached to the
// caller's console, so it cannot type into it (WriteConsoleInput). The
// child test process gets a console of its own first (under Wine a test
// process has none), and an unconfined child shows the check can fail.
func TestRunDetachesConsole(t *testing.T) {
	childtest.Run(t, func(t *testing.T) {
		if r, _, err := windows.NewLazySystemDLL("kernel32.dll").NewProc("AllocConsole").Call(); r == 0 {
			t.Logf("AllocConsole: %v (a console may exist already)", err)
		}
		me := fmt.Sprint(os.Getpid())
		shares := func(out string) bool {
			i := strings.Index(out, "console processes [")
			if i < 0 {
				t.Fatalf("no console line: %q", out)
			}
			line := out[i:]
			line = line[:strings.IndexByte(line, ']')]
			return strings.Contains(" "+strings.TrimPrefix(line, "console processes [")+" ", " "+me+" ")
		}
		plain := helperCmd("console")
		out, err := plain.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		if !shares(string(out)) {
			t.Skipf("an unconfined child does not share this process's console here (%s), as under Wine without a terminal: "+
				"only Windows proves that Run's program is not attached to the caller's console", strings.TrimSpace(string(out)))
		}
		env := append(os.Environ(), envWinHelper+"=console")
		for _, cfg := range []sandbox.Config{{}, {AllowProcessSpawn: true}} {
			res, err := sandbox.Run(context.Background(), cfg, os.Args[0],
				[]string{"-test.run=^TestWindowsHelperChild$"}, sandbox.RunOptions{Env: env, Timeout: time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			if shares(string(res.Stdout)) {
				t.Errorf("Run(AllowProcessSpawn %v): the program shares the caller's console: %s", cfg.AllowProcessSpawn, res.Stdout)
			}
		}
	})
}

// TestNestedJob: a process that is in a job already (here by ApplySelf)
// can still wrap a command, and PlanFor reports the UI restrictions it
// then cannot have.
func TestNestedJob(t *testing.T) {
	childtest.Run(t, func(t *testing.T) {
		if err := sandbox.New().ApplySelf(sandbox.Config{AllowProcessSpawn: true}); err != nil {
			t.Fatal(err)
		}
		plan, err := sandbox.PlanFor(sandbox.Config{})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, f := range plan.Features {
			if f.Feature == "ui_restrictions" {
				found = true
				if f.Enforced || !strings.Contains(f.Detail, "in a job already") {
					t.Errorf("ui_restrictions in a job: %+v, want not enforced", f)
				}
			}
		}
		if !found {
			t.Error("plan lacks ui_restrictions")
		}
		sb, ps := postStarter(t)
		var out strings.Builder
		cmd := helperCmd("hello")
		cmd.Stdout = &out
		if err := sb.WrapCommand(cmd, sandbox.Config{}); err != nil {
			t.Fatal(err)
		}
		start(t, cmd)
		if err := ps.PostStart(cmd.Process.Pid); err != nil {
			t.Fatalf("PostStart inside a job: %v", err)
		}
		if err := waitWithin(t, cmd, time.Minute); err != nil || !strings.Contains(out.String(), "hello") {
			t.Fatalf("nested child: %v %q", err, out.String())
		}
		if winjob.UnderWine() {
			t.Log("Wine nests a job with UI restrictions too: only Windows proves that without NoUIRestrictions PostStart would fail here")
		}
	})
}
