//go:build unix

package execgrant

import (
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
)

// scanExecDirByWalk is the straightforward scan that scanExecDir
// replaces, kept as its reference: filepath.EvalSymlinks and os.Stat of
// every symlink's target, and the target's whole interpreter chain.
func scanExecDirByWalk(dir string) []Extra {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []Extra
	seen := map[string]bool{}
	for _, ent := range entries {
		name := ent.Name()
		path := filepath.Join(dir, name)
		if tool := helperTool(name); tool != "" {
			for _, d := range helperDirs(tool, path) {
				if seen[d] {
					continue
				}
				seen[d] = true
				if d, ok := helperDir(d); ok {
					out = append(out, Extra{Path: d, IsDir: true, Reason: "helper programs of " + path})
				}
			}
		}
		if ent.Type()&fs.ModeSymlink == 0 {
			continue
		}
		target, err := filepath.EvalSymlinks(path)
		if err != nil || seen[target] || strings.HasPrefix(target, dir+"/") {
			continue
		}
		fi, err := os.Stat(target)
		if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
			continue
		}
		seen[target] = true
		interps, loader := interpreterChain(target, 0, nil)
		v, _ := statVersion(fi)
		out = append(out, Extra{Path: target, Reason: "target of " + path, Interps: interps, Loader: loader, Dev: v.dev, Ino: v.ino})
	}
	return out
}

func sameScan(t *testing.T, dir string) []Extra {
	t.Helper()
	got, want := scanExecDir(dir), scanExecDirByWalk(dir)
	// The scan that notes what its answer depends on (for the cache)
	// walks more (interpreters, helper directories) and answers the same.
	if noted, _ := scanExecDirNoting(dir); !reflect.DeepEqual(noted, got) {
		t.Errorf("scanExecDirNoting(%s) differs from scanExecDir:\n%+v\n%+v", dir, noted, got)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("scanExecDir(%s) differs from the walk:", dir)
		for i := 0; i < max(len(got), len(want)); i++ {
			var g, w Extra
			if i < len(got) {
				g = got[i]
			}
			if i < len(want) {
				w = want[i]
			}
			if !reflect.DeepEqual(g, w) {
				t.Errorf("  [%d] got %+v\n      want %+v", i, g, w)
			}
		}
	}
	return got
}

// TestScanExecDirAgreesWithWalk: the scan answers exactly as the walk it
// replaces, on the system's own program directories and on crafted links:
// relative and absolute, chains of links, links through linked
// directories and "..", dangling links, loops, links to directories, to
// files without an execute bit, to FIFOs, through a non-directory, back
// into the directory, two links to one file, scripts naming scripts, and
// names with helper directories.
func TestScanExecDirAgreesWithWalk(t *testing.T) {
	for _, d := range []string{"/usr/bin", "/bin", "/usr/sbin", "/usr/local/bin"} {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			if n := len(sameScan(t, r)); n == 0 {
				t.Logf("%s: no extras here", r)
			}
		}
	}
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	bin, lib, alt := filepath.Join(base, "bin"), filepath.Join(base, "lib"), filepath.Join(base, "alt")
	for _, d := range []string{bin, lib, alt, filepath.Join(lib, "sub")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		"lib/tool": "#!/bin/sh\n", "lib/data": "x", "lib/sub/deep": "#!" + filepath.Join(lib, "tool") + "\n",
		"lib/deeper": "#!" + filepath.Join(lib, "sub/deep") + " -x\n", "lib/rel": "#!sh\n", "lib/bad": "#!/nonexistent\n",
		"bin/own": "#!/bin/sh\n",
	}
	for name, content := range files {
		mode := os.FileMode(0o755)
		if name == "lib/data" {
			mode = 0o644
		}
		if err := os.WriteFile(filepath.Join(base, name), []byte(content), mode); err != nil {
			t.Fatal(err)
		}
	}
	if tr, err := os.ReadFile("/bin/true"); err == nil {
		os.WriteFile(filepath.Join(lib, "elf"), tr, 0o755)
	}
	syscall.Mkfifo(filepath.Join(lib, "fifo"), 0o755)
	links := map[string]string{
		"bin/tool": "../lib/tool", "bin/tool2": filepath.Join(lib, "tool"), "bin/data": filepath.Join(lib, "data"),
		"bin/alias": "own", "bin/alias2": filepath.Join(bin, "own"), "bin/dangling": filepath.Join(base, "missing"),
		"bin/dir": lib, "bin/alt": "../alt/tool", "alt/tool": "../lib/sub/../deeper", "bin/deep": "../alt/sub/deep",
		"alt/sub": "../lib/sub", "bin/loop": "loop2", "bin/loop2": "loop", "bin/notdir": "../lib/data/x",
		"bin/fifo": "../lib/fifo", "bin/rel": "../lib/rel", "bin/bad": "../lib/bad", "bin/elf": "../lib/elf",
		"bin/dots": "./../lib/./sub/../tool", "bin/root": "/../" + strings.TrimPrefix(lib, "/") + "/elf",
		"bin/git": "../lib/tool", "bin/gcc-12": "../lib/elf", "bin/empty": "",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(base, name)); err != nil && target != "" {
			t.Fatal(err)
		}
	}
	got := sameScan(t, bin)
	if len(got) < 5 {
		t.Errorf("crafted directory: only %d extras: %+v", len(got), got)
	}
}

// BenchmarkScanExecDir measures a first scan of /usr/bin (no cache).
func BenchmarkScanExecDir(b *testing.B) {
	for _, c := range []struct {
		name string
		scan func(string) []Extra
	}{{"scan", scanExecDir}, {"walk", scanExecDirByWalk}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				clear(interpreters.m)
				c.scan("/usr/bin")
			}
		})
	}
}
