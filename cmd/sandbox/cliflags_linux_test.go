package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The command is looked up in the program's PATH (--env PATH=...), as
// env(1) does, never in the caller's (issue 31, item 3).
func TestRunFindsCMDInProgramPATH(t *testing.T) {
	linuxSandbox(t)
	prog, caller := t.TempDir(), t.TempDir()
	for dir, said := range map[string]string{prog: "from the program PATH", caller: "from the caller PATH"} {
		if err := os.WriteFile(filepath.Join(dir, "hello"), []byte("#!/bin/sh\necho "+said+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	run := func(args ...string) (string, string, int) {
		cmd := exec.Command(cli(t), args...)
		cmd.Env = append(os.Environ(), "PATH="+caller+":/usr/bin:/bin")
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return stdout.String(), stderr.String(), code
	}
	out, stderr, code := run("run", "--env", "PATH="+prog+":/usr/bin:/bin", "--exec", prog, "--", "hello")
	if code != 0 || out != "from the program PATH\n" {
		t.Errorf("hello in the program's PATH: exit %d, stdout %q, stderr %q", code, out, stderr)
	}
	// Only the caller's PATH has it: not found, and the program's PATH is
	// named.
	out, stderr, code = run("run", "--env", "PATH=/usr/bin:/bin", "--exec", caller, "--", "hello")
	if code != 127 || out != "" || !strings.Contains(stderr, `the program's PATH is "/usr/bin:/bin"`) {
		t.Errorf("hello only in the caller's PATH: exit %d, stdout %q, stderr %q; want 127 naming the program's PATH", code, out, stderr)
	}
	// Without --env PATH the program's PATH is the caller's (the default
	// environment): found there.
	out, _, code = run("run", "--exec", caller, "--", "hello")
	if code != 0 || out != "from the caller PATH\n" {
		t.Errorf("hello with the default environment: exit %d, stdout %q", code, out)
	}
}

// --cwd is the program's working directory; --allow-chown is
// Config.AllowChown (issue 31, item 7).
func TestRunCwdAndAllowChown(t *testing.T) {
	linuxSandbox(t)
	dir := t.TempDir()
	out, stderr, code := runCLI(t, "run", "--cwd", dir, "--ro", dir, "--", "pwd")
	if code != 0 || out != dir+"\n" {
		t.Errorf("--cwd %s: exit %d, stdout %q, stderr %q", dir, code, out, stderr)
	}
	f := filepath.Join(dir, "f")
	os.WriteFile(f, nil, 0o644)
	uid := strconv.Itoa(os.Getuid())
	_, stderr, code = runCLI(t, "run", "--rw", dir, "--", "chown", uid, f)
	if code == 0 || !strings.Contains(stderr, "not permitted") {
		t.Errorf("chown without --allow-chown: exit %d, stderr %q; want refused", code, stderr)
	}
	_, stderr, code = runCLI(t, "run", "--rw", dir, "--allow-chown", "--", "chown", uid, f)
	if code != 0 {
		t.Errorf("chown with --allow-chown: exit %d, stderr %q", code, stderr)
	}
}
