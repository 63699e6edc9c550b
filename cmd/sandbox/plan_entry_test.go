package main

import (
	"errors"
	"os"
	"path/filepath"
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

// plan and verify take --go-cache's grant as run adds it, and make
// nothing: a DIR that does not exist yet is left out and said, and is
// still absent afterwards; one that exists is in the plan. ApplySelf's
// plan refuses it, as it refuses --env.
func TestPlanGoCache(t *testing.T) {
	linuxSandbox(t)
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	cache := filepath.Join(dir, "go-cache")
	plan := func(args ...string) (string, string, int) {
		var stdout, stderr strings.Builder
		code := run(append([]string{"plan", "--json", "--go-cache", cache}, args...), nil, &stdout, &stderr)
		return stdout.String(), stderr.String(), code
	}
	absent := func(what string) {
		t.Helper()
		if _, err := os.Lstat(cache); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s made --go-cache's directory (%v)", what, err)
		}
	}
	out, errOut, code := plan()
	if code != exitOK || strings.Contains(out, cache) || !strings.Contains(errOut, "does not exist yet") {
		t.Errorf("plan --go-cache ABSENT: exit %d, the plan names it: %v, stderr %q; want it left out, and said", code, strings.Contains(out, cache), errOut)
	}
	absent("plan")
	_, errOut, _ = runCLI(t, "verify", "--go-cache", cache)
	if !strings.Contains(errOut, "sandbox verify: note: --go-cache "+cache+" does not exist yet") {
		t.Errorf("verify --go-cache ABSENT: stderr %q, want the note", errOut)
	}
	absent("verify")

	if err := os.Mkdir(cache, 0o700); err != nil {
		t.Fatal(err)
	}
	out, errOut, code = plan()
	if code != exitOK || !strings.Contains(out, `"`+cache+`"`) || errOut != "" {
		t.Errorf("plan --go-cache DIR: exit %d, the plan names it: %v, stderr %q; want its grant in the plan", code, strings.Contains(out, cache), errOut)
	}
	if _, errOut, code = plan("--entry", "applyself"); code != exitUsage || !strings.Contains(errOut, "--go-cache") {
		t.Errorf("plan --entry applyself --go-cache: exit %d, %q; want a usage error naming --go-cache", code, errOut)
	}
}
