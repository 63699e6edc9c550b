package darwin

// The macOS rules added for issue 21, as data on every OS: channels in the
// plan, interpreters chosen from write paths, FIFOs on the exec list, shims,
// devices, Probe's trial run, Run's environment and the canary's targets.

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openparallax/sandbox/internal/spec"
)

// connectRC is a resolvedConfig with only the given TCP endpoints.
func connectRC(t *testing.T, eps ...string) *spec.Resolved {
	t.Helper()
	rc := &spec.Resolved{Config: spec.Config{AllowedTCPConnect: eps}}
	for _, s := range eps {
		ep, err := spec.ParseEndpoint(s)
		if err != nil {
			t.Fatal(err)
		}
		rc.Connect = append(rc.Connect, ep)
	}
	return rc
}

// The resolver is never granted for loopback-only endpoints, and whenever it
// is granted the plan lists it as a channel, not enforced.
func TestDarwinResolverChannel(t *testing.T) {
	for _, tc := range []struct {
		eps      []string
		resolver bool
	}{
		{[]string{"localhost:8080"}, false},
		{[]string{"127.0.0.1:80", "[::1]:81", "localhost:82"}, false},
		{[]string{"10.0.0.1:22"}, false},
		{[]string{"example.com:443"}, true},
		{[]string{"*:443"}, true},
		{[]string{"localhost:80", "example.com:443"}, true},
	} {
		rc := connectRC(t, tc.eps...)
		prof, err := profile(rc, nil)
		if err != nil {
			t.Fatal(err)
		}
		granted := strings.Contains(prof.Text, resolverSocket)
		if granted != tc.resolver {
			t.Errorf("%q: resolver granted %v, want %v", tc.eps, granted, tc.resolver)
		}
		plan := Plan(rc, true)
		f := features(plan, spec.FeatureResolver)
		if len(f) != 1 || f[0].Enforced == granted {
			t.Errorf("%q: resolver granted %v, plan entry %+v (want not enforced exactly when granted)", tc.eps, granted, f)
		}
		err = spec.CheckApplicable(plan, true, spec.ScopeCommand) // a Strict Config
		if refused := err != nil && strings.Contains(err.Error(), spec.FeatureResolver); refused != granted {
			t.Errorf("%q: Strict refuses the resolver %v, granted %v (%v)", tc.eps, refused, granted, err)
		}
	}
}

