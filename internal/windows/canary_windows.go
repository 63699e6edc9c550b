//go:build windows

package windows

// The Windows canary. A Job Object confines process creation from inside
// the job only, so the probes are:
//
//   - process_spawn: start %SystemRoot%\System32\cmd.exe (by full path:
//     CreateProcess would not search for a bare name the way a shell does);
//     blocked only on ERROR_NOT_ENOUGH_QUOTA, the error the job's
//     active-process limit gives.
//   - process_spawn_parent: OpenProcess(parent, PROCESS_CREATE_PROCESS), the
//     first step of the route around the job: a process opened so can be
//     named as the parent of a new process
//     (PROC_THREAD_ATTRIBUTE_PARENT_PROCESS), which then starts outside the
//     job. Blocked only on ERROR_ACCESS_DENIED (a low-integrity or
//     restricted token); failed when the parent could be opened. The
//     parent stands for every process of the same user: the one most
//     likely to be there and to run unconfined. Nothing is created.
//
// File and network probes are skipped with the reason: Job Objects do not
// restrict them. With the process's own token, process_spawn_parent fails,
// so the result is partial and not verified: that is the truth about a job
// alone (see PlanFor's process_spawn).

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"golang.org/x/sys/windows"

	"github.com/openparallax/sandbox/internal/probe"
	"github.com/openparallax/sandbox/internal/spec"
)

const jobSkip = "Job Objects do not restrict file or network access"

// Probes runs the canary's probes in this process, which is confined by
// cfg (validated): file_read, file_write and network skipped (a job does
// not restrict them), process_spawn and process_spawn_parent tried unless
// cfg grants spawning.
func Probes(cfg spec.Config) []spec.ProbeResult {
	return []spec.ProbeResult{
		probe.Skipped("file_read", jobSkip),
		probe.Skipped("file_write", jobSkip),
		probe.Skipped("network", jobSkip),
		probeSpawnWindows(cfg),
		probeSpawnParent(cfg),
	}
}

func probeSpawnWindows(cfg spec.Config) spec.ProbeResult {
	const name = "process_spawn"
	if cfg.AllowProcessSpawn {
		return probe.Skipped(name, "process spawn is granted by the config")
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
		return spec.ProbeResult{Name: name, Status: spec.ProbeFailed, Target: target, Error: "not denied: the process started"}
	}
	if errors.Is(err, windows.ERROR_NOT_ENOUGH_QUOTA) {
		return spec.ProbeResult{Name: name, Status: spec.ProbeBlocked, Target: target, Error: err.Error()}
	}
	if errors.Is(err, os.ErrNotExist) {
		return probe.Skipped(name, target+" not found: nothing to probe with")
	}
	return spec.ProbeResult{Name: name, Status: spec.ProbeFailed, Target: target, Error: err.Error()}
}

// probeSpawnParent tries to open the parent process for
// PROCESS_CREATE_PROCESS.
func probeSpawnParent(cfg spec.Config) spec.ProbeResult {
	const name = "process_spawn_parent"
	if cfg.AllowProcessSpawn {
		return probe.Skipped(name, "process spawn is granted by the config")
	}
	ppid := os.Getppid()
	target := fmt.Sprintf("parent process %d", ppid)
	if ppid <= 0 {
		return probe.Skipped(name, "no parent process: nothing to probe with")
	}
	h, err := windows.OpenProcess(windows.PROCESS_CREATE_PROCESS, false, uint32(ppid))
	switch {
	case err == nil:
		windows.CloseHandle(h)
		return spec.ProbeResult{Name: name, Status: spec.ProbeFailed, Target: target,
			Error: "not denied: OpenProcess(PROCESS_CREATE_PROCESS) succeeded, so a process created with it as parent " +
				"(PROC_THREAD_ATTRIBUTE_PARENT_PROCESS) starts outside the job"}
	case errors.Is(err, windows.ERROR_ACCESS_DENIED):
		return spec.ProbeResult{Name: name, Status: spec.ProbeBlocked, Target: target, Error: err.Error()}
	case errors.Is(err, windows.ERROR_INVALID_PARAMETER):
		return probe.Skipped(name, target+" has exited: nothing to probe with")
	}
	return spec.ProbeResult{Name: name, Status: spec.ProbeFailed, Target: target, Error: err.Error()}
}
