package execgrant

import "os"

// ResolveFile returns path with its symlinks resolved and what it names,
// for a caller that must decide about the file by its resolved path. It
// never opens the file for reading, so a FIFO or device at path cannot
// block it or be affected. On Linux, with the kernel's procfs on /proc,
// the path and the FileInfo come from one O_PATH descriptor and so name
// the same object; otherwise (and when the kernel's answer is unusable)
// they come from a walk, which checks that a regular file it reports is
// the one it opened without following a symlink (resolveFileByWalk). It
// makes no decision: the caller checks the file's type, mode and place.
// Errors are those of the lookup, or a file that changed while checked.
func ResolveFile(path string) (string, os.FileInfo, error) { return resolveFile(path) }
