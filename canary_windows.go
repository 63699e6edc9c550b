//go:build windows

package sandbox

// The Windows canary. A Job Object confines process creation only, so the
// one real probe is process_spawn: start %SystemRoot%\System32\cmd.exe (by
// full path: CreateProcess would not search for a bare name the way a shell
// does) and count it blocked only on ERROR_NOT_ENOUGH_QUOTA, the error the
// job's active-process limit gives. File and network probes are skipped with
// the reason: Job Objects do not restrict them, so the result is at best
// "sandboxed" for process creation alone, and says so.

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"

	"golang.org/x/sys/windows"
)

const jobSkip = "Job Objects do not restrict file or network access"

func verifyPlatform(cfg Config) CanaryResult {
	if _, err := resolve(cfg); err != nil {
		return NewCanaryResult(ModeJobObject, []ProbeResult{{Name: "config", Status: ProbeFailed, Error: err.Error()}})
	}
	return NewCanaryResult(ModeJobObject, []ProbeResult{
		skipped("file_read", jobSkip),
		skipped("file_write", jobSkip),
		skipped("network", jobSkip),
		probeSpawnWindows(cfg),
	})
}

func probeSpawnWindows(cfg Config) ProbeResult {
	const name = "process_spawn"
	if cfg.AllowProcessSpawn {
		return skipped(name, "process spawn is granted by the config")
	}
	root := os.Getenv("SystemRoot")
	if root == "" {
		root = `C:\Windows`
	}
	target := filepath.Join(root, "System32", "cmd.exe")
	cmd := exec.Command(target, "/c", "exit", "0")
	err := cmd.Start()
	if err == nil {
		cmd.Process.Kill()
		cmd.Wait()
		return ProbeResult{Name: name, Status: ProbeFailed, Target: target, Error: "not denied: the process started"}
	}
	if errors.Is(err, windows.ERROR_NOT_ENOUGH_QUOTA) {
		return ProbeResult{Name: name, Status: ProbeBlocked, Target: target, Error: err.Error()}
	}
	if errors.Is(err, os.ErrNotExist) {
		return skipped(name, target+" not found: nothing to probe with")
	}
	return ProbeResult{Name: name, Status: ProbeFailed, Target: target, Error: err.Error()}
}
