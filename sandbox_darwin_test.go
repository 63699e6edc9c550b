//go:build darwin

package sandbox_test

// Enforcement tests on a Mac. Each runs a real program under
// /usr/bin/sandbox-exec through WrapCommand and checks the exact outcome:
// what the Config grants works, what it does not grant fails with EPERM
// ("Operation not permitted", Seatbelt's answer), and the same operation
// succeeds unwrapped, so that the denial is the sandbox's and not ordinary
// permissions'. Programs that must do something specific inside the sandbox
// are this test binary itself, re-executed as a helper
// (TestDarwinHelperProcess, selected with -test.run and told what to do in
// its environment, as golang.org/x/sys's GO_WANT_HELPER_PROCESS children).
// The test process itself is never sandboxed: ApplySelf does nothing on
// macOS but fail.

import (
	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/openparallax/sandbox"
)

const (
	darwinHelperEnv = "SANDBOX_DARWIN_HELPER"     // what the helper does
	darwinConfigEnv = "SANDBOX_DARWIN_HELPER_CFG" // the Config, as JSON
	darwinArgEnv    = "SANDBOX_DARWIN_HELPER_ARG" // mode-specific argument
)

func requireSandboxExec(t *testing.T) {
	t.Helper()
	if st := sandbox.Probe(); !st.Active {
		t.Skipf("sandbox-exec unavailable: %s", st.Reason)
	}
}

func wrap(t *testing.T, cmd *exec.Cmd, cfg sandbox.Config) {
	t.Helper()
	if err := sandbox.New().WrapCommand(cmd, cfg); err != nil {
		t.Fatalf("WrapCommand: %v", err)
	}
	if cmd.Path != "/usr/bin/sandbox-exec" {
		t.Fatalf("wrapped command runs %s, want /usr/bin/sandbox-exec", cmd.Path)
	}
}

