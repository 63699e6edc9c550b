// Package runtemp makes and removes Run's private temporary directory.
//
// Every Run gets a private temporary directory. Without one, a program
// finds /tmp denied but believes it writable (Landlock does not mediate
// access(2), so bash and gcc do not fall back): bash's here-documents
// over a pipe's size turned into empty input, sort failed inside pipelines
// that exited 0, gcc aborted, and Python left tmpXXXX directories in the
// workspace. Granting /tmp instead would hand the program every other
// user's and process's temporary files.
//
// The directory is the program's to write; the caller grants it ([Dir.Path])
// and points the program at it ([Dir.Environ]). What the program leaves
// there is removed by [Dir.Remove] without following any link it holds.
//
// A caller killed mid-run cannot remove its directory. On Linux each
// directory is named for its caller ([Pattern]: PID namespace, PID and
// start time), and [New] sweeps the temporary directory for those whose
// caller is dead: at a process's first New in that temporary directory,
// then at most once a minute (sweepLazily), so that a killed caller's
// directory is removed by the first Run of the next process, or within a
// minute by one that keeps running; the Linux egress layer names its
// generated resolv.conf's directory the same way, so the sweep covers it.
package runtemp
