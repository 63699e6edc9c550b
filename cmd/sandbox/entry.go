package main

import (
	"fmt"

	"github.com/openparallax/sandbox"
)

// The values of --entry: the entry point a plan is about.
const (
	entryWrap      = "wrap"      // WrapCommand, Run and sandbox run
	entryApplySelf = "applyself" // ApplySelf: a program confining itself
)

// entryScope maps --entry's value to the plan's Scope.
func entryScope(entry string) (string, error) {
	switch entry {
	case entryWrap:
		return sandbox.ScopeCommand, nil
	case entryApplySelf:
		return sandbox.ScopeApplySelf, nil
	}
	return "", fmt.Errorf("--entry %q: want wrap (WrapCommand, Run, sandbox run) or applyself (ApplySelf)", entry)
}

// entryTitle names the entry point of a scope for a heading.
func entryTitle(scope string) string {
	if scope == sandbox.ScopeApplySelf {
		return "ApplySelf (--entry applyself)"
	}
	return "WrapCommand, Run and sandbox run (--entry wrap)"
}
