//go:build !windows

package sandbox

import (
	"os"
	"path/filepath"

	"github.com/openparallax/sandbox/internal/safefs"
)

// readStatus reads the status file beneath a descriptor of the workspace
// (resolved: the caller chose it), never following a link at
// .openparallax or at the file, never opening a special file, at most
// maxStatusSize bytes.
func readStatus(workspace string) ([]byte, error) {
	if r, err := filepath.EvalSymlinks(workspace); err == nil {
		workspace = r
	}
	d, err := safefs.Pin(workspace)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	return d.ReadFile(StatusDir+"/"+StatusFile, maxStatusSize)
}

// replaceFile renames src over dst: atomic on POSIX.
func replaceFile(src, dst string) error { return os.Rename(src, dst) }
