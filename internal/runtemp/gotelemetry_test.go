package runtemp

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestGoTelemetryOff: the private home holds Go's telemetry mode "off" at
// the path the go command reads (os.UserConfigDir()/go/telemetry/mode with
// HOME and no XDG_CONFIG_HOME); the quick removal takes it away; and Go's
// own UserConfigDir, pointed at the home, names the same directory.
func TestGoTelemetryOff(t *testing.T) {
	d, err := New([]string{"PATH=/bin"})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Remove()
	rel := goTelemetryMode()
	if rel == "" {
		t.Skip("Windows: Go's config directory is %AppData%, not under HOME: nothing written")
	}
	home := filepath.Join(d.Path(), "home")
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	cfg, err := os.UserConfigDir()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(cfg, "go", "telemetry", "mode"); filepath.Join(home, rel) != want {
		t.Errorf("mode file %s, but Go reads %s", filepath.Join(home, rel), want)
	}
	if b, err := os.ReadFile(filepath.Join(home, rel)); err != nil || string(b) != "off\n" {
		t.Errorf("mode file: %q, %v", b, err)
	}
	if err := d.Remove(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(d.Path()); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s left after Remove: %v", d.Path(), err)
	}
}
