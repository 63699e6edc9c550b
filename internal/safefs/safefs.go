// Package safefs is how the trusted side (the caller of WrapCommand and
// Run: FinishCommand, Run's own checks, the Engine reading the canary's
// status file, the next spawn's look at the workspace) touches a path the
// confined program could have written. The program is the one who shaped
// what the caller looks at next: a symlink planted where a file was, a
// FIFO where git's index was, a link to /dev/zero, a directory full of
// links to itself.
//
// # What it guarantees
//
// Every operation on a [Dir] resolves its relative path beneath a
// directory descriptor pinned by [Pin] (or [Dir.OpenDir]), and:
//
//   - no symbolic link is followed, in any component, the last included:
//     on Linux openat2 with RESOLVE_BENEATH|RESOLVE_NO_SYMLINKS|
//     RESOLVE_NO_MAGICLINKS opens the directories on the way; where
//     openat2 answers ENOSYS (this library's own seccomp filter answers so
//     under ApplySelf, and older kernels) and on macOS each component is
//     opened with openat(O_NOFOLLOW|O_DIRECTORY). A link found is
//     [ErrSymlink]. A path with "..", or an absolute one, is refused
//     before any call ([ErrPath]).
//   - no special file is opened: the last component is looked at first
//     with fstatat(AT_SYMLINK_NOFOLLOW), which opens nothing; only a
//     regular file is then opened, with O_NOFOLLOW|O_NONBLOCK|O_NOCTTY, and
//     the descriptor's fstat must show a regular file again (a FIFO or
//     device swapped in between is opened but never read, and O_NONBLOCK
//     keeps even that open from waiting for a writer; another regular file
//     renamed over it, as an atomic writer does, is read). A FIFO, device
//     or socket is [ErrSpecial].
//   - nothing is read without a bound: [Dir.ReadFile] reads at most max
//     bytes and answers [ErrTooLarge] past it (a file that grows while read
//     included); [Dir.ReadDir] lists at most maxEntries names and answers
//     [ErrBudget] past it; [Dir.RemoveAll] stops at maxRemoveDepth levels
//     and maxRemoveEntries entries ([ErrBudget]).
//   - nothing is removed or changed except through a descriptor: Remove
//     and RemoveAll call unlinkat on the descriptor of the entry's parent,
//     itself opened beneath the pinned one, never a path. A symbolic link
//     is removed as a link; its target is never touched.
//
// [ReadRegularFile] is the one exception to the first rule, for a caller
// that must see what git will see when it opens a path (git follows a
// symlinked .git), and whose use of what it reads only adds protection
// (read-only mounts in the program's namespace) and can neither change nor
// reveal anything on the host: it follows links, and still opens only a
// regular file, without waiting, and reads with a bound.
//
// [ReadFileNoFollow] reads one trusted path that lies beneath no pinned
// directory (the canary's status file): its last component must be a
// regular file, not a link (O_NOFOLLOW; on Windows
// FILE_FLAG_OPEN_REPARSE_POINT and a check that the handle is a plain disk
// file), opened without blocking, read with a bound.
//
// # What it does not guarantee
//
// Pin follows links in the components above the directory it pins: the
// caller passes a path it resolved itself, before the program ran (a
// resolved grant, a git directory found before the spawn). What is beneath
// a pinned directory may still change while the caller works, if a
// process of the program is still alive: each call sees one consistent
// object (the descriptor), not a consistent tree. Hard links are not
// detected: a hard link to a file elsewhere on the same filesystem is that
// file (it needs write access to the target's directory entry's
// filesystem, and cannot cross devices). On Windows only
// [ReadFileNoFollow] is implemented; the Dir operations answer
// errors.ErrUnsupported.
package safefs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
)

// Errors the operations wrap (test with errors.Is). Each says what the
// caller found where the program could write: callers turn them into
// findings for their report, never into a hang or a crash.
var (
	// ErrSymlink: a component of the path is a symbolic link (or a magic
	// link), which was not followed.
	ErrSymlink = errors.New("symbolic link not followed")
	// ErrSpecial: the entry is not a regular file (or not a directory
	// where one was needed): a FIFO, device or socket, which was not
	// opened.
	ErrSpecial = errors.New("special file not opened")
	// ErrTooLarge: the file is larger than the bound the caller gave.
	ErrTooLarge = errors.New("larger than the bound")
	// ErrBudget: a listing or a walk has more entries, or more depth,
	// than its bound.
	ErrBudget = errors.New("walk budget exceeded")
	// ErrPath: the relative path is absolute, empty where a name is
	// needed, or has a ".." component.
	ErrPath = errors.New("path not beneath the pinned directory")
)

// Bounds of RemoveAll: how deep it descends (one descriptor is held per
// level) and how many entries it removes in all.
const (
	maxRemoveDepth   = 256
	maxRemoveEntries = 1 << 20
)

// Info is what Lstat reports of an entry, without following it.
type Info struct {
	Mode fs.FileMode // type bits (fs.ModeType) and permission bits
	Size int64
	Uid  uint32
	Dev  uint64
	Ino  uint64
}

// Entry is one name in a directory listing, and its type as the directory
// reports it (fs.ModeDir, fs.ModeSymlink, …; 0 for a regular file).
type Entry struct {
	Name string
	Type fs.FileMode
}

// split checks rel and returns its components: "" and "." are the
// directory itself (no components). An absolute path, a ".." component or
// a NUL is ErrPath. Slashes separate components on every OS.
func split(rel string) ([]string, error) {
	if strings.ContainsRune(rel, 0) || strings.HasPrefix(rel, "/") {
		return nil, fmt.Errorf("%q: %w", rel, ErrPath)
	}
	var out []string
	for c := range strings.SplitSeq(rel, "/") {
		switch c {
		case "", ".":
			continue
		case "..":
			return nil, fmt.Errorf("%q: %w", rel, ErrPath)
		}
		out = append(out, c)
	}
	return out, nil
}

// splitLast is split, with the last component apart: ErrPath when there is
// none (the operation needs a name in a directory).
func splitLast(rel string) (dirs []string, name string, err error) {
	cs, err := split(rel)
	if err != nil {
		return nil, "", err
	}
	if len(cs) == 0 {
		return nil, "", fmt.Errorf("%q names no entry: %w", rel, ErrPath)
	}
	return cs[:len(cs)-1], cs[len(cs)-1], nil
}

// readBounded reads r to its end, at most max bytes: more is ErrTooLarge.
// size (the file's size when opened) is only a hint for the buffer.
func readBounded(r io.Reader, size, max int64) ([]byte, error) {
	if max < 0 {
		max = 0
	}
	if size > max {
		return nil, fmt.Errorf("%d bytes, more than %d: %w", size, max, ErrTooLarge)
	}
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("more than %d bytes: %w", max, ErrTooLarge)
	}
	return b, nil
}