// Config.NoTLSTrustService leaves trustd out of the profile; with it in,
// the plan reports trustd as a channel.
func TestDarwinTrustdOptional(t *testing.T) {
	rc := connectRC(t, "10.0.0.1:443")
	prof, err := profile(rc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(prof.Text, trustdService) {
		t.Fatal("trustd not granted for a remote endpoint")
	}
	if f := features(Plan(rc, true), spec.FeatureTLSTrust); len(f) != 1 || f[0].Enforced || !strings.Contains(f[0].Detail, "AIA") {
		t.Errorf("trustd granted: plan entry %+v, want a not-enforced channel", f)
	}
	rc.Config.NoTLSTrustService = true
	prof, err = profile(rc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(prof.Text, trustdService) {
		t.Error("no_tls_trust_service: trustd still in the profile")
	}
	plan := Plan(rc, true)
	if slices.ContainsFunc(plan.Network, func(l string) bool { return strings.Contains(l, trustdService) }) {
		t.Errorf("no_tls_trust_service: plan network still lists trustd: %q", plan.Network)
	}
	if f := features(plan, spec.FeatureTLSTrust); len(f) != 1 || !f[0].Enforced {
		t.Errorf("no_tls_trust_service: plan entry %+v", f)
	}
	if rc := connectRC(t, "localhost:80"); len(features(Plan(rc, true), spec.FeatureTLSTrust)) != 0 {
		t.Error("trustd reported for a loopback-only Config")
	}
}

// A script in a write path chooses its "#!" interpreter; it is granted only
// when execgrant.Grantable allows it.
func TestDarwinInterpreterFromWritePath(t *testing.T) {
	dir := safeDir(t)
	ws, sys := filepath.Join(dir, "ws"), filepath.Join(dir, "sys")
	for _, d := range []string{ws, sys} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	interp := filepath.Join(sys, "interp")
	os.WriteFile(interp, []byte("\xcf\xfa\xed\xfe"), 0o755)
	secret := filepath.Join(sys, "secret")
	os.WriteFile(secret, []byte("key"), 0o600)
	evil := filepath.Join(ws, "evil")
	os.WriteFile(evil, []byte("\xcf\xfa\xed\xfe"), 0o755)
	script := filepath.Join(ws, "run")
	rc, err := spec.Resolve(spec.Config{AllowedWritePaths: []string{ws}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		shebang string
		granted bool
	}{
		{interp, true},
		{secret, false}, // not executable: would make a secret readable
		{evil, false},   // inside the write path: the process could replace it
		{filepath.Join(ws, "missing"), false},
	} {
		if err := os.WriteFile(script, []byte("#!"+tc.shebang+" -x\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		paths := pathRules(rc, script)
		got := slices.ContainsFunc(paths, func(d pathRule) bool { return strings.HasPrefix(d.Source, "interpreter of ") })
		if got != tc.granted {
			t.Errorf("#!%s: interpreter granted %v, want %v (%+v)", tc.shebang, got, tc.granted, paths)
		}
		// The plan says so for an exec-listed script.
		rcx := *rc
		rcx.Exec = []spec.Path{{Given: script, Resolved: script}}
		detail := features(Plan(&rcx, true), spec.FeatureExec)[0].Detail
		if said := strings.Contains(detail, "not granted, so that script cannot run: "+script); said == tc.granted {
			t.Errorf("#!%s: plan mentions the refusal %v, granted %v: %s", tc.shebang, said, tc.granted, detail)
		}
	}
}

// An exec-listed FIFO must not hang anything that reads "#!" lines:
// pathRules, SeatbeltProfile, PlanFor and WrapCommand's rules.
func TestDarwinFIFOOnExecList(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no FIFOs on Windows")
	}
	dir := safeDir(t)
	fifo := filepath.Join(dir, "fifo")
	if err := mkfifo(fifo); err != nil {
		t.Fatal(err)
	}
	cfg := spec.Config{AllowedExecPaths: []string{fifo}}
	done := make(chan error, 1)
	go func() {
		rc, err := spec.Resolve(cfg)
		if err != nil {
			done <- err
			return
		}
		pathRules(rc, fifo)
		Plan(rc, true)
		_, _, err = SeatbeltProfile(cfg)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("reading the exec list's \"#!\" lines hangs on a FIFO")
	}
}

// Granting a shim grants what it executes, and the plan lists it.
func TestDarwinShimGrants(t *testing.T) {
	for _, tc := range []struct {
		exec        spec.Path
		wantProfile string
		wantPath    string
	}{
		{spec.Path{Given: "/bin/sh", Resolved: "/bin/sh"}, `(literal "/private/var/select/sh")`, "/private/var/select/sh"},
		{spec.Path{Given: "/bin", Resolved: "/bin", IsDir: true}, `(literal "/bin/bash")`, "/bin/bash"},
		{spec.Path{Given: "/usr/bin/perl", Resolved: "/usr/bin/perl"}, `(regex #"^/usr/bin/perl5[.][0-9]+$")`, "/usr/bin/perl5.*"},
		{spec.Path{Given: "/usr/bin/git", Resolved: "/usr/bin/git"}, `(subpath "/Library/Developer/CommandLineTools")`, "/Library/Developer/CommandLineTools"},
		{spec.Path{Given: "/usr/bin/python3", Resolved: "/usr/bin/python3"}, `(literal "/private/var/db/xcode_select_link")`, "/private/var/db/xcode_select_link"},
	} {
		rc := &spec.Resolved{Exec: []spec.Path{tc.exec}}
		prof, err := profile(rc, []pathRule{{tc.exec, accessExec, "allowed_exec_paths"}})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(prof.Text, tc.wantProfile) {
			t.Errorf("%s: profile lacks %s", tc.exec.Resolved, tc.wantProfile)
		}
		if !slices.ContainsFunc(Plan(rc, true).Paths, func(r spec.PathRule) bool { return r.Path == tc.wantPath }) {
			t.Errorf("%s: plan paths lack %s", tc.exec.Resolved, tc.wantPath)
		}
	}
	// No shim, no shim rules.
	rc := &spec.Resolved{Exec: []spec.Path{{Given: "/bin/ls", Resolved: "/bin/ls"}}}
	prof, err := profile(rc, []pathRule{{rc.Exec[0], accessExec, "allowed_exec_paths"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"/private/var/select/sh", "perl5", "CommandLineTools"} {
		if strings.Contains(prof.Text, s) {
			t.Errorf("/bin/ls alone: profile mentions %s", s)
		}
	}
}

// The camera and microphone rules appear exactly when the Config asks.
func TestDarwinDevices(t *testing.T) {
	for _, tc := range []struct{ camera, mic bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
		rc := &spec.Resolved{Config: spec.Config{AllowCamera: tc.camera, AllowMicrophone: tc.mic}}
		prof, err := profile(rc, nil)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(prof.Text, "(allow device-camera)") != tc.camera || strings.Contains(prof.Text, "(allow device-microphone)") != tc.mic {
			t.Errorf("camera %v microphone %v: device rules wrong in\n%s", tc.camera, tc.mic, prof.Text)
		}
		plan := Plan(rc, true)
		if (len(features(plan, spec.FeatureCamera)) == 1) != tc.camera || (len(features(plan, spec.FeatureMicrophone)) == 1) != tc.mic {
			t.Errorf("camera %v microphone %v: plan %+v", tc.camera, tc.mic, plan.Features)
		}
	}
}

func TestDarwinTrialError(t *testing.T) {
	exit := &exec.ExitError{}
	if err := trialError(nil, ""); err != nil {
		t.Errorf("success: %v", err)
	}
	for _, tc := range []struct{ stderr, want string }{
		{"sandbox-exec: sandbox_apply: Operation not permitted\n", "already runs inside a Seatbelt sandbox"},
		{"forbidden-sandbox-reinit", "already runs inside a Seatbelt sandbox"},
		{"sandbox-exec: something else\n", "failed a trial run"},
		{"", "failed a trial run"},
	} {
		err := trialError(exit, tc.stderr)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("stderr %q: %v, want %q", tc.stderr, err, tc.want)
		}
	}
	if !slices.Equal(trialArgs[len(trialArgs)-2:], []string{"--", "/usr/bin/true"}) || !strings.HasPrefix(trialArgs[1], "(version 1)") {
		t.Errorf("trial args %q", trialArgs)
	}
	st := Status(trialError(exit, "sandbox_apply: Operation not permitted"))
	if st.Active || !strings.Contains(st.Reason, "forbidden-sandbox-reinit") || strings.Contains(st.Reason, "ships with every macOS") {
		t.Errorf("status inside a sandbox: %+v", st)
	}
	if !errors.Is(wrapCommand(exec.Command("/bin/true"), spec.Config{}, trialError(exit, "forbidden-sandbox-reinit")), spec.ErrUnavailable) {
		t.Error("WrapCommand inside a sandbox: want ErrUnavailable")
	}
}

func TestDarwinRunEnv(t *testing.T) {
	const tmp = "/private/var/folders/x/T/sandbox-run-1/tmp"
	got := RunEnv([]string{"TMPDIR=" + tmp, "HOME=/private/var/folders/x/T/sandbox-run-1/home"})
	want := []string{"TMPDIR=" + tmp, "HOME=/private/var/folders/x/T/sandbox-run-1/home", "GIT_CONFIG_GLOBAL=" + tmp + "/.gitconfig", "GIT_CONFIG_NOSYSTEM=1"}
	if !slices.Equal(got, want) {
		t.Errorf("Run's env: %q, want %q", got, want)
	}
	got = RunEnv([]string{"HOME=/Users/dev", "PATH=/usr/bin", "TMPDIR=" + tmp})
	want = []string{"HOME=/Users/dev", "PATH=/usr/bin", "TMPDIR=" + tmp, "GIT_CONFIG_GLOBAL=" + tmp + "/.gitconfig", "GIT_CONFIG_NOSYSTEM=1"}
	if !slices.Equal(got, want) {
		t.Errorf("caller's HOME: %q, want %q (kept, and git kept away from it)", got, want)
	}
	in := []string{"TMPDIR=/x", "HOME=/y", "GIT_CONFIG_GLOBAL=/z", "GIT_CONFIG_NOSYSTEM=0"}
	if got := RunEnv(in); !slices.Equal(got, in) {
		t.Errorf("all set: %q, want unchanged", got)
	}
	if got := RunEnv(nil); !slices.Equal(got, []string{"GIT_CONFIG_NOSYSTEM=1"}) {
		t.Errorf("no TMPDIR: %q, want only GIT_CONFIG_NOSYSTEM=1 (no GIT_CONFIG_GLOBAL outside the grants)", got)
	}
}

// The canary's read probe must not pick a file the endpoints made readable.
func TestDarwinCanaryTargetsWithEndpoints(t *testing.T) {
	ok := func(string) error { return nil }
	if got, _ := pickTarget(connectRC(t, "localhost:80"), readTargets, ok, false); got != "/private/etc/passwd" {
		t.Errorf("localhost endpoint: read target %q, want /private/etc/passwd (hosts is granted)", got)
	}
	if got, _ := pickTarget(connectRC(t, "127.0.0.1:80"), readTargets, ok, false); got != "/private/etc/hosts" {
		t.Errorf("IP endpoint: read target %q, want /private/etc/hosts", got)
	}
	// "/" is granted as its names only: files below it are not granted.
	if isGranted(&spec.Resolved{}, "/private/etc/passwd") || !isGranted(&spec.Resolved{}, "/") {
		t.Error(`"/" must count as granted itself, and only itself`)
	}
	if isGranted(&spec.Resolved{}, "/private/tmp") || isGranted(&spec.Resolved{}, "/etc/passwd") {
		t.Error("the root symlinks' metadata grant must not make what is below them a granted path")
	}
}

// F_GETPATH's answer is taken only as another spelling of the resolved
// path, never as a different place.
func TestCanonicalAlias(t *testing.T) {
	for _, tc := range []struct {
		p, got string
		ok     bool
	}{
		{"/Users/dev/ws", "/Users/dev/ws", true},
		{"/users/DEV/ws", "/Users/dev/ws", true},
		{"/Users/dev/ws", "/System/Volumes/Data/Users/dev/ws", true},
		{"/Users/dev/caf\u00e9", "/Users/dev/cafe\u0301", true},
		{"/Users/dev/cafe\u0301/x", "/Users/dev/caf\u00e9/x", true},
		{"/Users/dev/ws/ro", "/Users/dev/.ssh", false},
		{"/Users/dev/ws/ro/x", "/Users/dev/.ssh/x", false},
		{"/Users/dev/ws", "/Users/dev/ws/x", false},
		{"/Users/dev/a/b", "/Users/dev/ab", false},
		{"/private/tmp/x", "/System/Volumes/Data/private/var/x", false},
		{"/Users/dev/ws/ro", "/Users/dev/ws\u00e9/ro", false},
		{"/Users/dev/\u00e9\u00e9", "/Users/dev/e\u0301e\u0301", true},
		{"/Users/dev/\u00e9", "/Users/dev/\u00fc", true}, // not told apart: both one non-ASCII run
	} {
		if got := canonicalAlias(tc.p, tc.got); got != tc.ok {
			t.Errorf("canonicalAlias(%q, %q) = %v, want %v", tc.p, tc.got, got, tc.ok)
		}
	}
}
