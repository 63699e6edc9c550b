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

// HostReadDir lists the names in dir on this machine (none if it cannot be
// read).
func HostReadDir(dir string) []string {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	names := make([]string, len(ents))
	for i, e := range ents {
		names[i] = e.Name()
	}
	return names
}
