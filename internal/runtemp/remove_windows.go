package runtemp

import (
	"io/fs"
	"os"
	"path/filepath"
)

// removeTempTree removes dir, a Run's temporary directory: the entries of
// quick and dir itself when empty, else everything (os.RemoveAll, which
// does not follow links or junctions), after making read-only entries
// writable where the first attempt failed. safefs has no pinned
// directories on Windows.
func removeTempTree(dir string, quick []string) error {
	empty := true
	for _, q := range quick {
		if os.Remove(filepath.Join(dir, q)) != nil {
			empty = false
			break
		}
	}
	if empty && os.Remove(dir) == nil {
		return nil
	}
	if os.RemoveAll(dir) == nil {
		return nil
	}
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if d != nil && d.IsDir() && err == nil {
			os.Chmod(path, 0o700)
		}
		return nil
	})
	return os.RemoveAll(dir)
}
