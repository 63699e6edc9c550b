package main

import "testing"

func TestUsesEndowments(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"--endowments", "f", "--", "echo"}, true},
		{[]string{"-endowments=f", "--", "echo"}, true},
		{[]string{"--endowments=-"}, true},
		{[]string{"--ro", "/x", "--", "echo", "--endowments"}, false}, // the program's argument
		{[]string{"--ro", "/x"}, false},
		{[]string{"--endowmentsx", "f"}, false},
	} {
		if got := usesEndowments(c.args); got != c.want {
			t.Errorf("usesEndowments(%q) = %v, want %v", c.args, got, c.want)
		}
	}
}
