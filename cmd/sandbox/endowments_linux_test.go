//go:build linux

package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// runEndowmentsCLI runs the CLI with the descriptor on stdin.
func runEndowmentsCLI(t *testing.T, descriptor string, args ...string) (endowmentsResult, string, int) {
	t.Helper()
	cmd := exec.Command(cli(t), args...)
	cmd.Stdin = strings.NewReader(descriptor)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	var res endowmentsResult
	if code == 0 && args[0] == "run" {
		if err := json.Unmarshal([]byte(stdout.String()), &res); err != nil {
			t.Fatalf("stdout is not the JSON result: %v\n%s", err, stdout.String())
		}
	}
	return res, stderr.String(), code
}

// TestRunEndowments: `sandbox run --endowments -` runs the program
// confined to the descriptor and prints the JSON result.
func TestRunEndowments(t *testing.T) {
	linuxSandbox(t)
	dir := t.TempDir()
	// Not under /tmp: the run's /tmp is a private one, where the file
	// would be missing rather than denied.
	sdir, err := os.MkdirTemp("/var/tmp", "endowments-secret-")
	if err != nil {
		t.Skipf("no /var/tmp for a file outside the run's private /tmp: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(sdir) })
	secret := filepath.Join(sdir, "secret")
	os.WriteFile(secret, []byte("s3cret"), 0o644)
	os.WriteFile(filepath.Join(dir, "in"), []byte("data"), 0o644)
	desc := `{"fs": [{"path": "` + dir + `", "mode": "read"}], "exec": {"allowPaths": ["/usr/bin", "/bin"]}, "env": {"PATH": "/usr/bin:/bin"}}`

	res, stderr, code := runEndowmentsCLI(t, desc, "run", "--endowments", "-", "--", "echo", "hello")
	if code != 0 || res.ExitCode != 0 || res.Stdout != "hello\n" || res.TimedOut || res.MaxOutput != endowmentsMaxOutput {
		t.Fatalf("echo hello: %d %+v %s", code, res, stderr)
	}
	res, _, _ = runEndowmentsCLI(t, desc, "run", "--endowments", "-", "--cwd", dir, "--", "cat", "in")
	if res.ExitCode != 0 || res.Stdout != "data" {
		t.Errorf("cat in the granted cwd: %+v", res)
	}
	res, _, _ = runEndowmentsCLI(t, desc, "run", "--endowments", "-", "--", "cat", secret)
	if res.ExitCode == 0 || strings.Contains(res.Stdout, "s3cret") || !strings.Contains(res.Stderr, "Permission denied") {
		t.Errorf("read outside the grants: %+v, want Permission denied", res)
	}
	res, _, _ = runEndowmentsCLI(t, desc, "run", "--endowments", "-", "--", "sh", "-c", "echo x > "+dir+"/new")
	if res.ExitCode == 0 || !strings.Contains(res.Stderr, "Permission denied") && !strings.Contains(res.Stderr, "Read-only file system") {
		t.Errorf("write in a read path: %+v, want Permission denied (Landlock) or Read-only file system (the mount layer)", res)
	}
	if _, err := os.Stat(filepath.Join(dir, "new")); err == nil {
		t.Error("the program wrote in a read-only grant")
	}

	res, _, _ = runEndowmentsCLI(t, desc, "run", "--endowments", "-", "--", "printf", `ok\377`)
	if res.ExitCode != 0 || res.Stdout != "ok\uFFFD" || !res.StdoutBinary || res.StderrBinary {
		t.Errorf("bytes that are not UTF-8: %+v, want U+FFFD and stdoutBinary", res)
	}

	start := time.Now()
	res, _, code = runEndowmentsCLI(t, desc, "run", "--endowments", "-", "--timeout", "300ms", "--", "sh", "-c", "sleep 30 & sleep 30")
	if code != 0 || !res.TimedOut || res.ExitCode != -1 || time.Since(start) > 10*time.Second {
		t.Errorf("timeout: %d %+v after %v", code, res, time.Since(start))
	}

	// What the descriptor does not grant is refused with the entry to add.
	_, stderr, code = runEndowmentsCLI(t, `{"exec": {"allowPaths": ["/bin/sh"]}, "env": {"PATH": "/usr/bin:/bin"}}`, "run", "--endowments", "-", "--", "echo", "x")
	if code != exitUsage || !strings.Contains(stderr, "exec.allowPaths does not grant") {
		t.Errorf("command not granted: %d %s", code, stderr)
	}
	res, _, code = runEndowmentsCLI(t, `{"exec": {"allowPaths": ["/usr/bin"]}, "env": {"PATH": "/usr/bin"}}`, "run", "--endowments", "-", "--", "/usr/bin/true")
	if code != 0 || res.ExitCode != 0 {
		t.Errorf("absolute command: %d %+v", code, res)
	}
	// mountAt at a target this machine cannot make is refused, not run
	// without the mount (until the mount layer makes targets that do not
	// exist: then it is shown there).
	res, stderr, code = runEndowmentsCLI(t, `{"fs": [{"path": "`+dir+`", "mode": "read", "mountAt": "/nonexistent-endowments-target"}], "exec": {"allowPaths": ["/usr/bin"]}}`,
		"run", "--endowments", "-", "--", "/usr/bin/cat", "/nonexistent-endowments-target/in")
	if code == 0 && res.Stdout != "data" || code != 0 && (code != exitUsage || !strings.Contains(stderr, "fs[0].mountAt")) {
		t.Errorf("mountAt at a missing target: %d %+v %s", code, res, stderr)
	}
	_, stderr, code = runEndowmentsCLI(t, `{"fs": [{"path": "`+dir+`", "mode": "rw"}]}`, "run", "--endowments", "-", "--", "true")
	if code != exitUsage || !strings.Contains(stderr, `fs[0].mode "rw": want "read" or "read-write"`) {
		t.Errorf("malformed descriptor: %d %s", code, stderr)
	}
}

// TestPlanEndowments: the effective endowments, what is not enforced,
// and the description, as the plugin's describe() and help() read them.
func TestPlanEndowments(t *testing.T) {
	linuxSandbox(t)
	dir := t.TempDir()
	desc := `{"fs": [{"path": "` + dir + `/", "mode": "read-write"}], "net": {"outbound": true, "allowHosts": ["localhost"], "allowPorts": [8080]}}`
	cmd := exec.Command(cli(t), "plan", "--endowments", "-", "--json")
	cmd.Stdin = strings.NewReader(desc)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var rep endowmentsPlan
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Endowments.Version != 1 || rep.Endowments.FS[0].Path != dir || rep.DefaultTimeoutMs != 30000 ||
		!strings.Contains(rep.Describe, "It is stopped after 30s.") || rep.NotEnforced == nil ||
		len(rep.Config.AllowedTCPConnect) != 1 || rep.Config.AllowedTCPConnect[0] != "localhost:8080" {
		t.Errorf("plan: %+v", rep)
	}
	var hostEnforced bool
	for _, f := range rep.Plan.Features {
		if f.Feature == "tcp_connect_host" && f.Scope == "command" {
			hostEnforced = f.Enforced
		}
	}
	if hostEnforced != (len(rep.Effective.Net.AllowHosts) == 1) {
		t.Errorf("host enforced %v, effective allowHosts %v", hostEnforced, rep.Effective.Net.AllowHosts)
	}
	text, _ := exec.Command(cli(t), "plan", "--endowments", "/nonexistent.json").CombinedOutput()
	if !strings.Contains(string(text), "--endowments: open /nonexistent.json") {
		t.Errorf("missing file: %s", text)
	}
}
