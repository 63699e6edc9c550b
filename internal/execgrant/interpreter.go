package execgrant

// Which interpreter a granted program may bring with it. Shared by the
// platforms' path rules: the macOS rules and the Linux rules (Chain in
// chain.go, issue 13 item 8) call it, so that both grant interpreters by
// one rule.

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/openparallax/sandbox/internal/spec"
)

// Grantable decides whether interp, the interpreter a granted file names
// (its "#!" line, or an ELF PT_INTERP), may be granted with it, and returns
// the path to grant: interp with symlinks resolved. The file naming it may
// be one the confined process can rewrite, so interp is untrusted text and
// is granted only when it is
//
//   - an absolute path that resolves outside every path in writeRoots
//     (resolved write paths; compared without regard to case, which on a
//     case-sensitive file system can only refuse more), so the confined
//     process can neither replace the file nor redirect the path;
//   - a regular file with an execute bit, the object the resolved path
//     names without following a symlink at its last step, looked at so
//     that a file swapped in while it is checked is refused and a FIFO or
//     device is never opened for reading (ResolveFile).
//
// Anything else is an error saying why, and nothing is granted: the script
// then cannot run, which fails closed.
func Grantable(interp string, writeRoots []string) (string, error) {
	if !filepath.IsAbs(interp) {
		return "", fmt.Errorf("interpreter %q is not an absolute path", interp)
	}
	resolved, fi, err := resolveFile(filepath.Clean(interp))
	if err != nil {
		return "", fmt.Errorf("interpreter %q: %w", interp, err)
	}
	for _, w := range writeRoots {
		if spec.Under(strings.ToLower(resolved), strings.ToLower(w)) {
			return "", fmt.Errorf("interpreter %q resolves to %s, inside the write path %s: the confined process could replace it", interp, resolved, w)
		}
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return "", fmt.Errorf("interpreter %q (%s) is not an executable regular file", interp, resolved)
	}
	return resolved, nil
}

// resolveFileByWalk is ResolveFile by path alone: symlinks resolved by
// filepath.EvalSymlinks, then the resolved path looked at with lstat and
// opened with O_NOFOLLOW|O_NONBLOCK, which must find the same regular file
// (a FIFO or a device swapped in between is refused without blocking, and
// a symlink swapped in fails to open). Where the file is not regular, the
// lstat answer is returned for the caller to refuse, and nothing is
// opened.
func resolveFileByWalk(path string) (string, os.FileInfo, error) {
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", nil, err
	}
	fi, err := os.Lstat(resolved)
	if err != nil {
		return "", nil, err
	}
	if !fi.Mode().IsRegular() {
		return resolved, fi, nil
	}
	f, err := os.OpenFile(resolved, os.O_RDONLY|openNoFollow|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", nil, err
	}
	defer f.Close()
	ofi, err := f.Stat()
	if err != nil {
		return "", nil, err
	}
	if !os.SameFile(fi, ofi) || !ofi.Mode().IsRegular() {
		return "", nil, errors.New(resolved + " changed while it was checked")
	}
	return resolved, ofi, nil
}
