//go:build windows

package sandbox_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/windows"

	"github.com/openparallax/sandbox"
	"github.com/openparallax/sandbox/internal/childtest"
	"github.com/openparallax/sandbox/internal/winjob"
)

// The helper child: the test binary re-executed with envWinHelper naming
// what it should do (the pattern of x/sys's GO_WANT_HELPER_PROCESS).
const (
	envWinHelper = "SANDBOX_WINDOWS_TEST_HELPER"
	envWinMarker = "SANDBOX_WINDOWS_TEST_MARKER"
)

func TestWindowsHelperChild(t *testing.T) {
	switch os.Getenv(envWinHelper) {
	case "":
		return // not a helper: nothing to test
	case "hello":
		fmt.Println("hello from wrapped child")
	case "touch":
		if err := os.WriteFile(os.Getenv(envWinMarker), []byte("ran"), 0o600); err != nil {
			t.Fatal(err)
		}
		time.Sleep(2 * time.Minute)
	case "sleep":
		time.Sleep(2 * time.Minute)
	case "spawn":
		fmt.Println(trySpawn(0))
		fmt.Println(trySpawn(windows.CREATE_BREAKAWAY_FROM_JOB))
	default:
		if !extraHelper(t, os.Getenv(envWinHelper)) {
			t.Fatalf("unknown helper %q", os.Getenv(envWinHelper))
		}
	}
}

// helperCmd returns a command running the helper child in mode.
func helperCmd(mode string, env ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], "-test.run=^TestWindowsHelperChild$")
	cmd.Env = append(append(os.Environ(), envWinHelper+"="+mode), env...)
	return cmd
}

// trySpawn starts a "hello" helper with the creation flags and reports the
// outcome as one line (childtest.TrySpawn).
func trySpawn(flags uint32) string {
	return childtest.TrySpawn(helperCmd("hello"), flags, "hello from wrapped child")
}

func errnoText(e syscall.Errno) string { return fmt.Sprintf(": errno %d:", uint32(e)) }

// postStarter returns New() as the PostStarter an importing package sees.
func postStarter(t *testing.T) (sandbox.Sandbox, sandbox.PostStarter) {
	t.Helper()
	sb := sandbox.New()
	ps, ok := sb.(sandbox.PostStarter)
	if !ok {
		t.Fatalf("New() = %T, not a sandbox.PostStarter", sb)
	}
	t.Cleanup(func() { ps.Close() })
	return sb, ps
}

// start starts a wrapped command and kills it when the test ends.
func start(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
}

