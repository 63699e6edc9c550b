package linux

import (
	"io"
	"os"
	"os/exec"

	"golang.org/x/sys/unix"
)

// strictStdio is what Strict does with the target's standard streams
// under WrapCommand: each that is an object of a host filesystem (a
// regular file, or a named pipe that lives on one) is replaced by a pipe
// that os/exec copies through (the caller's Wait waits for the copy, as
// for any io.Reader or io.Writer). The program gets the same bytes, but
// no descriptor of the host's file: through one it could change the
// file's mode, times or extended attributes (fchmod, futimens,
// fsetxattr), which no mount reaches (the descriptor was opened on the
// host's mount, not on the layer's read-only view). A terminal, an
// anonymous pipe or a socket is passed as it is. Streams set after
// WrapCommand are the caller's choice and are not looked at. Run does the
// same for RunOptions.Stdin (its output is always its own pipes).
func strictStdio(cmd *exec.Cmd) {
	if f, ok := cmd.Stdin.(*os.File); ok && onHostFS(f) {
		cmd.Stdin = struct{ io.Reader }{f}
	}
	// The same file as both outputs stays one pipe (os/exec shares a
	// pipe between equal writers).
	for _, w := range []*io.Writer{&cmd.Stdout, &cmd.Stderr} {
		if f, ok := (*w).(*os.File); ok && onHostFS(f) {
			*w = struct{ io.Writer }{f}
		}
	}
}

// onHostFS reports whether f is a regular file or a named pipe on a
// filesystem (not pipefs, where an anonymous pipe lives). A descriptor
// it cannot look at counts as one (the copy is the safe side).
func onHostFS(f *os.File) bool {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return true
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		return true
	case unix.S_IFIFO:
		var fs unix.Statfs_t
		return unix.Fstatfs(int(f.Fd()), &fs) != nil || fs.Type != unix.PIPEFS_MAGIC
	}
	return false
}
