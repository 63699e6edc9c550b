//go:build linux

package main

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/openparallax/sandbox"
)

// TestRunWarnings: before the program runs, `sandbox run` prints one line
// per thing asked for and not in force (a deny path that does not exist,
// repositories past the protection budget), none for the defaults (the
// loader of a granted program, a commondir in a repository), refuses a
// mount it cannot make, and --strict refuses naming the same entries in
// the same words.
func TestRunWarnings(t *testing.T) {
	linuxSandbox(t)
	ws, _ := filepath.EvalSymlinks(t.TempDir())
	mark := filepath.Join(ws, "ran")
	touch := []string{"--", "/bin/sh", "-c", ": > " + mark}
	base := []string{"run", "--rw", ws, "--exec", "/bin", "--exec", "/usr/bin", "--allow-spawn"}
	ran := func() bool { _, err := os.Stat(mark); os.Remove(mark); return err == nil }
	warnings := func(errOut string) []string {
		var out []string
		for l := range strings.SplitSeq(errOut, "\n") {
			if w, ok := strings.CutPrefix(l, "sandbox run: not in force: "); ok {
				out = append(out, w)
			}
		}
		return out
	}

	// A repository (git_commondir is not prevented, a default) and
	// dynamically linked programs (exec_loader): nothing asked is missing.
	os.MkdirAll(filepath.Join(ws, "repo", ".git", "hooks"), 0o755)
	os.MkdirAll(filepath.Join(ws, "repo", ".git", "objects"), 0o755)
	os.MkdirAll(filepath.Join(ws, "repo", ".git", "refs"), 0o755)
	os.WriteFile(filepath.Join(ws, "repo", ".git", "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "repo", ".git", "config"), nil, 0o644)
	_, errOut, code := runCLI(t, append(base, touch...)...)
	if code != 0 || !ran() || len(warnings(errOut)) > 0 {
		t.Errorf("defaults only: exit %d, warnings %q, stderr:\n%s", code, warnings(errOut), errOut)
	}

	// A deny path that does not exist: warned, and the program runs.
	absent := filepath.Join(ws, "absent")
	_, errOut, code = runCLI(t, append(append(base, "--deny-write", absent), touch...)...)
	w := warnings(errOut)
	if code != 0 || !ran() || len(w) != 1 || !strings.HasPrefix(w[0], "deny_write_paths (") || !strings.Contains(w[0], absent) {
		t.Errorf("--deny-write %s: exit %d, warnings %q, stderr:\n%s", absent, code, w, errOut)
	}
	// --strict refuses, naming it in the same words.
	_, strictErr, code := runCLI(t, append(append(base, "--strict", "--deny-write", absent), touch...)...)
	if code != exitRunFailed || ran() || len(w) == 1 && !strings.Contains(strictErr, w[0]) {
		t.Errorf("--strict: exit %d, stderr %s; want a refusal naming %q", code, strictErr, w)
	}

	// Repositories past the protection budget: named.
	for i := range 70 {
		g := filepath.Join(ws, "many", "r"+strconv.Itoa(i), ".git")
		for _, d := range []string{"hooks", "objects", "refs"} {
			os.MkdirAll(filepath.Join(g, d), 0o755)
		}
		os.WriteFile(filepath.Join(g, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644)
		os.WriteFile(filepath.Join(g, "config"), nil, 0o644)
	}
	_, errOut, code = runCLI(t, append(base, touch...)...)
	w = warnings(errOut)
	if code != 0 || !ran() || len(w) != 1 || !strings.HasPrefix(w[0], "git_protection (") || !strings.Contains(w[0], "past the budget") {
		t.Errorf("70 repositories: exit %d, warnings %q, stderr:\n%s", code, w, errOut)
	}
	os.RemoveAll(filepath.Join(ws, "many"))

	// A mount whose target does not exist: made in the sandbox's own root
	// where the mount layer can build one (no warning: it is in force),
	// else refused with the reason.
	src := t.TempDir()
	mount := sandbox.Mount{Path: src, At: "/nonexistent-sandbox-target", Write: true}
	plan, err := sandbox.PlanFor(sandbox.Config{AllowedWritePaths: []string{ws}, Mounts: []sandbox.Mount{mount}})
	if err != nil {
		t.Fatal(err)
	}
	ownRoot := !slices.ContainsFunc(plan.For(sandbox.ScopeCommand).NotEnforced(), func(e sandbox.Enforcement) bool {
		return e.Feature == sandbox.FeaturePrivateRoot || e.Feature == sandbox.FeatureMounts
	})
	_, errOut, code = runCLI(t, append(append(base, "--mount", src+":/nonexistent-sandbox-target:rw"), touch...)...)
	switch {
	case ownRoot && (code != 0 || !ran() || len(warnings(errOut)) != 0):
		t.Errorf("--mount to a target the host lacks, with the own root: exit %d, stderr:\n%s", code, errOut)
	case !ownRoot && (code != exitRunFailed || ran() || !strings.Contains(errOut, "/nonexistent-sandbox-target")):
		t.Errorf("--mount to a target that does not exist, no own root here: exit %d, stderr:\n%s", code, errOut)
	}
	if _, err := os.Lstat("/nonexistent-sandbox-target"); err == nil {
		t.Error("the mount target was made on the host")
	}
}

// TestRunStrictAcceptLoader: --strict refuses a dynamically linked
// program granted by --exec, naming its loader; --strict-accept-loader
// runs it, where the loader is the only gap here.
func TestRunStrictAcceptLoader(t *testing.T) {
	linuxSandbox(t)
	args := []string{"--exec", "/bin", "--exec", "/usr/bin", "--", "/bin/true"}
	_, errOut, code := runCLI(t, append([]string{"run", "--strict"}, args...)...)
	if code == 0 {
		t.Skipf("--strict runs /bin/true here (statically linked, no loader gap): %s", errOut)
	}
	if code != exitRunFailed || !strings.Contains(errOut, sandbox.FeatureExecLoader+" (") {
		t.Fatalf("--strict: exit %d, %s; want a refusal naming %s", code, errOut, sandbox.FeatureExecLoader)
	}
	if strings.Contains(errOut, "; ") { // the refusal's entries are joined by "; "
		t.Skipf("other gaps than the loader on this kernel: %s", errOut)
	}
	_, errOut, code = runCLI(t, append([]string{"run", "--strict-accept-loader"}, args...)...)
	if code != 0 {
		t.Errorf("--strict-accept-loader: exit %d, %s", code, errOut)
	}
}
