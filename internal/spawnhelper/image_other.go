//go:build !linux || !(amd64 || arm64)

package spawnhelper

// No helper for this platform: the Go trampoline is the child half.
var image []byte
