//go:build !linux

package execgrant

import "os"

// versionOf is not needed off Linux: only the Linux WrapCommand looks for
// interpreters on every spawn.
func versionOf(os.FileInfo) (fileVersion, bool) { return fileVersion{}, false }

func statVersion(os.FileInfo) (fileVersion, bool) { return fileVersion{}, false }

// pathVersion is not needed off Linux: no scan is cached there.
func pathVersion(string) fileVersion { return fileVersion{} }
