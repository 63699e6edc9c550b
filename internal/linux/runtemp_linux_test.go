package linux

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openparallax/sandbox/internal/spec"
)

func TestParseRunTemp(t *testing.T) {
	if o, ok := parseRunTemp("sandbox-run-4026531836-123-456-789"); !ok || o.PIDNS != 4026531836 || o.PID != 123 || o.Start != 456 {
		t.Errorf("a named directory: %+v, %v", o, ok)
	}
	for _, name := range []string{"sandbox-run-123456", "sandbox-run-1-2-3", "sandbox-run-1-0-3-4", "sandbox-run-a-2-3-4",
		"sandbox-run-1-2-3-", "other-1-2-3-4", "sandbox-run-1-2-3-4-5"} {
		if o, ok := parseRunTemp(name); ok {
			t.Errorf("%s parsed as %+v", name, o)
		}
	}
	if p := runTempPattern(); !strings.HasPrefix(p, "sandbox-run-") || !strings.HasSuffix(p, "-*") {
		t.Errorf("pattern %q", p)
	}
	if o, ok := parseRunTemp(strings.Replace(runTempPattern(), "*", "42", 1)); !ok {
		t.Errorf("this process's own pattern %q does not parse back", runTempPattern())
	} else if self, _ := runOwner(); o != self {
		t.Errorf("this process's own pattern names %+v, not %+v", o, self)
	}
}

// TestResolvConfDirSwept: the transparent path's generated resolv.conf
// lives in a directory named for its caller as a Run's temporary directory
// is, so that the next Run's sweep removes it when a killed caller left it.
func TestResolvConfDirSwept(t *testing.T) {
	rc := &spec.Resolved{}
	dir, err := withResolvConf(rc)
	if err != nil {
		t.Fatal(err)
	}
	if dir == "" {
		t.Skip("this host has no regular /etc/resolv.conf: nothing is generated")
	}
	defer os.RemoveAll(dir)
	o, ok := parseRunTemp(filepath.Base(dir))
	if self, _ := runOwner(); !ok || o != self {
		t.Errorf("resolv.conf directory %s: parsed %+v %v, want this process %+v (swept once this process is dead)", dir, o, ok, self)
	}
}
