package darwin

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/openparallax/sandbox/internal/spec"
)

// writeMachO writes a minimal little-endian 64-bit Mach-O file (arm64) of
// filetype ft (2 an executable, 6 a dylib) whose load commands import libs
// (LC_LOAD_DYLIB) and add rpaths (LC_RPATH): what debug/macho reads, and
// all that libraryRules looks at.
func writeMachO(t *testing.T, path string, ft uint32, libs, rpaths []string) {
	t.Helper()
	var cmds bytes.Buffer
	le := binary.LittleEndian
	str := func(fixed []uint32, s string) {
		body := append([]byte(s), 0)
		size := 4*len(fixed) + len(body)
		size = (size + 7) &^ 7
		for _, v := range fixed {
			if v == 0xffffffff {
				v = uint32(size)
			}
			binary.Write(&cmds, le, v)
		}
		cmds.Write(body)
		cmds.Write(make([]byte, size-4*len(fixed)-len(body)))
	}
	n := 0
	for _, l := range libs {
		str([]uint32{0xc, 0xffffffff, 24, 2, 0x10000, 0x10000}, l) // LC_LOAD_DYLIB: name at 24
		n++
	}
	for _, r := range rpaths {
		str([]uint32{0x8000001c, 0xffffffff, 12}, r) // LC_RPATH: path at 12
		n++
	}
	var f bytes.Buffer
	for _, v := range []uint32{0xfeedfacf, 0x0100000c, 0, ft, uint32(n), uint32(cmds.Len()), 0, 0} {
		binary.Write(&f, le, v)
	}
	f.Write(cmds.Bytes())
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, f.Bytes(), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestDarwinLibraryRules: a program granted as a file brings the
// libraries it loads from outside the system (@rpath, @executable_path,
// @loader_path resolved, followed through their own imports), each read
// and mappable as itself, never executable; one in a write path is
// refused and reported; one an exec directory covers adds nothing.
func TestDarwinLibraryRules(t *testing.T) {
	dir := safeDir(t)
	app, ws := filepath.Join(dir, "app"), filepath.Join(dir, "ws")
	tool := filepath.Join(app, "bin", "tool")
	evil := filepath.Join(ws, "libevil.dylib")
	writeMachO(t, tool, 2, []string{"@rpath/libfoo.dylib", "/usr/lib/libSystem.B.dylib", "@executable_path/../lib/libbar.dylib",
		"@rpath/missing.dylib", evil}, []string{"@executable_path/../lib"})
	writeMachO(t, filepath.Join(app, "lib", "libfoo.dylib"), 6, []string{"@loader_path/libbaz.dylib"}, nil)
	writeMachO(t, filepath.Join(app, "lib", "libbar.dylib"), 6, nil, nil)
	writeMachO(t, filepath.Join(app, "lib", "libbaz.dylib"), 6, nil, nil)
	writeMachO(t, evil, 6, nil, nil)

	rc := &spec.Resolved{
		Exec:  []spec.Path{{Given: tool, Resolved: tool}},
		Write: []spec.Path{{Given: ws, Resolved: ws, IsDir: true}},
	}
	libs := func(rc *spec.Resolved) []string {
		var out []string
		for _, r := range pathRules(rc) {
			if r.Access == accessLibrary {
				out = append(out, strings.TrimPrefix(r.Resolved, app+"/"))
			}
		}
		slices.Sort(out)
		return out
	}
	want := []string{"lib/libbar.dylib", "lib/libbaz.dylib", "lib/libfoo.dylib"}
	if got := libs(rc); !slices.Equal(got, want) {
		t.Errorf("library rules %q, want %q (the write path's library refused, the system's and the missing one left out)", got, want)
	}
	prof, err := profile(rc, pathRules(rc))
	if err != nil {
		t.Fatal(err)
	}
	for _, rule := range []string{`(allow file-read* file-map-executable (literal (param "L0")))`, `(allow file-read* file-map-executable (literal (param "L2")))`} {
		if !strings.Contains(prof.Text, rule) {
			t.Errorf("profile lacks %s", rule)
		}
	}
	if strings.Contains(prof.Text, `(allow process-exec* (literal (param "L`) {
		t.Error("a library is executable")
	}
	if d := features(Plan(rc, true), spec.FeatureExec)[0].Detail; !strings.Contains(d, "library not granted, so its program fails to load it: "+evil) {
		t.Errorf("the plan does not report the library in the write path: %s", d)
	}

	rc.Config.AllowExecWritePaths = true
	if d := features(Plan(rc, true), spec.FeatureExec)[0].Detail; strings.Contains(d, evil) {
		t.Errorf("allow_exec_write_paths: the write path's library is still reported refused: %s", d)
	}
	rc.Config.AllowExecWritePaths = false

	rc.Exec = []spec.Path{{Given: app, Resolved: app, IsDir: true}}
	if got := libs(rc); len(got) != 0 {
		t.Errorf("an exec directory: library rules %q, want none (the directory covers its libraries; its programs are not read)", got)
	}
	if notMachO := libs(&spec.Resolved{Exec: []spec.Path{{Given: "/bin/sh", Resolved: "/bin/sh"}}}); len(notMachO) != 0 {
		t.Errorf("a file that is not Mach-O: library rules %q", notMachO)
	}
}
