//go:build linux

package sandbox_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/openparallax/sandbox"
	"github.com/openparallax/sandbox/internal/childtest"
)

// Without a cgroup the caller may manage (detection pointed at a mountinfo
// without one), Run with AllowProcessSpawn starts the program as PID 1 of
// a PID namespace of its own where namespaces are available: the program
// sees two PIDs in NSpid, and the pgrp-escaping fork chain the session scan
// chases for seconds (TestRunKillsPgrpChain) dies whole with it.
func TestRunPIDNamespaceKill(t *testing.T) {
	requireNamespaces(t)
	pidNamespaceKill(t)
}

// As nobody the PID namespace comes with a user namespace (nobody can
// manage no cgroup here: the v1 hierarchies are root's).
func TestRunPIDNamespaceKillAsNobody(t *testing.T) {
	requireSandbox(t)
	if os.Geteuid() == 0 && !childtest.AsNobody(t) {
		return
	}
	requireNamespaces(t)
	pidNamespaceKill(t)
}

func pidNamespaceKill(t *testing.T) {
	sh := need(t, "/bin/sh", "dash")
	empty := filepath.Join(t.TempDir(), "mountinfo")
	os.WriteFile(empty, nil, 0o600)
	defer sandbox.SetCgroupOptions(empty, "")()

	nspid := func(cfg sandbox.Config) string {
		t.Helper()
		res, err := sandbox.Run(context.Background(), cfg, sh,
			[]string{"-c", `while read -r k v; do [ "$k" = NSpid: ] && echo "$v"; done </proc/self/status; exit 0`}, sandbox.RunOptions{})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("Run: %v %+v", err, res)
		}
		return strings.Join(strings.Fields(string(res.Stdout)), " ")
	}
	cfg := sandbox.Config{AllowProcessSpawn: true, AllowedExecPaths: []string{sh}}
	if f := strings.Fields(nspid(cfg)); len(f) != 2 || f[1] != "1" {
		t.Fatalf("with spawn and no cgroup: NSpid %q, want the host's PID and 1", f)
	}
	// Without spawn there is no tree to kill: no PID namespace (the
	// static helper, no namespaces, stays the child half).
	cfg.AllowProcessSpawn = false
	if f := strings.Fields(nspid(cfg)); len(f) != 1 {
		t.Fatalf("without spawn: NSpid %q, want one PID (no namespace)", f)
	}
	// The namespace's kill took 40-70 ms here, the session scan 1-3 s.
	pgrpChainRuns(t, "the PID namespace's kill", 1500*time.Millisecond)
}
