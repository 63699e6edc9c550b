package safefs

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestSplit(t *testing.T) {
	for _, c := range []struct {
		rel  string
		want string
		err  bool
	}{
		{"", "", false},
		{".", "", false},
		{"a", "a", false},
		{"a/./b//c/", "a|b|c", false},
		{"/etc/passwd", "", true},
		{"a/../b", "", true},
		{"..", "", true},
		{"a\x00b", "", true},
	} {
		cs, err := split(c.rel)
		if (err != nil) != c.err || (err == nil && strings.Join(cs, "|") != c.want) {
			t.Errorf("split(%q) = %q, %v; want %q, error %v", c.rel, cs, err, c.want, c.err)
		}
		if err != nil && !errors.Is(err, ErrPath) {
			t.Errorf("split(%q): %v is not ErrPath", c.rel, err)
		}
	}
	if _, _, err := splitLast("."); !errors.Is(err, ErrPath) {
		t.Errorf("splitLast(\".\") = %v, want ErrPath: it names no entry", err)
	}
}

func TestReadBounded(t *testing.T) {
	if b, err := readBounded(strings.NewReader("abc"), 3, 3); err != nil || string(b) != "abc" {
		t.Errorf("3 bytes with a bound of 3: %q, %v", b, err)
	}
	// A file that grows past the bound after its size was taken.
	if _, err := readBounded(strings.NewReader("abcd"), 0, 3); !errors.Is(err, ErrTooLarge) {
		t.Errorf("4 bytes with a bound of 3 (size said 0): %v, want ErrTooLarge", err)
	}
	if _, err := readBounded(strings.NewReader(""), 10, 3); !errors.Is(err, ErrTooLarge) {
		t.Errorf("size 10 with a bound of 3: %v, want ErrTooLarge", err)
	}
}

// within fails t if f does not return within d: a hang is what these tests
// look for, and must be a failure, not the test binary's timeout.
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not return within %s", what, d)
	}
}
