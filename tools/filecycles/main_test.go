package main

import (
	"slices"
	"testing"
)

// TestSCC: files that reach each other form one component; a file on a
// one-way path is a component of its own.
func TestSCC(t *testing.T) {
	g := map[string]map[string]bool{
		"a": {"b": true}, "b": {"c": true}, "c": {"a": true, "d": true},
		"d": {"e": true}, "e": {}, "f": {"f": true},
	}
	var sizes []int
	var big []string
	for _, c := range scc(g) {
		sizes = append(sizes, len(c))
		if len(c) > 1 {
			big = slices.Sorted(slices.Values(c))
		}
	}
	slices.Sort(sizes)
	if !slices.Equal(sizes, []int{1, 1, 1, 3}) || !slices.Equal(big, []string{"a", "b", "c"}) {
		t.Errorf("components of sizes %v, the cycle %v; want 1,1,1,3 and [a b c]", sizes, big)
	}
}
