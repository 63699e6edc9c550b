//go:build !linux

package sandbox

// currentCreds is only consulted for Linux plans, which other platforms
// build in tests as data: there is no Linux caller to ask.
func currentCreds() selfCreds { return selfCreds{} }
