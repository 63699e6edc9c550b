//go:build unix

package execgrant

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestHelperTool(t *testing.T) {
	for name, want := range map[string]string{
		"git": "git", "gcc": "gcc", "gcc-12": "gcc", "x86_64-linux-gnu-gcc-12": "gcc", "g++-12": "g++",
		"cc": "cc", "gitk": "", "git-shell": "", "gcc-ar": "", "python3": "", "x86_64-linux-gnu-gcc-ar-12": "",
	} {
		if got := helperTool(name); got != want {
			t.Errorf("helperTool(%q) = %q, want %q", name, got, want)
		}
	}
}

// TestExecExtras: an exec grant of a directory covers the executable
// targets of the symlinks in it that lead elsewhere, and nothing else.
// (The root package's TestExecExtrasPolicy checks the rules made of them.)
func TestExecExtras(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	bin, lib := filepath.Join(base, "bin"), filepath.Join(base, "lib")
	os.Mkdir(bin, 0o755)
	os.Mkdir(lib, 0o755)
	os.WriteFile(filepath.Join(lib, "tool"), []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(filepath.Join(lib, "data"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(bin, "own"), []byte("#!/bin/sh\n"), 0o755)
	os.Symlink("../lib/tool", filepath.Join(bin, "tool"))
	os.Symlink(filepath.Join(lib, "data"), filepath.Join(bin, "data"))
	os.Symlink("own", filepath.Join(bin, "alias"))
	os.Symlink(filepath.Join(base, "missing"), filepath.Join(bin, "dangling"))
	os.Symlink(lib, filepath.Join(bin, "dir"))

	sh, _ := filepath.EvalSymlinks("/bin/sh")
	got := Extras([]Grant{{Path: bin, IsDir: true}})
	want := []Extra{{Path: filepath.Join(lib, "tool"), Reason: "target of " + filepath.Join(bin, "tool"), Interps: []string{"/bin/sh"}}}
	if len(got) != 1 || got[0].Path != want[0].Path || got[0].Reason != want[0].Reason || len(got[0].Interps) == 0 || got[0].Interps[0] != sh {
		t.Errorf("extras %+v, want %+v", got, want)
	}
	// A target already covered by a grant is not repeated.
	if got := Extras([]Grant{{Path: bin, IsDir: true}, {Path: lib, IsDir: true}}); len(got) != 0 {
		t.Errorf("extras under a granted directory: %+v", got)
	}
}

// TestExecHelpersOfRealTools: on a machine with git and gcc, an exec grant
// of /usr/bin covers their helper directories.
func TestExecHelpersOfRealTools(t *testing.T) {
	for tool, dir := range map[string]string{"/usr/bin/git": "/usr/lib/git-core", "/usr/bin/gcc": "/usr/lib/gcc"} {
		if _, err := os.Stat(tool); err != nil {
			t.Logf("%s not installed: helper directory %s not checked", tool, dir)
			continue
		}
		if _, err := os.Stat(dir); err != nil {
			t.Logf("%s has no %s here (another layout)", tool, dir)
			continue
		}
		for _, granted := range []Grant{{Path: "/usr/bin", IsDir: true}, {Path: tool}} {
			extras := Extras([]Grant{granted})
			if !slices.ContainsFunc(extras, func(e Extra) bool { return e.Path == dir && e.IsDir }) {
				t.Errorf("exec grant %s: %s missing from %+v", granted.Path, dir, extras)
			}
		}
	}
}