// inAnyJob reports whether the started command's process is in a job.
func inAnyJob(t *testing.T, cmd *exec.Cmd) bool {
	t.Helper()
	var in bool
	var err error
	if herr := cmd.Process.WithHandle(func(h uintptr) { in, err = winjob.InJob(windows.Handle(h), 0) }); herr != nil {
		t.Fatal(herr)
	}
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// selfInJob reports whether the test process is in a job already (as on CI
// runners that start every step in one).
func selfInJob(t *testing.T) bool {
	t.Helper()
	in, err := winjob.InJob(windows.CurrentProcess(), 0)
	if err != nil {
		t.Fatal(err)
	}
	return in
}

// waitWithin waits for cmd and fails the test if that takes longer than d.
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

func TestWindowsProbe(t *testing.T) {
	st := sandbox.Probe()
	if !st.Active || st.Mode != sandbox.ModeJobObject || st.Filesystem || st.Network {
		t.Fatalf("Probe() = %+v, want active job-object without filesystem or network", st)
	}
	if !strings.Contains(st.Reason, "do not isolate files or network") {
		t.Errorf("Probe().Reason = %q, want it to say files and network are not isolated", st.Reason)
	}
	sb := sandbox.New()
	if !sb.Available() || sb.Mode() != sandbox.ModeJobObject {
		t.Fatalf("New(): Available %v, Mode %q", sb.Available(), sb.Mode())
	}
}

func TestWindowsPlan(t *testing.T) {
	plan, err := sandbox.PlanFor(sandbox.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if !plan.Available || plan.Mechanism != sandbox.ModeJobObject || plan.Platform != "windows" {
		t.Fatalf("plan = %+v", plan)
	}
	got := map[string]sandbox.Enforcement{}
	for _, f := range plan.Features {
		got[f.Feature] = f
	}
	for _, name := range []string{sandbox.FeatureFilesystem, sandbox.FeatureExec, sandbox.FeatureTCPConnect,
		sandbox.FeatureTCPBind, sandbox.FeatureUDP, sandbox.FeatureUnixSockets} {
		f, ok := got[name]
		if !ok || f.Enforced || !strings.Contains(f.Detail, "Job Objects do not restrict") {
			t.Errorf("%s: %+v (present %v), want not enforced because Job Objects do not restrict it", name, f, ok)
		}
	}
	// Spawn denial holds inside the job only: the same-user routes around
	// it are named (TestParentProcessRouteIsReported shows one works).
	if f := got[sandbox.FeatureSpawn]; f.Enforced || !strings.Contains(f.Detail, "inside the job only") || f.Hint == "" {
		t.Errorf("process_spawn: %+v, want not enforced: inside the job only, with a hint", f)
	} else {
		for _, route := range []string{"active-process limit of 1", "PROC_THREAD_ATTRIBUTE_PARENT_PROCESS", "Win32_Process.Create",
			"Task Scheduler", "BITS", "COM", "WriteConsoleInput"} {
			if !strings.Contains(f.Detail, route) {
				t.Errorf("process_spawn detail does not mention %q: %s", route, f.Detail)
			}
		}
	}
	nested := selfInJob(t)
	if f, ok := got["ui_restrictions"]; !ok || f.Enforced == nested {
		t.Errorf("ui_restrictions: %+v (present %v); this process in a job: %v", f, ok, nested)
	}
	elevated := windows.GetCurrentProcessToken().IsElevated()
	if f, ok := got["unelevated"]; !ok || f.Enforced == elevated || (elevated && !strings.Contains(f.Detail, "elevated")) {
		t.Errorf("unelevated: %+v (present %v); this process elevated: %v", f, ok, elevated)
	}
	t.Logf("this process: in a job %v, elevated %v (each plan branch is checked against the real state)", nested, elevated)
	if f := got[sandbox.FeatureScopeSignal]; f.Enforced {
		t.Errorf("scope_signal: %+v, want not enforced", f)
	}

	plan, err = sandbox.PlanFor(sandbox.Config{AllowProcessSpawn: true, AllowUDP: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range plan.Features {
		switch f.Feature {
		case sandbox.FeatureSpawn, sandbox.FeatureUDP:
			if !f.Enforced || !strings.HasPrefix(f.Detail, "granted") {
				t.Errorf("%s with the grant: %+v", f.Feature, f)
			}
		}
	}
}

func TestWindowsStrictFails(t *testing.T) {
	sb, _ := postStarter(t)
	cmd := helperCmd("hello")
	err := sb.WrapCommand(cmd, sandbox.Config{Strict: true})
	if !errors.Is(err, sandbox.ErrNotEnforced) || !strings.Contains(err.Error(), "filesystem") ||
		!strings.Contains(err.Error(), "process_spawn") {
		t.Fatalf("WrapCommand(Strict) = %v, want ErrNotEnforced naming filesystem and process_spawn", err)
	}
	if windows.GetCurrentProcessToken().IsElevated() && !strings.Contains(err.Error(), "unelevated") {
		t.Fatalf("WrapCommand(Strict) by an elevated process = %v, want it to name unelevated", err)
	}
	if cmd.SysProcAttr != nil {
		t.Fatalf("refused WrapCommand changed cmd.SysProcAttr to %+v", cmd.SysProcAttr)
	}
}

func TestWrapCommandBadConfig(t *testing.T) {
	sb, ps := postStarter(t)
	cmd := helperCmd("hello")
	err := sb.WrapCommand(cmd, sandbox.Config{AllowedReadPaths: []string{"relative\\path"}})
	var ce *sandbox.ConfigError
	if !errors.Is(err, sandbox.ErrInvalidConfig) || !errors.As(err, &ce) || ce.Field != "allowed_read_paths" {
		t.Fatalf("WrapCommand(bad config) = %v, want a ConfigError for allowed_read_paths", err)
	}
	if cmd.SysProcAttr != nil {
		t.Fatalf("refused WrapCommand changed cmd.SysProcAttr to %+v", cmd.SysProcAttr)
	}
	if err := sb.WrapCommand(nil, sandbox.Config{}); err == nil {
		t.Fatal("WrapCommand(nil) succeeded")
	}
	// Nothing was remembered: the command runs unwrapped and PostStart
	// does not know it.
	start(t, cmd)
	if err := ps.PostStart(cmd.Process.Pid); err == nil {
		t.Fatal("PostStart of a command whose WrapCommand failed succeeded")
	}
	if err := waitWithin(t, cmd, time.Minute); err != nil {
		t.Fatal(err)
	}
}

// TestWrapCommandConsoleFlags: with spawning denied, a console of the
// child's own (whose console host would be a second process in a job that
// holds one) is refused, saying why, and cmd is left untouched; so is
// DETACHED_PROCESS with CREATE_NEW_CONSOLE, which Windows refuses. The
// caller's DETACHED_PROCESS is kept and the child runs.
func TestWrapCommandConsoleFlags(t *testing.T) {
	sb, ps := postStarter(t)
	for _, c := range []struct {
		flags uint32
		cfg   sandbox.Config
		want  string
	}{
		{windows.CREATE_NEW_CONSOLE, sandbox.Config{}, "conhost.exe"},
		{windows.CREATE_NO_WINDOW, sandbox.Config{}, "conhost.exe"},
		{windows.DETACHED_PROCESS | windows.CREATE_NEW_CONSOLE, sandbox.Config{AllowProcessSpawn: true}, "refuses together"},
	} {
		cmd := helperCmd("hello")
		attr := &syscall.SysProcAttr{CreationFlags: c.flags}
		cmd.SysProcAttr = attr
		err := sb.WrapCommand(cmd, c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("WrapCommand(flags %#x, spawn %v) = %v, want an error saying %q", c.flags, c.cfg.AllowProcessSpawn, err, c.want)
		}
		if cmd.SysProcAttr != attr || attr.CreationFlags != c.flags {
			t.Errorf("refused WrapCommand changed cmd.SysProcAttr: %+v", cmd.SysProcAttr)
		}
	}
	var out strings.Builder
	cmd := helperCmd("hello")
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.DETACHED_PROCESS | windows.CREATE_NO_WINDOW}
	if err := sb.WrapCommand(cmd, sandbox.Config{}); err != nil {
		t.Fatal(err)
	}
	if want := uint32(windows.DETACHED_PROCESS | windows.CREATE_NO_WINDOW | windows.CREATE_SUSPENDED); cmd.SysProcAttr.CreationFlags != want {
		t.Errorf("creation flags %#x, want %#x", cmd.SysProcAttr.CreationFlags, want)
	}
	start(t, cmd)
	if err := ps.PostStart(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if err := waitWithin(t, cmd, time.Minute); err != nil || !strings.Contains(out.String(), "hello from wrapped child") {
		t.Fatalf("child: %v\n%s", err, out.String())
	}
}

func TestWrapCommandRunsChildInJob(t *testing.T) {
	sb, ps := postStarter(t)
	var out bytes.Buffer
	cmd := helperCmd("hello")
	cmd.Stdout, cmd.Stderr = &out, &out
	shared := &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP}
	cmd.SysProcAttr = shared
	if err := sb.WrapCommand(cmd, sandbox.Config{}); err != nil {
		t.Fatal(err)
	}
	if want := uint32(windows.CREATE_NEW_PROCESS_GROUP | windows.CREATE_SUSPENDED | windows.DETACHED_PROCESS); cmd.SysProcAttr.CreationFlags != want {
		t.Fatalf("CreationFlags = %#x, want %#x (the caller's flag kept, CREATE_SUSPENDED and DETACHED_PROCESS added)", cmd.SysProcAttr.CreationFlags, want)
	}
	if shared.CreationFlags != windows.CREATE_NEW_PROCESS_GROUP {
		t.Fatalf("WrapCommand changed the caller's SysProcAttr: flags %#x", shared.CreationFlags)
	}
	if err := sb.WrapCommand(cmd, sandbox.Config{}); err == nil {
		t.Fatal("wrapping a command twice succeeded")
	}
	start(t, cmd)
	outer := selfInJob(t)
	if !outer && inAnyJob(t, cmd) {
		t.Fatal("child is in a job before PostStart")
	}
	if err := ps.PostStart(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if !inAnyJob(t, cmd) {
		t.Fatal("IsProcessInJob(child) = false after PostStart")
	}
	if outer {
		t.Log("the test process is in a job already: membership of the child is not proof by itself (TestCloseKillsRunningChild is)")
	}
	if err := ps.PostStart(cmd.Process.Pid); err == nil {
		t.Fatal("second PostStart succeeded")
	}
	if err := waitWithin(t, cmd, time.Minute); err != nil {
		t.Fatalf("child: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "hello from wrapped child") {
		t.Fatalf("child output = %q", out.String())
	}
	if err := sb.WrapCommand(cmd, sandbox.Config{}); err == nil {
		t.Fatal("wrapping a started command succeeded")
	}
}

func TestWrapCommandWithoutPostStartStaysSuspended(t *testing.T) {
	sb, ps := postStarter(t)
	marker := filepath.Join(t.TempDir(), "ran")
	cmd := helperCmd("touch", envWinMarker+"="+marker)
	if err := sb.WrapCommand(cmd, sandbox.Config{}); err != nil {
		t.Fatal(err)
	}
	start(t, cmd)
	time.Sleep(time.Second) // a resumed child writes the marker within milliseconds
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("child ran without PostStart (marker: %v)", err)
	}
	if err := ps.Close(); err != nil {
		t.Fatal(err)
	}
	err := waitWithin(t, cmd, 10*time.Second)
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) {
		t.Fatalf("child after Close: %v, want it terminated", err)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("child ran (marker: %v)", err)
	}
	if err := ps.PostStart(cmd.Process.Pid); err == nil {
		t.Fatal("PostStart after Close succeeded")
	}
}

func TestCloseKillsRunningChild(t *testing.T) {
	sb, ps := postStarter(t)
	cmd := helperCmd("sleep")
	if err := sb.WrapCommand(cmd, sandbox.Config{}); err != nil {
		t.Fatal(err)
	}
	start(t, cmd)
	if err := ps.PostStart(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	// Close only closes the job handle: the child, sleeping for minutes,
	// ends only because it is in the job (KILL_ON_JOB_CLOSE).
	if err := ps.Close(); err != nil {
		t.Fatal(err)
	}
	waitWithin(t, cmd, 10*time.Second)
}

func TestPostStartRefusesUnsuspendedChild(t *testing.T) {
	sb, ps := postStarter(t)
	cmd := helperCmd("sleep")
	if err := sb.WrapCommand(cmd, sandbox.Config{}); err != nil {
		t.Fatal(err)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{} // the caller undoes CREATE_SUSPENDED
	start(t, cmd)
	err := ps.PostStart(cmd.Process.Pid)
	if err == nil || !strings.Contains(err.Error(), "not started suspended") {
		t.Fatalf("PostStart = %v, want a not-started-suspended error", err)
	}
	if err := waitWithin(t, cmd, 10*time.Second); err == nil {
		t.Fatal("child was not terminated")
	}
}

func TestPostStartUnknownPID(t *testing.T) {
	_, ps := postStarter(t)
	if err := ps.PostStart(os.Getpid()); err == nil {
		t.Fatal("PostStart of a process this sandbox did not start succeeded")
	}
}

func TestPostStartSeveralCommands(t *testing.T) {
	// One value wraps several commands with different Configs; PostStart
	// finds each by its PID, in any order.
	sb, ps := postStarter(t)
	var outs [3]bytes.Buffer
	var cmds [3]*exec.Cmd
	for i := range cmds {
		cmds[i] = helperCmd("hello")
		cmds[i].Stdout = &outs[i]
		if err := sb.WrapCommand(cmds[i], sandbox.Config{AllowProcessSpawn: i == 1}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range cmds {
		start(t, c)
	}
	for i := len(cmds) - 1; i >= 0; i-- {
		if err := ps.PostStart(cmds[i].Process.Pid); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range cmds {
		if err := waitWithin(t, c, time.Minute); err != nil || !strings.Contains(outs[i].String(), "hello from wrapped child") {
			t.Fatalf("command %d: %v, output %q", i, err, outs[i].String())
		}
	}
}

// spawnFromWrapped runs the "spawn" helper wrapped with cfg and returns its
// result lines for a plain spawn and a CREATE_BREAKAWAY_FROM_JOB spawn.
func spawnFromWrapped(t *testing.T, cfg sandbox.Config) (plain, breakaway string) {
	t.Helper()
	sb, ps := postStarter(t)
	var out bytes.Buffer
	cmd := helperCmd("spawn")
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := sb.WrapCommand(cmd, cfg); err != nil {
		t.Fatal(err)
	}
	start(t, cmd)
	if err := ps.PostStart(cmd.Process.Pid); err != nil {
		t.Fatal(err)
	}
	if err := waitWithin(t, cmd, time.Minute); err != nil {
		t.Fatalf("child: %v\n%s", err, out.String())
	}
	return spawnLines(t, out.String())
}

func spawnLines(t *testing.T, out string) (plain, breakaway string) {
	t.Helper()
	for l := range strings.Lines(out) {
		switch {
		case strings.HasPrefix(l, "spawn(0x0)"):
			plain = strings.TrimSpace(l)
		case strings.HasPrefix(l, fmt.Sprintf("spawn(%#x)", windows.CREATE_BREAKAWAY_FROM_JOB)):
			breakaway = strings.TrimSpace(l)
		}
	}
	if plain == "" || breakaway == "" {
		t.Fatalf("output lacks spawn results:\n%s", out)
	}
	return plain, breakaway
}

func TestWrapCommandBreakawayDenied(t *testing.T) {
	plain, breakaway := spawnFromWrapped(t, sandbox.Config{AllowProcessSpawn: true})
	if !strings.HasSuffix(plain, ": ok") {
		t.Errorf("spawn with AllowProcessSpawn: %s", plain)
	}
	if !strings.Contains(breakaway, errnoText(windows.ERROR_ACCESS_DENIED)) {
		t.Errorf("CREATE_BREAKAWAY_FROM_JOB not denied with ERROR_ACCESS_DENIED: %s", breakaway)
	}
}

func TestWrapCommandActiveProcessLimit(t *testing.T) {
	plain, breakaway := spawnFromWrapped(t, sandbox.Config{})
	if strings.HasSuffix(breakaway, ": ok") {
		t.Errorf("CREATE_BREAKAWAY_FROM_JOB spawn succeeded: %s", breakaway)
	}
	if winjob.UnderWine() && strings.HasSuffix(plain, ": ok") {
		t.Skipf("Wine does not enforce the job's active-process limit: the wrapped child started a process (%s)", plain)
	}
	if !strings.Contains(plain, errnoText(windows.ERROR_NOT_ENOUGH_QUOTA)) {
		t.Errorf("spawn without AllowProcessSpawn not denied with ERROR_NOT_ENOUGH_QUOTA: %s", plain)
	}
}

func TestApplySelfDeniesSpawn(t *testing.T) {
	childtest.Run(t, func(t *testing.T) {
		before := selfInJob(t)
		if err := sandbox.New().ApplySelf(sandbox.Config{}); err != nil {
			t.Fatal(err)
		}
		if !selfInJob(t) {
			t.Fatal("IsProcessInJob(self) = false after ApplySelf")
		}
		if before {
			t.Log("the test process was in a job before ApplySelf")
		}
		plain, breakaway := trySpawn(0), trySpawn(windows.CREATE_BREAKAWAY_FROM_JOB)
		if strings.HasSuffix(breakaway, ": ok") {
			t.Errorf("CREATE_BREAKAWAY_FROM_JOB spawn succeeded after ApplySelf: %s", breakaway)
		}
		if winjob.UnderWine() && strings.HasSuffix(plain, ": ok") {
			t.Skipf("Wine does not enforce the job's active-process limit: the process started a child after ApplySelf (%s)", plain)
		}
		if !strings.Contains(plain, errnoText(windows.ERROR_NOT_ENOUGH_QUOTA)) {
			t.Errorf("spawn after ApplySelf not denied with ERROR_NOT_ENOUGH_QUOTA: %s", plain)
		}
	})
}

func TestApplySelfAllowSpawnDeniesBreakaway(t *testing.T) {
	childtest.Run(t, func(t *testing.T) {
		if err := sandbox.New().ApplySelf(sandbox.Config{AllowProcessSpawn: true}); err != nil {
			t.Fatal(err)
		}
		if plain := trySpawn(0); !strings.HasSuffix(plain, ": ok") {
			t.Errorf("spawn with AllowProcessSpawn: %s", plain)
		}
		if b := trySpawn(windows.CREATE_BREAKAWAY_FROM_JOB); !strings.Contains(b, errnoText(windows.ERROR_ACCESS_DENIED)) {
			t.Errorf("CREATE_BREAKAWAY_FROM_JOB not denied with ERROR_ACCESS_DENIED: %s", b)
		}
	})
}

func TestApplySelfRefusalAppliesNothing(t *testing.T) {
	childtest.Run(t, func(t *testing.T) {
		before := selfInJob(t)
		sb := sandbox.New()
		if err := sb.ApplySelf(sandbox.Config{Strict: true}); !errors.Is(err, sandbox.ErrNotEnforced) {
			t.Fatalf("ApplySelf(Strict) = %v, want ErrNotEnforced", err)
		}
		if err := sb.ApplySelf(sandbox.Config{AllowedWritePaths: []string{"C:\\does\\not\\exist"}}); !errors.Is(err, sandbox.ErrInvalidConfig) {
			t.Fatalf("ApplySelf(bad config) = %v, want ErrInvalidConfig", err)
		}
		if !before && selfInJob(t) {
			t.Fatal("a refused ApplySelf put the process in a job")
		}
		if plain := trySpawn(0); !strings.HasSuffix(plain, ": ok") {
			t.Fatalf("spawn after refused ApplySelf: %s", plain)
		}
	})
}
