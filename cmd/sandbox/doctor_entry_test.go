package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/openparallax/sandbox"
)

// doctor's text is the same twice on the same machine (issue 31, item 8):
// no ephemeral port, temporary directory, pid or random file name in it.
func TestDoctorStable(t *testing.T) {
	first, _, code1 := runCLI(t, "doctor")
	second, _, code2 := runCLI(t, "doctor")
	if code1 != code2 || first != second {
		t.Errorf("doctor printed different text (exit %d, then %d):\n%s\n---\n%s", code1, code2, first, second)
	}
	if sandbox.Probe().Active && !strings.Contains(first, "<workspace>") {
		t.Errorf("doctor does not name the temporary workspace as <workspace>:\n%s", first)
	}
}

// doctor lists a feature at most once per entry point, under a heading
// that says which (both by default; one with --entry), and --entry
// filters the JSON report the same way.
func TestDoctorEntryPoints(t *testing.T) {
	heading := regexp.MustCompile(`^(Capabilities|Of .* alone:)`)
	feature := regexp.MustCompile(`^  ([a-z_]+) +(enforced|NOT enforced) `)
	sections := func(out string) map[string][]string {
		got := map[string][]string{}
		var in string
		for _, l := range strings.Split(out, "\n") {
			switch {
			case heading.MatchString(l):
				in = l
			case l == "" || !strings.HasPrefix(l, " "):
				in = ""
			}
			if m := feature.FindStringSubmatch(l); m != nil && in != "" {
				got[in] = append(got[in], m[1])
			}
		}
		return got
	}
	for _, args := range [][]string{{"doctor"}, {"doctor", "--entry", "wrap"}, {"doctor", "--entry", "applyself"}} {
		out, _, _ := runCLI(t, args...)
		secs := sections(out)
		if len(secs) == 0 {
			t.Fatalf("%q: no capabilities:\n%s", args, out)
		}
		// What each entry point sees: the shared section plus its own.
		var shared []string
		for h, fs := range secs {
			if strings.HasPrefix(h, "Capabilities") {
				shared = fs
			}
		}
		for h, fs := range secs {
			if !strings.HasPrefix(h, "Capabilities") {
				fs = append(append([]string(nil), shared...), fs...)
			}
			seen := map[string]bool{}
			for _, f := range fs {
				if seen[f] {
					t.Errorf("%q: %s listed twice for %q:\n%s", args, f, h, out)
				}
				seen[f] = true
			}
		}
		if len(args) == 1 && sandbox.Probe().Active && len(secs) < 2 {
			t.Errorf("doctor without --entry shows one entry point only:\n%s", out)
		}
		if len(args) == 3 && len(secs) != 1 {
			t.Errorf("%q shows %d sections, want 1:\n%s", args, len(secs), out)
		}
	}
	out, _, _ := runCLI(t, "doctor", "--json", "--entry", "applyself")
	var rep doctorReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	for _, f := range rep.Features {
		if f.Scope == sandbox.ScopeCommand {
			t.Errorf("doctor --entry applyself --json lists WrapCommand's %s", f.Feature)
		}
	}
	if _, stderr, code := runCLI(t, "doctor", "--entry", "both"); code != exitUsage || !strings.Contains(stderr, `--entry "both"`) {
		t.Errorf("doctor --entry both: exit %d, %q", code, stderr)
	}
}
