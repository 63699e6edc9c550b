package linux

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/openparallax/sandbox/internal/runtemp"
	"github.com/openparallax/sandbox/internal/spec"
)

// TestResolvConfDirSwept: the transparent path's generated resolv.conf
// lives in a directory named for its caller as a Run's temporary directory
// is (runtemp.Pattern, which names this process: runtemp's
// TestParseRunTemp), so that a later Run's sweep removes it when a killed
// caller left it.
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
	if prefix := strings.TrimSuffix(runtemp.Pattern(), "*"); !strings.HasPrefix(filepath.Base(dir), prefix) {
		t.Errorf("resolv.conf directory %s is not named %s…: a killed caller's would not be swept", dir, prefix)
	}
}