// runHelper runs this test binary as a helper under cfg, in dir, and returns
// its combined output.
func runHelper(t *testing.T, cfg sandbox.Config, dir, mode, arg string) (string, error) {
	t.Helper()
	js, err := json.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestDarwinHelperProcess$", "-test.count=1", "-test.v")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), darwinHelperEnv+"="+mode, darwinConfigEnv+"="+string(js), darwinArgEnv+"="+arg)
	wrap(t, cmd, cfg)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestDarwinHelperProcess is not a test on its own: it does what a sandboxed
// helper was asked to, and fails (exit status 1) when that did not turn out
// as expected.
func TestDarwinHelperProcess(t *testing.T) {
	mode := os.Getenv(darwinHelperEnv)
	if mode == "" {
		return // not a helper: nothing to do
	}
	var cfg sandbox.Config
	if err := json.Unmarshal([]byte(os.Getenv(darwinConfigEnv)), &cfg); err != nil {
		t.Fatal(err)
	}
	arg := os.Getenv(darwinArgEnv)
	switch mode {
	case "canary":
		r := sandbox.VerifyCanaryFor(cfg)
		js, _ := json.MarshalIndent(r, "", "  ")
		t.Logf("canary result:\n%s", js)
		if err := sandbox.WriteCanaryResult(arg, r); err != nil {
			t.Fatalf("WriteCanaryResult: %v", err)
		}
	case "spawn":
		err := exec.Command("/usr/bin/true").Run()
		if !errors.Is(err, syscall.EPERM) {
			t.Fatalf("spawning /usr/bin/true: %v, want EPERM", err)
		}
	case "connect":
		// arg: "allowedPort,deniedPort", both with a listener in the parent.
		allowed, denied, _ := strings.Cut(arg, ",")
		c, err := net.Dial("tcp", "127.0.0.1:"+allowed)
		if err != nil {
			t.Fatalf("granted port %s: %v", allowed, err)
		}
		c.Close()
		c, err = net.Dial("tcp", "127.0.0.1:"+denied)
		if c != nil {
			c.Close()
		}
		if !errors.Is(err, syscall.EPERM) {
			t.Fatalf("port %s, not granted, with a listener: %v, want EPERM", denied, err)
		}
	default:
		if !darwinProgramHelper(t, mode, arg) && !darwinProtectHelper(t, mode, arg) {
			t.Fatalf("unknown helper mode %q", mode)
		}
	}
}

func TestDarwinProbe(t *testing.T) {
	st := sandbox.Probe()
	fi, err := os.Stat("/usr/bin/sandbox-exec")
	present := err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
	// Present but not active only when the trial run with a trivial profile
	// failed (this test inside another Seatbelt sandbox), and then it says so.
	if st.Active && !present || st.Active != sandbox.New().Available() {
		t.Errorf("Probe().Active = %v, Available() = %v; sandbox-exec present: %v", st.Active, sandbox.New().Available(), present)
	}
	if present && !st.Active && !strings.Contains(st.Reason, "trial run") && !strings.Contains(st.Reason, "Seatbelt sandbox") {
		t.Errorf("sandbox-exec present but inactive, without the trial run's reason: %+v", st)
	}
	if st.Mode != sandbox.ModeSandboxExec || sandbox.New().Mode() != sandbox.ModeSandboxExec {
		t.Errorf("mode %q / %q", st.Mode, sandbox.New().Mode())
	}
	if st.Active && (!st.Filesystem || !st.Network || !strings.Contains(st.Reason, "ApplySelf") || !strings.Contains(st.Reason, "localhost")) {
		t.Errorf("active status %+v", st)
	}
	if !st.Active && (st.Filesystem || st.Network || st.Reason == "") {
		t.Errorf("inactive status %+v", st)
	}
}

func TestDarwinApplySelfFailsClosed(t *testing.T) {
	err := sandbox.New().ApplySelf(sandbox.Config{})
	if !errors.Is(err, sandbox.ErrUnavailable) || !strings.Contains(err.Error(), "WrapCommand") {
		t.Fatalf("ApplySelf: %v, want ErrUnavailable pointing at WrapCommand", err)
	}
	// Nothing was applied: this process still reads what it read before.
	if _, err := os.ReadFile("/private/etc/hosts"); err != nil {
		t.Fatalf("after ApplySelf: %v", err)
	}
}

func TestDarwinWrapCommandFilesystem(t *testing.T) {
	requireSandboxExec(t)
	wsGiven := t.TempDir()
	ws, err := filepath.EvalSymlinks(wsGiven)
	if err != nil {
		t.Fatal(err)
	}
	outside := realTempDir(t)
	inside, secret := filepath.Join(ws, "inside"), filepath.Join(outside, "secret")
	for _, p := range []string{inside, secret} {
		if err := os.WriteFile(p, []byte("data\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The Config names the workspace as t.TempDir gave it (under /var);
	// WrapCommand resolves it to /private/var, the path Seatbelt matches.
	cfg := sandbox.Config{AllowedWritePaths: []string{wsGiven}}
	run := func(prog string, args ...string) (string, error) {
		cmd := exec.Command(prog, args...)
		cmd.Dir = ws
		wrap(t, cmd, cfg)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}

	if out, err := run("/bin/cat", inside); err != nil || out != "data\n" {
		t.Errorf("cat inside the workspace: %v %q", err, out)
	}
	if out, err := exec.Command("/bin/cat", secret).CombinedOutput(); err != nil {
		t.Fatalf("unwrapped cat of %s fails (%v: %s): the test proves nothing", secret, err, out)
	}
	if out, err := run("/bin/cat", secret); err == nil || !strings.Contains(out, "Operation not permitted") {
		t.Errorf("cat outside the workspace: %v %q, want a failure with EPERM", err, out)
	}
	if out, err := run("/bin/cat", "/private/etc/hosts"); err == nil || !strings.Contains(out, "Operation not permitted") {
		t.Errorf("cat /private/etc/hosts: %v %q, want a failure with EPERM", err, out)
	}
	if out, err := run("/usr/bin/touch", filepath.Join(ws, "new")); err != nil {
		t.Errorf("touch inside the workspace: %v %q", err, out)
	}
	if out, err := run("/usr/bin/touch", filepath.Join(outside, "new")); err == nil || !strings.Contains(out, "Operation not permitted") {
		t.Errorf("touch outside the workspace: %v %q, want a failure with EPERM", err, out)
	}
	if _, err := os.Stat(filepath.Join(outside, "new")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a file was created outside the workspace: %v", err)
	}
}

func TestDarwinWrapCommandExecAllowlist(t *testing.T) {
	requireSandboxExec(t)
	ws := realTempDir(t)
	// /usr/bin/env execs its argument in place (no fork): only the exec
	// allowlist can stop it.
	cmd := exec.Command("/usr/bin/env", "/usr/bin/true")
	cmd.Dir = ws
	wrap(t, cmd, sandbox.Config{AllowedWritePaths: []string{ws}})
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "Operation not permitted") {
		t.Errorf("env execs /usr/bin/true, not on the allowlist: %v %q, want EPERM", err, out)
	}
	cmd = exec.Command("/usr/bin/env", "/usr/bin/true")
	cmd.Dir = ws
	wrap(t, cmd, sandbox.Config{AllowedWritePaths: []string{ws}, AllowedExecPaths: []string{"/usr/bin/true"}})
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("env execs /usr/bin/true, on the allowlist: %v %q", err, out)
	}
}

func TestDarwinWrapCommandSpawnDenied(t *testing.T) {
	requireSandboxExec(t)
	ws := realTempDir(t)
	cfg := sandbox.Config{AllowedWritePaths: []string{ws}, AllowedExecPaths: []string{"/usr/bin/true"}}
	if out, err := runHelper(t, cfg, ws, "spawn", ""); err != nil {
		t.Errorf("helper: %v\n%s", err, out)
	}
}

func TestDarwinWrapCommandNetwork(t *testing.T) {
	requireSandboxExec(t)
	ws := realTempDir(t)
	var ports []string
	for range 2 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
		ports = append(ports, strconv.Itoa(l.Addr().(*net.TCPAddr).Port))
	}
	// The control: unwrapped, both ports accept.
	for _, p := range ports {
		c, err := net.Dial("tcp", "127.0.0.1:"+p)
		if err != nil {
			t.Fatalf("unwrapped dial %s: %v", p, err)
		}
		c.Close()
	}
	cfg := sandbox.Config{AllowedWritePaths: []string{ws}, AllowedTCPConnect: []string{"localhost:" + ports[0]}}
	if out, err := runHelper(t, cfg, ws, "connect", ports[0]+","+ports[1]); err != nil {
		t.Errorf("helper: %v\n%s", err, out)
	}
}

// TestDarwinCanaryInWrappedChild runs the canary where it is meant to run,
// in a process WrapCommand started, and reads its result back the way an
// Engine does.
func TestDarwinCanaryInWrappedChild(t *testing.T) {
	requireSandboxExec(t)
	ws := realTempDir(t)
	cfg := sandbox.Config{AllowedWritePaths: []string{ws}}
	out, err := runHelper(t, cfg, ws, "canary", ws)
	if err != nil {
		t.Fatalf("helper: %v\n%s", err, out)
	}
	r := sandbox.ReadCanaryResult(ws)
	if !r.Verified || r.Status != sandbox.CanarySandboxed || r.Mechanism != sandbox.ModeSandboxExec {
		t.Fatalf("canary in the wrapped child: %s (%s)\n%s", r.Status, r.Summary, out)
	}
	want := map[string]string{
		"file_read": sandbox.ProbeBlocked, "file_write": sandbox.ProbeBlocked, "network": sandbox.ProbeBlocked,
		"process_spawn": sandbox.ProbeBlocked, "process_info": sandbox.ProbeBlocked,
		"control_system": sandbox.ProbeAllowed, "control_write": sandbox.ProbeAllowed,
	}
	for _, p := range r.Probes {
		if w, ok := want[p.Name]; ok && p.Status != w {
			t.Errorf("probe %s: %s (%s), want %s", p.Name, p.Status, p.Error, w)
		}
		delete(want, p.Name)
	}
	if len(want) > 0 {
		t.Errorf("probes missing: %v", want)
	}

	// Unwrapped, the same canary must not verify: the probes really probe.
	if r := sandbox.VerifyCanaryFor(cfg); r.Verified {
		t.Errorf("canary in the unsandboxed test process verified: %s", r.Summary)
	} else {
		t.Logf("unsandboxed: %s", r.Summary)
	}
}
