//go:build linux

package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/openparallax/sandbox"
	"github.com/openparallax/sandbox/internal/spec"
)

// TestSpawnPlanWarnsAsPlanFor: the warnings `sandbox run` prints from the
// plan of the spawn Run is about to start (preflight's check, one plan per
// run) are the ones PlanFor's plan gave (the preflight before), entry for
// entry and in the same words, for Configs that warn and ones that do not.
func TestSpawnPlanWarnsAsPlanFor(t *testing.T) {
	linuxSandbox(t)
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	t.Chdir(ws)
	other, _ := filepath.EvalSymlinks(t.TempDir())
	for i := range 70 {
		g := filepath.Join(other, "many", "r"+strconv.Itoa(i), ".git")
		for _, d := range []string{"hooks", "objects", "refs"} {
			os.MkdirAll(filepath.Join(g, d), 0o755)
		}
		os.WriteFile(filepath.Join(g, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
		os.WriteFile(filepath.Join(g, "config"), nil, 0o644)
	}
	src := t.TempDir()
	qs := func(c sandbox.Config) sandbox.Config {
		c.AllowedWritePaths = append(c.AllowedWritePaths, ws)
		c.AllowedExecPaths = []string{"/usr/bin", "/bin"}
		c.AllowProcessSpawn = true
		return c
	}
	cases := map[string]sandbox.Config{
		"quick start":         qs(sandbox.Config{}),
		"deny absent":         qs(sandbox.Config{DenyWritePaths: []string{filepath.Join(ws, "absent")}, DenyReadPaths: []string{filepath.Join(ws, "absent2")}}),
		"70 repositories":     qs(sandbox.Config{AllowedWritePaths: []string{filepath.Join(other, "many")}}),
		"no git protection":   qs(sandbox.Config{NoGitProtection: true}),
		"mount, no target":    qs(sandbox.Config{Mounts: []sandbox.Mount{{Path: src, At: "/nonexistent-sandbox-target", Write: true}}}),
		"mount":               qs(sandbox.Config{Mounts: []sandbox.Mount{{Path: src, At: filepath.Join(other, "many"), Write: false}}}),
		"ipc, udp, unix, shm": qs(sandbox.Config{AllowSysVIPC: true, AllowUDP: true, AllowUnixSockets: true, AllowSharedMemory: true, AllowExecWritePaths: true}),
		"limits":              qs(sandbox.Config{Limits: sandbox.Limits{Processes: 50, MemoryBytes: 1 << 30, OpenFiles: 100, FileSizeBytes: 1 << 30}}),
		"no spawn":            {AllowedWritePaths: []string{ws}},
	}
	stop := errors.New("stop: planned only")
	for name, cfg := range cases {
		before, err := notInForce(cfg)
		if err != nil {
			t.Fatalf("%s: PlanFor: %v", name, err)
		}
		var after []sandbox.Enforcement
		called := false
		ctx := spec.WithPlanCheck(context.Background(), func(p spec.Plan) error {
			called = true
			after = askedNotEnforced(sandbox.Plan(p), cfg)
			return stop
		})
		mark := filepath.Join(ws, "ran")
		_, err = sandbox.Run(ctx, cfg, "/bin/sh", []string{"-c", ": > " + mark}, sandbox.RunOptions{})
		if !called || !errors.Is(err, stop) {
			t.Fatalf("%s: the check was not called (%v) or its error not returned: %v", name, called, err)
		}
		if _, err := os.Stat(mark); err == nil {
			t.Fatalf("%s: the program ran although the check refused", name)
		}
		if !slices.Equal(lines(before), lines(after)) {
			t.Errorf("%s: PlanFor warned\n%.2000q\nthe spawn's plan warns\n%.2000q", name, lines(before), lines(after))
		}
		t.Logf("%s: %d warnings %.60q", name, len(after), lines(after))
	}
}

func lines(es []sandbox.Enforcement) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Feature+" ("+e.Detail+")")
	}
	return out
}

// TestPreflightCheckRefusesMount: the check preflight hands Run refuses a
// plan whose mounts are not made (errRefused, which runCmd turns into
// exitRunFailed without a second message) and warns, lets the run go on,
// for an entry asked and not in force; with --strict or a terminal it
// hands none (Run's Strict refuses; the warnings come from PlanFor first).
func TestPreflightCheckRefusesMount(t *testing.T) {
	cfg := sandbox.Config{Mounts: []sandbox.Mount{{Path: "/src", At: "/x"}}, DenyWritePaths: []string{"/absent"}}
	var errOut bytes.Buffer
	check, _, ok := preflight(cfg, false, &errOut)
	if !ok || check == nil {
		t.Fatalf("no check for a run without a terminal: ok %v", ok)
	}
	warnOnly := spec.Plan{Features: []spec.Enforcement{{Feature: spec.FeatureDenyWrite, Detail: "/absent does not exist"}}}
	if err := check(warnOnly); err != nil || !strings.Contains(errOut.String(), "sandbox run: not in force: deny_write_paths (/absent does not exist)") {
		t.Errorf("a deny path not in force: %v, stderr %q", err, errOut.String())
	}
	errOut.Reset()
	refused := spec.Plan{Features: append(warnOnly.Features, spec.Enforcement{Feature: spec.FeatureMounts, Detail: "/x: no target"})}
	if err := check(refused); !errors.Is(err, errRefused) || !strings.Contains(errOut.String(), "sandbox run: refused: mounts (/x: no target)") {
		t.Errorf("a mount not made: %v, stderr %q", err, errOut.String())
	}
	cfg.Strict = true
	if check, _, ok := preflight(cfg, false, &errOut); check != nil || !ok {
		t.Errorf("--strict: a check (%v) or not ok (%v)", check != nil, ok)
	}
}

// BenchmarkPreflightPlanFor is the plan the preflight built before Run
// built its own, which `sandbox run` no longer makes on Linux (the
// warnings come from the spawn's plan): notInForce of the quick start's
// grants on a repository, warm (the exec-directory scan validated, the
// probes done), as the second build was in a run.
func BenchmarkPreflightPlanFor(b *testing.B) {
	ws, _ := filepath.EvalSymlinks(b.TempDir())
	for _, d := range []string{"hooks", "objects", "refs"} {
		os.MkdirAll(filepath.Join(ws, ".git", d), 0o755)
	}
	os.WriteFile(filepath.Join(ws, ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	b.Chdir(ws)
	cfg := sandbox.Config{AllowedWritePaths: []string{ws}, AllowedExecPaths: []string{"/usr/bin", "/bin"}, AllowProcessSpawn: true}
	if _, err := notInForce(cfg); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		notInForce(cfg)
	}
}
