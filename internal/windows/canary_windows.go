//go:build windows

package windows

// The Windows canary. A Job Object confines process creation from inside
// the job only, so the probes are:
//
//   - process_spawn: start %SystemRoot%\System32\cmd.exe (by full path:
//     CreateProcess would not search for a bare name the way a shell does);
//     blocked only on ERROR_NOT_ENOUGH_QUOTA, the error the job's
//     active-process limit gives.
//   - process_spawn_parent: whether this process can open the other
//     processes of its user for PROCESS_CREATE_PROCESS, the first step of
//     the route around the job: a process opened so can be named as the
//     parent of a new process (PROC_THREAD_ATTRIBUTE_PARENT_PROCESS), which
//     then starts outside the job. Decided from the process's own token
//     (SpawnParentProbe): blocked only for an AppContainer token, an
//     integrity level below medium or a restricted token that the user's
//     processes do not grant access, and only if the parent process could
//     not be opened either; failed otherwise. The parent alone decides
//     nothing: it may have exited, belong to another user, run elevated or
//     be another process with a reused ID, and a job alone would then look
//     confined. Nothing is created.
//
// File and network probes are skipped with the reason: Job Objects do not
// restrict them. With a medium or high integrity token, neither restricted
// nor an AppContainer token, process_spawn_parent fails, so the result is
// partial and not verified: that is the truth about a job alone (see
// PlanFor's process_spawn).

import (
	"errors"
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

// probeSpawnParent decides process_spawn_parent from this process's token,
// with OpenProcess(parent, PROCESS_CREATE_PROCESS) as a control.
func probeSpawnParent(cfg spec.Config) spec.ProbeResult {
	if cfg.AllowProcessSpawn {
		return probe.Skipped("process_spawn_parent", "process spawn is granted by the config")
	}
	return SpawnParentProbe(CurrentTokenFacts(), tryParent())
}

// tryParent opens the parent process for PROCESS_CREATE_PROCESS.
func tryParent() ParentTry {
	ppid := os.Getppid()
	if ppid <= 0 {
		return ParentTry{Outcome: ParentNotTried}
	}
	h, err := windows.OpenProcess(windows.PROCESS_CREATE_PROCESS, false, uint32(ppid))
	switch {
	case err == nil:
		windows.CloseHandle(h)
		return ParentTry{PID: ppid, Outcome: ParentOpened}
	case errors.Is(err, windows.ERROR_ACCESS_DENIED):
		return ParentTry{PID: ppid, Outcome: ParentDenied, Err: err.Error()}
	case errors.Is(err, windows.ERROR_INVALID_PARAMETER):
		// The ID names no process: the parent has exited.
		return ParentTry{PID: ppid, Outcome: ParentNotTried}
	}
	return ParentTry{PID: ppid, Outcome: ParentOtherError, Err: err.Error()}
}
