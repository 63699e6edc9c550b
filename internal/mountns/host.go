package mountns

import (
	"os"
	"path/filepath"
)

// HostLookup is Spec.Lookup on this machine: stat, following links.
func HostLookup(path string) Kind {
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return Missing
	case fi.IsDir():
		return Dir
	default:
		return File
	}
}

// HostResolve is Spec.Resolve on this machine.
func HostResolve(path string) string {
	r, err := filepath.EvalSymlinks(path)
	if err != nil {
		return ""
	}
	return r
}
