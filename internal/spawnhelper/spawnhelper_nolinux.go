//go:build !linux

package spawnhelper

import "os"

// Executable reports that there is no helper outside Linux.
func Executable() (*os.File, string) { return nil, "no helper outside Linux" }
