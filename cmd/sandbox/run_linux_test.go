//go:build linux

package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// markedProcs returns the live processes whose environment holds kv.
func markedProcs(kv string) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		env, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err != nil || !bytes.Contains(append([]byte{0}, env...), []byte("\x00"+kv+"\x00")) {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if i := bytes.LastIndexByte(stat, ')'); err == nil && i > 0 && i+2 < len(stat) && stat[i+2] != 'Z' {
			out = append(out, pid)
		}
	}
	return out
}

// TestRunSignalKillsTree: SIGINT (and TERM, HUP) to `sandbox run` ends the
// program and the processes it left in the background, and the command
// exits 128+N.
func TestRunSignalKillsTree(t *testing.T) {
	linuxSandbox(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		mark := fmt.Sprintf("SANDBOX_CLI_SIGNAL_TEST=%d-%d", os.Getpid(), sig)
		cmd := exec.Command(cli(t), "run", "--allow-spawn", "--exec", "/usr/bin", "--exec", "/bin", "--env", mark,
			"--", "sh", "-c", "sleep 60 & sleep 60")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Both sleeps and the shell are up (a process in the middle of
		// execve may not show its environment: two looks in a row).
		deadline := time.Now().Add(10 * time.Second)
		n, settled := 0, 0
		for settled < 2 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
			if n = len(markedProcs(mark)); n >= 3 {
				settled++
			} else {
				settled = 0
			}
		}
		if settled < 2 {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("%v: %d processes of the run found, want 3 (sh and two sleeps); stderr %s", sig, n, stderr.String())
		}
		cmd.Process.Signal(sig)
		err := cmd.Wait()
		var ee *exec.ExitError
		if !errorsAs(err, &ee) || ee.ExitCode() != 128+int(sig) {
			t.Errorf("%v: %v, want exit %d; stderr %s", sig, err, 128+int(sig), stderr.String())
		}
		if left := markedProcs(mark); len(left) > 0 {
			for _, pid := range left {
				syscall.Kill(pid, syscall.SIGKILL) // ours: started by this test
			}
			t.Errorf("%v: processes of the run left behind: %v", sig, left)
		}
	}
}

func errorsAs(err error, ee **exec.ExitError) bool {
	e, ok := err.(*exec.ExitError)
	*ee = e
	return ok
}

// TestRunStreams: stdout and stderr stay apart, and output arrives while
// the program runs, not when it ends.
func TestRunStreams(t *testing.T) {
	linuxSandbox(t)
	cmd := exec.Command(cli(t), "run", "--allow-spawn", "--exec", "/usr/bin", "--exec", "/bin",
		"--", "sh", "-c", "echo out; echo err >&2; sleep 5; echo late")
	outR, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	first := make(chan string, 1)
	go func() {
		buf := make([]byte, 64)
		n, _ := outR.Read(buf)
		first <- string(buf[:n])
	}()
	select {
	case got := <-first:
		if got != "out\n" {
			t.Errorf("first stdout bytes %q, want %q", got, "out\n")
		}
	case <-time.After(4 * time.Second):
		t.Error("no stdout while the program runs: output is buffered until exit")
	}
	time.Sleep(100 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGTERM)
	io.Copy(io.Discard, outR)
	cmd.Wait()
	// Then the command's own line about the signal.
	if got := stderr.String(); !strings.HasPrefix(got, "err\nsandbox run: terminated") {
		t.Errorf("stderr %q, want %q and then the signal's line", got, "err\n")
	}
}

// TestRunHelpAndPaths: run -h is usage on stdout with exit 0; relative and
// ~ paths are the caller's; --allow-udp and --allow-unix reach the Config.
func TestRunHelpAndPaths(t *testing.T) {
	out, errOut, code := runCLI(t, "run", "-h")
	if code != 0 || !strings.Contains(out, "sandbox run") || !strings.Contains(out, "-allow-exec-rw") || errOut != "" {
		t.Errorf("run -h: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	linuxSandbox(t)
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "f"), []byte("content\n"), 0o644)
	cmd := exec.Command(cli(t), "run", "--ro", ".", "--exec", "/usr/bin", "--exec", "/bin", "--", "cat", "f")
	cmd.Dir = ws
	got, err := cmd.CombinedOutput()
	if err != nil || string(got) != "content\n" {
		t.Errorf("--ro . : %v, %q", err, got)
	}
	cmd = exec.Command(cli(t), "run", "--ro", "~/f", "--exec", "/usr/bin", "--", "cat", filepath.Join(ws, "f"))
	cmd.Env = append(os.Environ(), "HOME="+ws)
	got, err = cmd.CombinedOutput()
	if err != nil || string(got) != "content\n" {
		t.Errorf("--ro ~/f: %v, %q", err, got)
	}
	out, _, code = runCLI(t, "plan", "--allow-udp", "--allow-unix", "--json")
	if code != 0 || !strings.Contains(out, "granted: UDP sockets") || strings.Contains(out, "AF_UNIX sockets denied") {
		t.Errorf("plan --allow-udp --allow-unix: exit %d\n%s", code, out)
	}
}
