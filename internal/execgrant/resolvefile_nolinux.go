//go:build !linux

package execgrant

import "os"

// resolveFile returns path with its symlinks resolved and what it names:
// see resolveFileByWalk.
func resolveFile(path string) (string, os.FileInfo, error) { return resolveFileByWalk(path) }
