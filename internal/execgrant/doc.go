// Package execgrant decides which files, beyond the paths an exec grant
// names, a granted program needs in order to execute, so that the
// platforms' rules can grant them too:
//
//   - the interpreter chain of a granted file: a script's "#!"
//     interpreter, and that one's, down to an ELF file's PT_INTERP (the
//     dynamic loader) (Chain, InterpreterOf);
//   - the helper directories of toolchains that run their helpers by full
//     path (git's exec-path, gcc's cc1, go's pkg/tool) (Extras);
//   - the targets of the symlinks directly inside a granted directory that
//     lead out of it (/usr/bin/java into /usr/lib/jvm) (Extras).
//
// # Untrusted input
//
// The file naming an interpreter may be one the confined process can
// write, so what it names is untrusted text. It is never followed blindly:
// an interpreter is granted, and looked into, only when Grantable allows
// it (an absolute path resolving outside every write path to an
// executable regular file), and files are opened without following a
// symlink at their last step and without blocking on a FIFO. A refusal
// grants nothing, so the program then fails to start: closed.
//
// The package reads the file system as it is now and returns data; it
// grants nothing itself and never imports the root package.
package execgrant
