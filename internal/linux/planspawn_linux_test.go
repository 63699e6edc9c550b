package linux

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/openparallax/sandbox/internal/spawnhelper"
	"github.com/openparallax/sandbox/internal/spec"
	"github.com/openparallax/sandbox/internal/trampoline"
)

// TestPlanSpawnIsWhatRuns: what WrapCommand hands the child (the payload
// in the command's environment, its argv, path and inherited files) is
// PlanSpawn's spawn for the same Config, target and host, the exec nonce
// aside (drawn per spawn: the plan is made again with the one the command
// got); and the command runs.
func TestPlanSpawnIsWhatRuns(t *testing.T) {
	if k := kernel(); k.abi < 1 || !k.seccomp {
		t.Skipf("sandbox unavailable here: %s", k.abiReason)
	}
	prog := "/bin/true"
	if _, err := os.Stat(prog); err != nil {
		t.Skipf("%s not installed (Debian package coreutils): %v", prog, err)
	}
	// Not in /tmp, which the mount layer makes private.
	base, err := os.MkdirTemp("/var/tmp", "sandbox-test-")
	if err != nil {
		t.Skipf("no /var/tmp to work in: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	ws := filepath.Join(base, "ws")
	if err := os.MkdirAll(filepath.Join(ws, "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfgs := map[string]spec.Config{
		"minimal":    {},
		"workspace":  {AllowedReadPaths: []string{"/usr"}, AllowedWritePaths: []string{ws}, AllowProcessSpawn: true},
		"mountlayer": {AllowedWritePaths: []string{ws}, DenyWritePaths: []string{filepath.Join(ws, "keep")}},
		"limits":     {Limits: spec.Limits{FileSizeBytes: 1 << 20, OpenFiles: 512}},
	}
	// Through both child halves: the helper where it works, and the Go
	// trampoline.
	for _, goTrampoline := range []bool{false, true} {
		for name, cfg := range cfgs {
			t.Run(fmt.Sprintf("%s/go-trampoline=%v", name, goTrampoline), func(t *testing.T) {
				defer func(old bool) { forceGoTrampoline = old }(forceGoTrampoline)
				forceGoTrampoline = goTrampoline
				planSpawnRuns(t, prog, cfg)
			})
		}
	}
}

// planSpawnRuns wraps prog under cfg and checks it against PlanSpawn.
func planSpawnRuns(t *testing.T, prog string, cfg spec.Config) {
	want := plannedSpawn(t, exec.Command(prog, "x"), cfg)
	cmd := exec.Command(prog, "x")
	if _, err := WrapCommand(cmd, cfg); err != nil {
		t.Fatal(err)
	}
	got, err := trampoline.FromEnviron(cmd.Env)
	if err != nil {
		t.Fatal(err)
	}
	s := want(got.ExecNonce)
	if !slices.Equal(cmd.Env, s.Payload.Environ()) {
		t.Errorf("the command's payload is not PlanSpawn's:\n got %+v\nwant %+v", *got, s.Payload)
	}
	path := selfExe
	if s.HelperFD >= 0 {
		path = spawnhelper.Path(s.HelperFD)
	}
	if cmd.Path != path || !slices.Equal(cmd.Args, s.Args) || len(cmd.ExtraFiles) != len(s.Files) {
		t.Errorf("the command is %s %q with %d files; PlanSpawn's is %s %q with %v", cmd.Path, cmd.Args, len(cmd.ExtraFiles), path, s.Args, s.Files)
	}
	if a := cmd.SysProcAttr; s.Namespaces != (a != nil && a.Cloneflags != 0) {
		t.Errorf("the command's SysProcAttr is %+v; PlanSpawn's namespaces: %v", a, s.Namespaces)
	}
	t.Logf("namespaces %v, %d mounts, %d rules, %d rlimits, files %v", s.Namespaces, len(s.Payload.Mounts), len(s.Payload.Rules), len(s.Payload.Rlimits), s.Files)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("the wrapped %s: %v: %s", prog, err, out)
	}
}

// plannedSpawn gathers the host's facts for cmd and cfg as WrapCommand does,
// and returns PlanSpawn's spawn for a given exec nonce.
func plannedSpawn(t *testing.T, cmd *exec.Cmd, cfg spec.Config) func(nonce [2]uint64) Spawn {
	t.Helper()
	rc, err := spec.Resolve(cfg)
	if err != nil {
		t.Fatal(err)
	}
	target, err := spawnTarget(cmd, wrapOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var w wrapHost
	host, err := w.gather(cmd, rc, target, wrapOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return func(nonce [2]uint64) Spawn {
		host.Nonce = nonce
		s, err := PlanSpawn(rc, target, host)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
}
