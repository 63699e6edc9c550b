package main

import (
	"strings"
	"testing"
)

// plan --describe speaks of the entry point asked (issue 31, item 8): by
// default of run (WrapCommand and Run), which names no ApplySelf-only gap
// such as "any host" for a host:port grant; with --entry applyself of
// ApplySelf, which does.
func TestPlanDescribeEntry(t *testing.T) {
	linuxSandbox(t)
	describe := func(args ...string) string {
		var stdout, stderr strings.Builder
		if code := run(append([]string{"plan", "--connect", "example.com:443", "--describe"}, args...), nil, &stdout, &stderr); code != exitOK {
			t.Fatalf("plan --describe %q: exit %d: %s", args, code, stderr.String())
		}
		return stdout.String()
	}
	for _, c := range []struct {
		args   []string
		gap    bool
		prefix string
	}{{nil, false, "WrapCommand/Run"}, {[]string{"--entry", "wrap"}, false, "WrapCommand/Run"}, {[]string{"--entry", "applyself"}, true, "ApplySelf"}} {
		d := describe(c.args...)
		if strings.Contains(d, "- tcp_connect_host: ApplySelf:") != c.gap {
			t.Errorf("plan --describe %q lists ApplySelf's host gap: %v, want %v:\n%s", c.args, !c.gap, c.gap, d)
		}
		other := "ApplySelf:"
		if c.prefix == "ApplySelf" {
			other = "WrapCommand/Run:"
		}
		if strings.Contains(d, other) {
			t.Errorf("plan --describe %q speaks of the other entry point (%s):\n%s", c.args, other, d)
		}
	}
}
