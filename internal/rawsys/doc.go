// Package rawsys holds the raw system calls the enforcement tests and the
// canary probes attempt: process creation in every form, an i386 entry
// through int $0x80, and the like. Each returns the errno the kernel (or the
// seccomp filter) answered, and never lets a created process run Go code: a
// child made by a successful fork exits at once.
package rawsys
