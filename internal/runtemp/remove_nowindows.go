//go:build !windows

package runtemp

import (
	"path/filepath"

	"github.com/openparallax/sandbox/internal/safefs"
)

// removeTempTree removes dir, a Run's temporary directory, through a
// descriptor of the directory that holds it (the caller's temporary
// directory, which the program could not write): first the entries of
// quick and dir itself, each only if empty, else everything
// (safefs.RemoveAll: unlinkat beneath descriptors, a link removed as a
// link, directories the program made unlistable made listable through
// their own descriptor first, bounded in depth and entries).
func removeTempTree(dir string, quick []string) error {
	parent, err := safefs.Pin(filepath.Dir(dir))
	if err != nil {
		return err
	}
	defer parent.Close()
	base := filepath.Base(dir)
	empty := true
	for _, q := range quick {
		if parent.Remove(base+"/"+q) != nil {
			empty = false
			break
		}
	}
	if empty && parent.Remove(base) == nil {
		return nil
	}
	return parent.RemoveAll(base)
}
