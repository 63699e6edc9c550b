// Package spec is the sandbox's Config as plain data, and what every
// platform's engine shares: the resolved Config a plan is made from, the
// plan's entries and their feature names, the reports a command leaves
// (findings, denied requests), and the facts of the host a plan depends
// on.
//
// It is the one place a public Config becomes internal data: the root
// package converts its Config to a [Config] of this package field by field
// (sandbox's config.go), and [Resolve] validates it into a [Resolved],
// from which alone rules are made. The engines (internal/linux,
// internal/darwin, internal/windows) take a *Resolved and return a [Plan];
// none of them sees the public types, and this package imports none of
// them.
//
// # What it touches
//
// Everything here is pure but [Resolve], which reads the host only through
// an [FS] (the host's, [OS], unless a test injects another): it resolves
// the Config's paths (symlinks, whether each is a directory) and walks
// them for planted symlinks. These are the caller's own paths, read before
// any sandboxed program runs; reads of places a program could have written
// go through internal/safefs, never through an FS of this package.
package spec
