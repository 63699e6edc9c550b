package linux

// The Linux policy as data, on every OS: which rules and features a Config
// becomes for each Landlock ABI. Enforcement itself is tested in
// sandbox_linux_test.go.

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"github.com/openparallax/sandbox/internal/execgrant"
	"github.com/openparallax/sandbox/internal/spec"
)

func testResolved(t *testing.T, cfg Config) *spec.Resolved {
	t.Helper()
	rc, err := resolve(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rc
}

func feature(p spec.Plan, name string) (spec.Enforcement, bool) {
	for _, f := range p.Features {
		if f.Feature == name {
			return f, true
		}
	}
	return spec.Enforcement{}, false
}

func ruleFor(p linuxPolicy, path string) (landlock.AccessFSSet, bool) {
	for _, r := range p.Paths {
		if r.Path == path {
			return r.Access, true
		}
	}
	return 0, false
}

func TestLinuxPolicyRightsPerABI(t *testing.T) {
	dir := t.TempDir()
	ws, ro := filepath.Join(dir, "ws"), filepath.Join(dir, "ro")
	file := filepath.Join(dir, "file")
	os.Mkdir(ws, 0o700)
	os.Mkdir(ro, 0o700)
	os.WriteFile(file, nil, 0o600)
	ws, _ = filepath.EvalSymlinks(ws)
	ro, _ = filepath.EvalSymlinks(ro)
	file, _ = filepath.EvalSymlinks(file)
	rc := testResolved(t, Config{AllowedWritePaths: []string{ws, file}, AllowedReadPaths: []string{ro}})

	for abi := 0; abi <= 11; abi++ {
		p := buildLinuxPolicy(rc, abi, "/proc/self", nil)
		if p.HandledFS != landlockABIConfig(abi).HandledAccessFS {
			t.Errorf("ABI %d: handled FS %v, want everything the ABI knows", abi, p.HandledFS)
		}
		for _, r := range p.Paths {
			if r.Access&^p.HandledFS != 0 {
				t.Errorf("ABI %d: rule %s grants %v beyond the handled set", abi, r.Path, r.Access&^p.HandledFS)
			}
		}
		if abi == 0 {
			if len(p.Paths) != 0 {
				t.Errorf("ABI 0 makes rules: %v", p.Paths)
			}
			continue
		}
		wsAcc, ok := ruleFor(p, ws)
		if !ok {
			t.Fatalf("ABI %d: no rule for the workspace", abi)
		}
		if wsAcc&ll.AccessFSExecute != 0 || wsAcc&ll.AccessFSMakeChar != 0 || wsAcc&ll.AccessFSMakeBlock != 0 {
			t.Errorf("ABI %d: workspace grants execute or device nodes: %v", abi, wsAcc)
		}
		if want := llWriteDir & p.HandledFS; wsAcc != want {
			t.Errorf("ABI %d: workspace rights %v, want %v", abi, wsAcc, want)
		}
		if acc, _ := ruleFor(p, ro); acc != llReadDir {
			t.Errorf("ABI %d: read-only dir rights %v, want %v", abi, acc, llReadDir)
		}
		if acc, _ := ruleFor(p, file); acc&^(llWriteFile) != 0 || acc&ll.AccessFSWriteFile == 0 {
			t.Errorf("ABI %d: a write file gets directory-only rights or no write: %v", abi, acc)
		}
		if (p.HandledNet != 0) != (abi >= 4) {
			t.Errorf("ABI %d: handled net %v", abi, p.HandledNet)
		}
		if (p.Scoped != 0) != (abi >= 6) {
			t.Errorf("ABI %d: scoped %v", abi, p.Scoped)
		}
	}
}

// TestExecInterpretersPolicy: the ELF loader of an exec-granted program is
// made executable. (execgrant's TestExecInterpreters checks the chain.)
func TestExecInterpretersPolicy(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("ELF and #! interpreters are Linux paths; Windows has neither")
	}
	if _, err := os.Stat("/bin/true"); err != nil {
		t.Skip("no /bin/true here")
	}
	interps, _ := execgrant.Chain("/bin/true", nil)
	if len(interps) == 0 {
		t.Skip("/bin/true is statically linked here: it has no ELF interpreter to find")
	}
	rc := testResolved(t, Config{AllowedExecPaths: []string{"/bin/true"}})
	p := buildLinuxPolicy(rc, 7, "/proc/self", nil)
	if acc, ok := ruleFor(p, interps[0]); !ok || acc&ll.AccessFSExecute == 0 {
		t.Errorf("loader %s not executable: %v", interps[0], p.Paths)
	}
	if !p.Seccomp.AllowExec {
		t.Error("exec allowlist given but seccomp denies execve")
	}
}

// TestPolicyInChild: built for WrapCommand's trampoline, the policy leaves
// every default path to the child, with rights for a directory (which
// include READ_DIR) and for anything else (which never do), and no default
// path is reported skipped: the child decides.
func TestPolicyInChild(t *testing.T) {
	rc := testResolved(t, Config{})
	for abi := 1; abi <= 7; abi++ {
		p := buildLinuxPolicy(rc, abi, inChild, nil)
		if len(p.Skipped) != 0 {
			t.Errorf("ABI %d: skipped %v", abi, p.Skipped)
		}
		var paths []string
		for _, r := range p.System {
			paths = append(paths, r.Path)
			if r.Dir&ll.AccessFSReadDir == 0 || r.File&ll.AccessFSReadDir != 0 || r.File == 0 {
				t.Errorf("ABI %d: %s: dir %v, file %v", abi, r.Path, r.Dir, r.File)
			}
			if (r.Dir|r.File)&^p.HandledFS != 0 {
				t.Errorf("ABI %d: %s grants beyond the handled set", abi, r.Path)
			}
		}
		var want []string
		for _, sp := range SystemPaths {
			want = append(want, sp.Path)
		}
		if !slices.Equal(paths, want) {
			t.Errorf("ABI %d: system rules %v, want %v", abi, paths, want)
		}
	}
	// Directory rights always include READ_DIR and file rights never: the
	// trampoline's payload tells them apart by it.
	for _, acc := range []landlock.AccessFSSet{llReadDir, llWriteDir, llExecDir} {
		if acc&ll.AccessFSReadDir == 0 {
			t.Errorf("directory rights %v without READ_DIR", acc)
		}
	}
	for _, acc := range []landlock.AccessFSSet{llRead, llWriteFile, llExecFile, llDevice} {
		if acc&ll.AccessFSReadDir != 0 {
			t.Errorf("file rights %v with READ_DIR", acc)
		}
	}
}
