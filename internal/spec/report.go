package spec

import "time"

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
	FindingSpecialFile = "special_file"
	// FindingSymlink: a symbolic link where the caller had to read or
	// remove something (a repository's .git, a component of a
	// submodule's path), or a .git link the program re-pointed during
	// the run. It was not followed: the caller never reads, lists or
	// removes through a link the program could have planted. git follows
	// some of these links: Detail says where it points now.
	FindingSymlink = "symlink_not_followed"
	// FindingBoundExceeded: a file larger than the caller reads there (an
	// index past its documented bound), or a directory with more entries
	// than its budget. The part past the bound was not read, so the check
	// it was for (e.g. the submodules an index makes git enter) was not
	// made: Detail says which.
	FindingBoundExceeded = "bound_exceeded"
)

// Kinds of Finding that git protection reports, on Linux with the
// protection on (not Config.NoGitProtection). Each one is left in place:
// it may be the requested work; look at it before running git there. A
// .git the walk finds that is a FIFO, a socket or a device is reported
// as FindingSpecialFile (never opened).
const (
	// FindingGitRepository: a repository (a .git directory, a gitdir
	// file, or a .git link, which git follows) that the program created
	// in a write path or a writable Mount's source, at any depth, where
	// GitCreated does not list it (GitCreated covers a write path's top
	// and the working directory's way up). Its hooks and config are the
	// program's: git runs them the next time anyone works in it. Path is
	// the .git.
	FindingGitRepository = "git_repository_created"
	// FindingGitBareRepository: an implicit bare repository (HEAD,
	// objects/, refs/) that the program created, a write path's top
	// included: git run inside it takes it for a git directory and uses
	// its config (core.sshCommand runs a program at git fetch, for one)
	// and hooks. Path is the directory.
	FindingGitBareRepository = "git_bare_repository_created"
	// FindingGitRebaseExec: rebase or cherry-pick state with exec lines
	// (rebase-merge/git-rebase-todo, sequencer/todo) in the git
	// directory of a protected repository, new or changed since the
	// start, or a todo file the caller could not check (a link, a special
	// file, too large): git rebase --continue (or cherry-pick --continue)
	// runs each exec line outside the sandbox. Path is the todo file.
	// rebase-apply (git am, and rebase's apply backend) holds no list of
	// commands: its state runs nothing but hooks, which are protected.
	FindingGitRebaseExec = "git_rebase_exec"
	// FindingGitNotWalked: the walk for repositories (before the program
	// started, or after it) stopped at its budget or at an error: Path is
	// a directory it did not walk, or walked in part; a repository there
	// was not protected, or not reported.
	FindingGitNotWalked = "git_not_walked"
	// FindingGitNotProtected: a repository found at the start beyond the
	// per-spawn budget of protected repositories: its hooks and config
	// were writable. Path is the repository's directory.
	FindingGitNotProtected = "git_not_protected"
)

// Finding is one thing the caller found in a place the program could
// write, which the caller must know of (see CommandReport.Findings).
type Finding struct {
	// Kind is one of the Finding* constants.
	Kind string `json:"kind"`
	// Path is where it was found.
	Path string `json:"path"`
	// Detail says what it is and what to do about it.
	Detail string `json:"detail,omitempty"`
}

// DeniedRequest is one network request the egress layer of a sandbox
// refused (see [Egress]): a host and port not on Config.AllowedTCPConnect,
// an allowed name that resolved only to the caller's own or internal
// addresses (DNS rebinding), a request the proxy could not read, or one
// past the proxy's bounds (the caller serves the proxy, outside the
// program's limits, so a program's requests may cost it only so much); on
// the transparent path (EgressTransparent) also a direct connection to an
// allowed port at an address no entry names (reset), and a DNS lookup of a
// name not on the list (NXDOMAIN). A connection to a port not on the list
// is refused by Landlock in the kernel and never reaches the caller: it is
// not listed.
type DeniedRequest struct {
	Time time.Time `json:"time"`
	// Protocol is "http" (an absolute-URI request), "connect" (HTTP
	// CONNECT), "socks5", "socks4", "" when the request was unreadable;
	// "tcp" (a direct connection on the transparent path: Host is the
	// address dialled, or the allowed name it was relayed as when the
	// rebinding filter refused that name's addresses), "dns" (a lookup
	// the caller's resolver refused: Host is the name, Port 0) or
	// "inbound" (a connection from the caller's loopback to a port the
	// program listens on, refused because that port's inbound pool was
	// used up, Reason "inbound-pool-exhausted": Host is "127.0.0.1" and
	// Port the port).
	Protocol string `json:"protocol"`
	// Host is the host as requested (lower case, canonical), "" when
	// unreadable. It comes from the confined program: print it as text,
	// never interpret it (control characters are replaced by '?').
	Host string `json:"host"`
	Port uint16 `json:"port"`
	// Reason is "not-allowed", "non-public-address" (an allowed name
	// resolved only to loopback, private, link-local... addresses or to
	// the caller's own interfaces), "malformed-request", "unsupported",
	// or one of the proxy's bounds on what the program may cost the
	// caller: "request-too-large" (a request head over 32 KiB or 100
	// header fields), "request-timeout" (a head not complete within
	// 10 s), "proxy-busy" (128 connections open already, or 1 MiB of
	// request heads held for the sandbox; the request may succeed later),
	// "inbound-pool-exhausted" (Protocol "inbound").
	Reason string `json:"reason"`
	Detail string `json:"detail,omitempty"`
}
