package sandbox

// Run on every OS: option checks, output capture, and failing closed where
// the platform has no sandbox. The Linux enforcement tests with real
// programs are in wrap_linux_test.go.

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"
)

func TestCaptureKeepsPrefix(t *testing.T) {
	var c capture
	c.read(strings.NewReader(strings.Repeat("x", 100_000)), 1000, nil)
	if len(c.data) != 1000 || !c.truncated {
		t.Errorf("kept %d, truncated %v; want 1000, true", len(c.data), c.truncated)
	}
	c = capture{}
	c.read(strings.NewReader("short"), 1000, nil)
	if string(c.data) != "short" || c.truncated {
		t.Errorf("kept %q, truncated %v", c.data, c.truncated)
	}
	c = capture{}
	c.read(strings.NewReader("exact"), 5, nil)
	if string(c.data) != "exact" || c.truncated {
		t.Errorf("exactly the limit: kept %q, truncated %v", c.data, c.truncated)
	}
}

func TestRunRejectsBadOptions(t *testing.T) {
	for _, o := range []RunOptions{{Timeout: -time.Second}, {MaxOutput: -1}} {
		res, err := Run(context.Background(), Config{}, "true", nil, o)
		if err == nil || res.ExitCode != -1 {
			t.Errorf("%+v: %v, exit %d; want an error and -1", o, err, res.ExitCode)
		}
	}
	res, err := Run(context.Background(), Config{AllowedReadPaths: []string{"relative"}}, "true", nil, RunOptions{})
	if !errors.Is(err, ErrInvalidConfig) || res.ExitCode != -1 {
		t.Errorf("bad Config: %v", err)
	}
}

// echoCommand is a program that prints "hello" on each OS.
func echoCommand() (string, []string) {
	if runtime.GOOS == "windows" {
		return "cmd.exe", []string{"/c", "echo hello"}
	}
	return "/bin/sh", []string{"-c", "echo hello"}
}

// TestRunEverywhere: where the sandbox is unavailable Run refuses with
// ErrUnavailable and runs nothing; where it is, a trivial program runs.
func TestRunEverywhere(t *testing.T) {
	name, args := echoCommand()
	res, err := Run(context.Background(), Config{AllowProcessSpawn: true}, name, args, RunOptions{Timeout: 30 * time.Second})
	if !Probe().Active {
		if !errors.Is(err, ErrUnavailable) || res.ExitCode != -1 || res.State != "" {
			t.Fatalf("without a mechanism: %v %+v; want ErrUnavailable and nothing run", err, res)
		}
		t.Skipf("sandbox unavailable here (%s): checked that Run fails closed", Probe().Reason)
	}
	if err != nil {
		t.Fatal(err)
	}
	if res.ExitCode != 0 || strings.TrimSpace(string(res.Stdout)) != "hello" {
		t.Errorf("exit %d, stdout %q, stderr %q", res.ExitCode, res.Stdout, res.Stderr)
	}
}
