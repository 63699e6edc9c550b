//go:build unix

package linux

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"github.com/openparallax/sandbox/internal/spec"
)

// TestSystemPathsHoldNoSecrets: the default read set covers no file that
// holds credentials or other users' data, and is no parent of one.
func TestSystemPathsHoldNoSecrets(t *testing.T) {
	secrets := []string{"/etc/shadow", "/etc/gshadow", "/etc/ssh/ssh_host_ed25519_key", "/etc/ssl/private",
		"/etc/sudoers", "/root", "/home", "/proc/1", "/var/lib", "/tmp", "/run", "/etc/npmrc", "/etc/pip.conf",
		"/etc/passwd", "/etc/machine-id"}
	for _, sp := range SystemPaths {
		if sp.Reason == "" {
			t.Errorf("%s has no reason", sp.Path)
		}
		for _, s := range secrets {
			if s == sp.Path || strings.HasPrefix(s, strings.TrimSuffix(sp.Path, "/")+"/") {
				t.Errorf("SystemPaths entry %s covers %s", sp.Path, s)
			}
		}
	}
}

// TestExecExtrasPolicy: the executable targets of the symlinks in an
// exec-granted directory become rules, with their reason, unless inside a
// write path. (execgrant's TestExecExtras checks what they are.)
func TestExecExtrasPolicy(t *testing.T) {
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

	ws := filepath.Join(base, "ws")
	os.Mkdir(ws, 0o755)
	rc := testResolved(t, Config{AllowedExecPaths: []string{bin}, AllowedWritePaths: []string{ws}, AllowExecWritePaths: true})
	p := buildLinuxPolicy(rc, 7, "/proc/self", nil)
	if acc, ok := ruleFor(p, filepath.Join(lib, "tool")); !ok || acc&ll.AccessFSExecute == 0 {
		t.Errorf("symlink target: rule %v %v, want execute", acc, ok)
	}
	if acc, _ := ruleFor(p, ws); acc&ll.AccessFSExecute == 0 || acc&ll.AccessFSMakeReg == 0 {
		t.Errorf("allow_exec_write_paths: write path rule %v, want write and execute", acc)
	}
	plan := withArtefacts(linuxPlan(rc, p, true, ""), p)
	if !slices.ContainsFunc(plan.Paths, func(r spec.PathRule) bool {
		return r.Path == filepath.Join(lib, "tool") && strings.Contains(r.Source, "target of "+filepath.Join(bin, "tool"))
	}) {
		t.Errorf("PlanFor does not say why %s is executable: %+v", filepath.Join(lib, "tool"), plan.Paths)
	}
	if f, ok := feature(plan, spec.FeatureExecWrites); !ok || !f.Enforced {
		t.Errorf("exec_write_paths feature: %+v %v", f, ok)
	}

	// A target inside a write path is not granted: the program could
	// rewrite it and run what it wrote.
	rc = testResolved(t, Config{AllowedExecPaths: []string{bin}, AllowedWritePaths: []string{lib}})
	p = buildLinuxPolicy(rc, 7, "/proc/self", nil)
	if acc, ok := ruleFor(p, filepath.Join(lib, "tool")); ok {
		t.Errorf("symlink target inside a write path granted: %v", acc)
	}

	// Without the switch, a write path is not executable.
	rc = testResolved(t, Config{AllowedWritePaths: []string{base}})
	p = buildLinuxPolicy(rc, 7, "/proc/self", nil)
	if acc, _ := ruleFor(p, base); acc&ll.AccessFSExecute != 0 {
		t.Errorf("write path executable without allow_exec_write_paths: %v", acc)
	}
	if p.Seccomp.AllowExec {
		t.Error("execve allowed with no exec grant")
	}
}

// TestSharedMemoryReported: /dev/shm is granted only on request, and then
// reported as not private.
func TestSharedMemoryReported(t *testing.T) {
	if _, err := os.Stat(sharedMemoryDir); err != nil {
		t.Skipf("no %s here: %v", sharedMemoryDir, err)
	}
	p := buildLinuxPolicy(testResolved(t, Config{}), 7, "/proc/self", nil)
	if _, ok := ruleFor(p, sharedMemoryDir); ok {
		t.Errorf("%s granted by default", sharedMemoryDir)
	}
	rc := testResolved(t, Config{AllowSharedMemory: true})
	p = buildLinuxPolicy(rc, 7, "/proc/self", nil)
	if acc, ok := ruleFor(p, sharedMemoryDir); !ok || acc&ll.AccessFSMakeReg == 0 {
		t.Errorf("allow_shared_memory: rule %v %v", acc, ok)
	}
	if f, ok := feature(linuxPlan(rc, p, true, ""), spec.FeatureSharedMem); !ok || f.Enforced {
		t.Errorf("shared_memory feature %+v %v: want reported as not enforced", f, ok)
	}
}
