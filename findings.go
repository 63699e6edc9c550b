package sandbox

import "github.com/openparallax/sandbox/internal/spec"

// Kinds of [Finding]: what the caller (Run, FinishCommand) found in a
// place the program could write, when it had to look there. Each is about
// the caller's own safety first: the caller did not follow, open or read
// what it names, and says so, so that whoever works there next (a person
// running git, a later Run) knows what it would meet.
const (
	// FindingSpecialFile: a FIFO, device or socket where the caller had
	// to read a regular file or list a directory (a repository's index,
	// a .git file, a git directory). It was not opened: opening a FIFO
	// waits for a writer forever, and reading a device (/dev/zero) never
	// ends. git opening the same path may hang or misbehave the same way.
	FindingSpecialFile = spec.FindingSpecialFile
	// FindingSymlink: a symbolic link where the caller had to read or
	// remove something (a repository's .git, a component of a
	// submodule's path), or a .git link the program re-pointed during
	// the run. It was not followed: the caller never reads, lists or
	// removes through a link the program could have planted. git follows
	// some of these links: Detail says where it points now.
	FindingSymlink = spec.FindingSymlink
	// FindingBoundExceeded: a file larger than the caller reads there (an
	// index past its documented bound), or a directory with more entries
	// than its budget. The part past the bound was not read, so the check
	// it was for (e.g. the submodules an index makes git enter) was not
	// made: Detail says which.
	FindingBoundExceeded = spec.FindingBoundExceeded
)
