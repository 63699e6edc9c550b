//go:build windows

package windows

import (
	"testing"

	"golang.org/x/sys/windows"
)

// The console flags console.go spells out are Windows' own.
func TestConsoleFlagValues(t *testing.T) {
	for _, c := range []struct {
		name      string
		ours, sys uint32
	}{
		{"DETACHED_PROCESS", flagDetachedProcess, windows.DETACHED_PROCESS},
		{"CREATE_NEW_CONSOLE", flagCreateNewConsole, windows.CREATE_NEW_CONSOLE},
		{"CREATE_NO_WINDOW", flagCreateNoWindow, windows.CREATE_NO_WINDOW},
	} {
		if c.ours != c.sys {
			t.Errorf("%s = %#x, x/sys/windows has %#x", c.name, c.ours, c.sys)
		}
	}
}
