package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openparallax/sandbox"
)

// runCLIIn is runCLI with the caller's environment env and stdin.
func runCLIIn(t *testing.T, env []string, stdin string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(cli(t), args...)
	cmd.Env, cmd.Stdin = env, strings.NewReader(stdin)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return stdout.String(), stderr.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), 0
}

// The command is found in the program's PATH, as env(1) finds it, with
// --env PATH and with a request's env (issue 31, item 3): a python3 shim
// first in the caller's PATH is not what runs.
func TestRunFindsCommandInProgramPATH(t *testing.T) {
	linuxSandbox(t)
	python, err := exec.LookPath("python3")
	if err != nil || filepath.Dir(python) != "/usr/bin" {
		t.Skipf("needs /usr/bin/python3 (found %q, %v)", python, err)
	}
	shims := t.TempDir()
	if err := os.WriteFile(filepath.Join(shims, "python3"), []byte("#!/bin/sh\necho SHIM\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	caller := []string{"PATH=" + shims + ":/usr/bin:/bin"}
	out, stderr, code := runCLIIn(t, caller, "", "run", "--env", "PATH=/usr/bin:/bin", "--", "python3", "-c", "print(6*7)")
	if code != 0 || out != "42\n" {
		t.Errorf("run --env PATH=/usr/bin:/bin -- python3: exit %d, stdout %q, stderr %q; want the real python3's 42", code, out, stderr)
	}
	req := `{"config": {"env": {"PATH": "/usr/bin:/bin"}}, "command": ["python3", "-c", "print(6*7)"]}`
	out, stderr, code = runCLIIn(t, caller, req, "run", "--request", "-")
	if code != 0 || out != "42\n" {
		t.Errorf("run --request with env PATH=/usr/bin:/bin: exit %d, stdout %q, stderr %q; want the real python3's 42", code, out, stderr)
	}
	// Without a PATH of its own the program gets the caller's, shim
	// first: the shim is what env(1) would run too.
	out, _, _ = runCLIIn(t, caller, "", "run", "--exec", shims, "--exec", "/bin", "--allow-spawn", "--", "python3")
	if out != "SHIM\n" {
		t.Errorf("run -- python3 with the caller's PATH: stdout %q, want the shim's", out)
	}
}

// run --env and run --request make the same environment: env(1) prints
// the same thing under both (the program's PATH, then the variables
// given; nothing else of the caller's).
func TestRunRequestEnvMatchesFlags(t *testing.T) {
	linuxSandbox(t)
	caller := []string{"PATH=/usr/bin:/bin", "SECRET=caller-only"}
	byFlags, stderr, code := runCLIIn(t, caller, "", "run", "--env", "GREETING=hello", "--", "env")
	if code != 0 {
		t.Fatalf("run --env -- env: exit %d: %s", code, stderr)
	}
	req := `{"config": {"env": {"PATH": "/usr/bin:/bin", "GREETING": "hello"}}, "command": ["env"], "timeout": "30s"}`
	byRequest, stderr, code := runCLIIn(t, caller, req, "run", "--request", "-")
	if code != 0 {
		t.Fatalf("run --request: exit %d: %s", code, stderr)
	}
	// TMPDIR and HOME name the run's own private directories.
	norm := func(s string) string {
		var keep []string
		for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
			if k, _, _ := strings.Cut(l, "="); k != "TMPDIR" && k != "TMP" && k != "TEMP" && k != "GOTMPDIR" && k != "HOME" {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	if norm(byFlags) != norm(byRequest) || !strings.Contains(byFlags, "GREETING=hello") || strings.Contains(byFlags, "SECRET") {
		t.Errorf("env under run --env:\n%s\nunder run --request:\n%s", byFlags, byRequest)
	}
	// A request without an env gets PATH alone, as run without --env.
	bare, _, _ := runCLIIn(t, caller, `{"config": {}, "command": ["env"]}`, "run", "--request", "-")
	plain, _, _ := runCLIIn(t, caller, "", "run", "--", "env")
	if norm(bare) != "PATH=/usr/bin:/bin" || norm(plain) != norm(bare) {
		t.Errorf("env of a request without env %q, of run without --env %q; want PATH alone", norm(bare), norm(plain))
	}
}

// A request's Config is the one run uses: a grant it lacks is denied, the
// one it has works, its dir is the working directory, and its timeout
// ends the program.
func TestRunRequestConfig(t *testing.T) {
	linuxSandbox(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "note"), []byte("from the request\n"), 0o644)
	write := func(v any) string {
		b, _ := json.Marshal(v)
		f := filepath.Join(t.TempDir(), "req.json")
		os.WriteFile(f, b, 0o644)
		return f
	}
	granted := write(sandbox.RunRequest{Config: sandbox.Config{AllowedReadPaths: []string{dir}}, Command: []string{"cat", "note"}, Dir: dir})
	out, stderr, code := runCLI(t, "run", "--request", granted)
	if code != 0 || out != "from the request\n" {
		t.Errorf("cat in a granted dir: exit %d, %q, %s", code, out, stderr)
	}
	denied := write(sandbox.RunRequest{Config: sandbox.Config{}, Command: []string{"cat", "/etc/passwd"}})
	out, stderr, code = runCLI(t, "run", "--request", denied, "--explain")
	if code == 0 || out != "" || !strings.Contains(stderr, "Permission denied") {
		t.Errorf("cat of an ungranted file: exit %d, %q, %s", code, out, stderr)
	}
	slow := write(sandbox.RunRequest{Command: []string{"sleep", "30"}, Timeout: 200e6})
	if _, stderr, code = runCLI(t, "run", "--request", slow); code == 0 || !strings.Contains(stderr, "killed after --timeout 200ms") {
		t.Errorf("sleep 30 with a 200ms timeout: exit %d, %s", code, stderr)
	}
}
