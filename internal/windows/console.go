package windows

// The console of a wrapped command, decided as data (built and tested on
// every OS): which console flag Wrap adds to the caller's creation flags,
// and which of the caller's flags it refuses.

import "errors"

// Creation flags that decide a child's console (winbase.h). They are
// spelled out because x/sys/windows is not built on other systems; a
// Windows test checks them against it.
const (
	flagDetachedProcess  = 0x00000008 // DETACHED_PROCESS: no console
	flagCreateNewConsole = 0x00000010 // CREATE_NEW_CONSOLE: a console (and window) of its own
	flagCreateNoWindow   = 0x08000000 // CREATE_NO_WINDOW: a console of its own without a window
	consoleFlags         = flagDetachedProcess | flagCreateNewConsole | flagCreateNoWindow
)

// Errors of [ConsoleFlag].
var (
	// ErrConsoleFlagsConflict: DETACHED_PROCESS with CREATE_NEW_CONSOLE,
	// which CreateProcess refuses (ERROR_INVALID_PARAMETER).
	ErrConsoleFlagsConflict = errors.New("cmd.SysProcAttr.CreationFlags has both DETACHED_PROCESS and CREATE_NEW_CONSOLE, " +
		"which Windows refuses together (ERROR_INVALID_PARAMETER)")
	// ErrConsoleWithoutSpawn: a console of its own for a child whose job
	// holds one process.
	ErrConsoleWithoutSpawn = errors.New("cmd.SysProcAttr.CreationFlags asks for a console of the child's own " +
		"(CREATE_NEW_CONSOLE, or CREATE_NO_WINDOW without DETACHED_PROCESS) while process spawn is denied: " +
		"Windows starts a console host (conhost.exe) for a new console, and since Windows 8 it runs in the child's job, " +
		"whose active-process limit of 1 leaves it no room, so the child is expected to fail to start; " +
		"leave the console flags out (the child then gets DETACHED_PROCESS: no console, no console host), " +
		"or set AllowProcessSpawn")
)

// ConsoleFlag returns the console flag Wrap adds to the caller's creation
// flags, or why it refuses them:
//
//   - DETACHED_PROCESS with CREATE_NEW_CONSOLE: refused, whatever the
//     Config ([ErrConsoleFlagsConflict]).
//   - spawning denied, and CREATE_NEW_CONSOLE, or CREATE_NO_WINDOW without
//     DETACHED_PROCESS (which makes Windows ignore it): refused
//     ([ErrConsoleWithoutSpawn]), since the console host a new console needs
//     would be a second process in a job that holds one.
//   - another console flag set by the caller: kept, nothing added.
//   - none: DETACHED_PROCESS when spawning is denied (no console, so no
//     console host); CREATE_NO_WINDOW when it is granted, so that console
//     programs the child starts share one hidden console instead of each
//     opening a window.
//
// Either way the child is not attached to the caller's console, into which
// it could write keystrokes (WriteConsoleInput). What a flag cannot cover:
// a program started without a console that calls AllocConsole later needs a
// console host just the same, which with spawning denied is expected to
// fail the same way (AllocConsole returns an error); see the package doc.
func ConsoleFlag(flags uint32, allowSpawn bool) (uint32, error) {
	detached := flags&flagDetachedProcess != 0
	switch {
	case detached && flags&flagCreateNewConsole != 0:
		return 0, ErrConsoleFlagsConflict
	case !allowSpawn && (flags&flagCreateNewConsole != 0 || (flags&flagCreateNoWindow != 0 && !detached)):
		return 0, ErrConsoleWithoutSpawn
	case flags&consoleFlags != 0:
		return 0, nil
	case allowSpawn:
		return flagCreateNoWindow, nil
	}
	return flagDetachedProcess, nil
}
