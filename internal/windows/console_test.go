package windows

import (
	"errors"
	"testing"
)

// The console decision as data: the caller's creation flags and the spawn
// grant in, the flag Wrap adds (or the refusal) out.
func TestConsoleFlag(t *testing.T) {
	const (
		other    = 0x00000200 // CREATE_NEW_PROCESS_GROUP: not a console flag, kept
		detached = flagDetachedProcess
		console  = flagCreateNewConsole
		noWindow = flagCreateNoWindow
	)
	for _, c := range []struct {
		flags uint32
		spawn bool
		add   uint32
		err   error
	}{
		{0, false, detached, nil},
		{other, false, detached, nil},
		{0, true, noWindow, nil},
		{other, true, noWindow, nil},
		{detached, false, 0, nil},
		{detached, true, 0, nil},
		{detached | noWindow, false, 0, nil}, // CREATE_NO_WINDOW is ignored with DETACHED_PROCESS
		{console, true, 0, nil},
		{noWindow, true, 0, nil},
		{console, false, 0, ErrConsoleWithoutSpawn},
		{console | other, false, 0, ErrConsoleWithoutSpawn},
		{noWindow, false, 0, ErrConsoleWithoutSpawn},
		{console | noWindow, false, 0, ErrConsoleWithoutSpawn},
		{detached | console, false, 0, ErrConsoleFlagsConflict},
		{detached | console, true, 0, ErrConsoleFlagsConflict},
	} {
		add, err := ConsoleFlag(c.flags, c.spawn)
		if add != c.add || !errors.Is(err, c.err) {
			t.Errorf("ConsoleFlag(%#x, spawn %v) = %#x, %v; want %#x, %v", c.flags, c.spawn, add, err, c.add, c.err)
		}
	}
}
