//go:build linux

package linux

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/openparallax/sandbox/internal/mountns"
)

func TestRootIsRootfs(t *testing.T) {
	initramfs := "1 1 0:2 / / rw - rootfs rootfs rw\n22 1 0:21 / /proc rw,relatime - proc proc rw\n"
	disk := "25 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n26 25 0:21 / /proc rw - proc proc rw\n"
	stacked := "1 1 0:2 / / rw - rootfs rootfs rw\n30 1 8:1 / / rw - ext4 /dev/vda rw\n"
	for mi, want := range map[string]bool{initramfs: true, disk: false, stacked: false, "": false} {
		if got := rootIsRootfs(mi); got != want {
			t.Errorf("rootIsRootfs(%q) = %v, want %v", mi, got, want)
		}
	}
}

// linksOn records each link met resolving a path, as the kernel follows
// them: a link in a directory a link led to, and a relative and an
// absolute target.
func TestLinksOn(t *testing.T) {
	d, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(d, "usr", "bin"), 0o755)
	os.WriteFile(filepath.Join(d, "usr", "bin", "dash"), nil, 0o755)
	os.Symlink("usr/bin", filepath.Join(d, "bin"))
	os.Symlink("dash", filepath.Join(d, "usr", "bin", "sh"))
	os.Symlink(filepath.Join(d, "bin", "sh"), filepath.Join(d, "abs"))
	got := linksOn(filepath.Join(d, "abs"), map[string]bool{}, nil)
	want := []mountns.Link{{Path: filepath.Join(d, "abs"), Target: filepath.Join(d, "bin", "sh")},
		{Path: filepath.Join(d, "bin"), Target: "usr/bin"}, {Path: filepath.Join(d, "usr", "bin", "sh"), Target: "dash"}}
	if !slices.Equal(got, want) {
		t.Errorf("linksOn = %v, want %v", got, want)
	}
}
