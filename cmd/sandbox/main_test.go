package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/openparallax/sandbox"
)

var (
	buildOnce sync.Once
	builtBin  string
	buildErr  error
	buildOut  []byte
)

// cli builds the command once per test binary and returns its path. The
// tests run the real binary, as an operator would.
func cli(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skipf("no go toolchain here to build the command with (%v); the host run covers it", err)
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "sandbox-cli-")
		if err != nil {
			buildErr = err
			return
		}
		builtBin = filepath.Join(dir, "sandbox")
		buildOut, buildErr = exec.Command("go", "build", "-o", builtBin, ".").CombinedOutput()
	})
	if buildErr != nil {
		t.Fatalf("go build: %v\n%s", buildErr, buildOut)
	}
	return builtBin
}

func TestMain(m *testing.M) {
	code := m.Run()
	if builtBin != "" {
		os.RemoveAll(filepath.Dir(builtBin))
	}
	os.Exit(code)
}

func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(cli(t), args...)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return stdout.String(), stderr.String(), code
}

func linuxSandbox(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" || !sandbox.Probe().Active {
		t.Skipf("needs Linux with an active sandbox; here %s: %+v", runtime.GOOS, sandbox.Probe())
	}
}

func TestDoctor(t *testing.T) {
	st := sandbox.Probe()
	out, _, code := runCLI(t, "doctor")
	for _, want := range []string{"Sandbox:", st.Mode, "filesystem", "process_spawn", "tcp_connect"} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
	for i, l := range strings.Split(out, "\n") {
		if len([]rune(l)) > 80 && !strings.HasPrefix(l, "Sandbox verified:") && !strings.HasPrefix(l, "Sandbox not verified:") {
			t.Errorf("line %d is %d columns: %q", i+1, len([]rune(l)), l)
		}
	}
	if strings.Contains(out, "\x1b[") {
		t.Error("colour written to a pipe")
	}

	jsonOut, _, jcode := runCLI(t, "doctor", "--json")
	if jcode != code {
		t.Errorf("doctor --json exit %d, text exit %d", jcode, code)
	}
	var rep doctorReport
	if err := json.Unmarshal([]byte(jsonOut), &rep); err != nil {
		t.Fatalf("doctor --json is not JSON: %v\n%s", err, jsonOut)
	}
	if rep.Status != st {
		t.Errorf("doctor --json status %+v, want %+v", rep.Status, st)
	}
	switch {
	case !st.Active:
		if code != exitUnavailable || rep.Canary != nil {
			t.Errorf("unavailable: exit %d, canary %v", code, rep.Canary)
		}
	case rep.Canary == nil:
		t.Fatalf("active sandbox but no canary: %s", rep.CanaryError)
	case !rep.Canary.Verified:
		if code != exitNotVerified {
			t.Errorf("canary not verified but exit %d", code)
		}
	default:
		// Degraded when a feature is not enforced, except WrapCommand's
		// file_metadata where the mount layer is available: the
		// machine enforces it for any Config that uses the layer.
		want := exitOK
		for _, f := range rep.Features {
			layerOnly := f.Feature == sandbox.FeatureMetadata && f.Scope == sandbox.ScopeCommand && rep.MountLayer != nil && rep.MountLayer.Enforced
			if !f.Enforced && !layerOnly {
				want = exitDegraded
			}
		}
		if code != want {
			t.Errorf("verified canary: exit %d, want %d", code, want)
		}
		if !strings.Contains(out, rep.Canary.Summary[:len("Sandbox verified: ")]) {
			t.Errorf("text output lacks the canary summary:\n%s", out)
		}
	}
	if runtime.GOOS == "linux" && st.Active && (rep.Canary == nil || !rep.Canary.Verified) {
		t.Errorf("on this Linux machine the doctor's canary must verify: %+v", rep.Canary)
	}
	// The mount layer's availability, with the reason and remedy when
	// unavailable.
	if runtime.GOOS == "linux" && st.Active {
		m := rep.MountLayer
		switch {
		case m == nil:
			t.Error("doctor --json has no mount_layer")
		case !m.Enforced && (m.Hint == "" || !strings.Contains(out, "UNAVAILABLE")):
			t.Errorf("mount layer unavailable without a remedy in the report: %+v\n%s", m, out)
		case m.Enforced && !strings.Contains(out, "Mounts:     available"):
			t.Errorf("text output lacks the mount layer's line:\n%s", out)
		}
		// The mount layer is used by default where it is available:
		// WrapCommand and Run refuse chmod and utimes of the user's own
		// files outside the grants there, and leave them where it is
		// not, and the report says which, in its own line (exit:
		// degraded only in the second case).
		i := slices.IndexFunc(rep.Features, func(f sandbox.Enforcement) bool { return f.Feature == sandbox.FeatureMetadata })
		switch {
		case i < 0 || rep.Features[i].Scope != sandbox.ScopeCommand:
			t.Errorf("doctor does not report WrapCommand/Run's file_metadata first: %+v", rep.Features)
		case m != nil && m.Enforced && (!rep.Features[i].Enforced || !strings.Contains(out, "file_metadata        enforced      WrapCommand/Run: everything outside the")):
			t.Errorf("doctor does not report WrapCommand/Run's file_metadata as enforced by the mount layer: %+v\n%s", rep.Features[i], out)
		case (m == nil || !m.Enforced) && (rep.Features[i].Enforced || !strings.Contains(out, "file_metadata        NOT enforced  WrapCommand/Run: chmod and utimes by path")):
			t.Errorf("doctor does not report WrapCommand/Run's file_metadata as not enforced: %+v\n%s", rep.Features[i], out)
		}
	}
}

func TestRun(t *testing.T) {
	linuxSandbox(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "note"), []byte("hello\n"), 0o644)

	out, errOut, code := runCLI(t, "run", "--", "cat", "/etc/passwd")
	if code == 0 || !strings.Contains(errOut, "Permission denied") || strings.Contains(out, "root:") {
		t.Errorf("cat /etc/passwd: exit %d, stdout %q, stderr %q; want denied", code, out, errOut)
	}
	out, errOut, code = runCLI(t, "run", "--ro", dir, "--", "cat", filepath.Join(dir, "note"))
	if code != 0 || out != "hello\n" {
		t.Errorf("cat granted file: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	_, _, code = runCLI(t, "run", "--", "sh", "-c", "exit 7")
	if code != 7 {
		t.Errorf("exit code not passed through: %d", code)
	}
	_, errOut, _ = runCLI(t, "run", "--explain", "--", "cat", "/etc/passwd")
	if !strings.Contains(errOut, "hint: reading /etc/passwd was denied: --ro /etc/passwd grants it") {
		t.Errorf("--explain hint missing:\n%s", errOut)
	}
	_, errOut, _ = runCLI(t, "run", "--", "cat", "/etc/passwd")
	if strings.Contains(errOut, "hint:") {
		t.Errorf("hint printed without --explain:\n%s", errOut)
	}
	out, _, code = runCLI(t, "run", "--rw", dir, "--", "sh", "-c", "echo made > "+filepath.Join(dir, "made")+"; read x < "+filepath.Join(dir, "made")+"; echo $x")
	if code != 0 || out != "made\n" {
		t.Errorf("write in --rw dir: exit %d, %q", code, out)
	}
	_, errOut, code = runCLI(t, "run", "--timeout", "200ms", "--", "sleep", "5")
	if code != 128+9 || !strings.Contains(errOut, "--timeout") {
		t.Errorf("timeout: exit %d, stderr %q", code, errOut)
	}
	// A named host mixed with a port-only entry: host names are not
	// enforced (no namespace), which --strict refuses.
	_, errOut, code = runCLI(t, "run", "--strict", "--connect", "*:80", "--connect", "example.com:443", "--", "true")
	if code != exitRunFailed || !strings.Contains(errOut, "strict") || !strings.Contains(errOut, "tcp_connect_host") {
		t.Errorf("--strict with a named host and a port-only entry: exit %d, stderr %q", code, errOut)
	}
}

// TestRunExplainEgress: sandbox run --explain prints the requests the
// egress proxy refused. curl asks the proxy for a host not on the list;
// the proxy refuses it without resolving it: nothing leaves the machine.
func TestRunExplainEgress(t *testing.T) {
	linuxSandbox(t)
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not installed")
	}
	p, err := sandbox.PlanFor(sandbox.Config{AllowedTCPConnect: []string{"allowed.example.test:80"}})
	if err != nil || p.Egress == nil || p.Egress.Mode != sandbox.EgressProxy && p.Egress.Mode != sandbox.EgressTransparent {
		t.Skipf("host names are not enforced by a namespace and proxy here: %+v %v", p.Egress, err)
	}
	args := []string{"run", "--connect", "allowed.example.test:80", "--", "curl", "-s", "-o", "/dev/null", "-w", "%{http_code}", "http://evil.example.test/"}
	out, errOut, _ := runCLI(t, append(args[:1:1], append([]string{"--explain"}, args[1:]...)...)...)
	want := "sandbox: network: refused http evil.example.test:80 (not-allowed)"
	if out != "403" || !strings.Contains(errOut, want) {
		t.Errorf("run --explain: stdout %q, stderr %q; want 403 and %q", out, errOut, want)
	}
	if _, errOut, _ = runCLI(t, args...); strings.Contains(errOut, "refused") {
		t.Errorf("refusals printed without --explain: %q", errOut)
	}
}

func TestVerify(t *testing.T) {
	linuxSandbox(t)
	ws := t.TempDir()
	out, errOut, code := runCLI(t, "verify", "--rw", ws, "--workspace", ws, "--json")
	if code != exitOK {
		t.Fatalf("verify exit %d: %s %s", code, out, errOut)
	}
	var r sandbox.CanaryResult
	if err := json.Unmarshal([]byte(out), &r); err != nil || !r.Verified {
		t.Fatalf("verify --json: %v %+v", err, r)
	}
	if got := sandbox.ReadCanaryResult(ws); !got.Verified || got.Summary != r.Summary {
		t.Errorf("status file: %+v", got)
	}
	controls := 0
	for _, p := range r.Probes {
		if strings.HasPrefix(p.Name, "control_") && p.Status == sandbox.ProbeAllowed {
			controls++
		}
	}
	if controls < 2 {
		t.Errorf("positive controls not run: %+v", r.Probes)
	}
}

func TestPlan(t *testing.T) {
	dir := t.TempDir()
	cfgFile := filepath.Join(dir, "cfg.json")
	os.WriteFile(cfgFile, []byte(`{"allowed_write_paths":["`+filepath.ToSlash(dir)+`"],"allowed_tcp_connect":["localhost:8080"]}`), 0o644)
	out, errOut, code := runCLI(t, "plan", "--config", cfgFile, "--json")
	if code != 0 {
		t.Fatalf("plan exit %d: %s", code, errOut)
	}
	var rep planReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("plan --json: %v\n%s", err, out)
	}
	if rep.Plan.Platform != runtime.GOOS || len(rep.Plan.Features) == 0 {
		t.Errorf("plan: %+v", rep.Plan)
	}
	if rep.Seatbelt != nil || rep.Entry != entryWrap {
		t.Errorf("plan --json on %s: entry %q, seatbelt %+v; want wrap and no macOS profile", runtime.GOOS, rep.Entry, rep.Seatbelt)
	}
	text, _, code := runCLI(t, "plan", "--config", cfgFile)
	if code != 0 || strings.Contains(text, "macOS Seatbelt profile") != (runtime.GOOS == "darwin") {
		t.Errorf("plan text (exit %d) has the macOS profile only on macOS:\n%s", code, text)
	}
	if runtime.GOOS == "linux" && sandbox.Probe().Active && (!strings.Contains(text, "Filesystem rules:") || !strings.Contains(text, "Syscall filter:")) {
		t.Errorf("plan on Linux lacks the Landlock rules or the seccomp summary:\n%s", text)
	}
}

func TestUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{nil, "missing command"},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
		{[]string{"doctor", "--nope"}, "-nope"},
		{[]string{"doctor", "extra"}, `"extra"`},
		{[]string{"run"}, "missing CMD"},
		{[]string{"run", "--ro", "relative", "--", "true"}, `--ro "relative" (`},
		{[]string{"run", "--connect", "https://example.com", "--", "true"}, `write HOST:PORT`},
		{[]string{"run", "--rw", "~nobody/x", "--", "true"}, `~user is not supported`},
		{[]string{"run", "--connect", "example.com", "--", "true"}, `--connect "example.com"`},
		{[]string{"run", "--bind", "70000", "--", "true"}, `--bind "70000"`},
		{[]string{"run", "--env", "NOEQUALS", "--", "true"}, `--env "NOEQUALS"`},
		{[]string{"run", "--timeout", "soon", "--", "true"}, "-timeout"},
		{[]string{"plan", "--config", "/nonexistent/cfg.json"}, "--config"},
		{[]string{"verify", "--rw", "/nonexistent/dir"}, `--rw "/nonexistent/dir"`},
		{[]string{"plan", "--describe", "--json"}, "--describe and --json"},
		{[]string{"plan", "--timeout", "5s"}, "--timeout is only for --describe"},
		{[]string{"plan", "--max-memory", "-1"}, "-max-memory"},
		{[]string{"plan", "--max-memory", "12X"}, "-max-memory"},
		{[]string{"plan", "--max-procs", "0"}, "-max-procs"},
		{[]string{"plan", "--max-cpu", "soon"}, "-max-cpu"},
	}
	for _, c := range cases {
		_, stderr, code := runCLI(t, c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want %d and one line naming %s", c.args, code, stderr, exitUsage, c.want)
		}
	}
}

// The plan command in-process, so that it also runs where no go toolchain
// can build the binary (the Windows tests under Wine): this platform's plan
// and the macOS profile, rendered from the same Config.
func TestPlanInProcess(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr strings.Builder
	code := run([]string{"plan", "--rw", dir, "--connect", "*:443", "--json"}, nil, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("plan exit %d: %s", code, stderr.String())
	}
	var rep planReport
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatalf("plan --json: %v\n%s", err, stdout.String())
	}
	if rep.Plan.Platform != runtime.GOOS || len(rep.Plan.Features) == 0 {
		t.Errorf("plan for %s: %+v", runtime.GOOS, rep.Plan)
	}
	if rep.Seatbelt != nil {
		t.Errorf("plan on %s printed a macOS profile: %+v", runtime.GOOS, rep.Seatbelt)
	}
	stdout.Reset()
	if code := run([]string{"plan", "--rw", dir}, nil, &stdout, &stderr); code != exitOK || strings.Contains(stdout.String(), "macOS Seatbelt profile") {
		t.Errorf("plan text (exit %d) names macOS:\n%s", code, stdout.String())
	}
}

// plan --platform darwin is the macOS plan and profile computed here (the
// profile renders on every OS, unless a path is one a Mac would name
// differently: then the reason is given); --platform windows is the
// Windows plan. Neither needs the other machine.
func TestPlanPlatform(t *testing.T) {
	dir := t.TempDir()
	for _, goos := range []string{"darwin", "windows"} {
		var stdout, stderr strings.Builder
		if code := run([]string{"plan", "--rw", dir, "--connect", "*:443", "--platform", goos, "--json"}, nil, &stdout, &stderr); code != exitOK {
			t.Fatalf("plan --platform %s: exit %d: %s", goos, code, stderr.String())
		}
		var rep planReport
		if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Plan.Platform != goos || len(rep.Plan.Features) == 0 || (rep.Seatbelt != nil) != (goos == "darwin") {
			t.Errorf("plan --platform %s: %+v, seatbelt %+v", goos, rep.Plan, rep.Seatbelt)
		}
		if s := rep.Seatbelt; s != nil && s.Error == "" && !strings.Contains(s.Profile, "(deny default)") {
			t.Errorf("seatbelt profile: %+v", s)
		}
		stdout.Reset()
		run([]string{"plan", "--rw", dir, "--platform", goos}, nil, &stdout, &stderr)
		if !strings.HasPrefix(stdout.String(), "Plan on "+goos+": ") || strings.Contains(stdout.String(), "macOS Seatbelt profile") != (goos == "darwin") {
			t.Errorf("plan --platform %s text:\n%s", goos, stdout.String())
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"plan", "--platform", "plan9"}, `no plan for platform "plan9"`},
		{[]string{"plan", "--platform", "darwin", "--entry", "applyself"}, "ApplySelf is not available on macOS"},
		{[]string{"plan", "--entry", "self"}, `--entry "self": want wrap`},
	} {
		_, stderr, code := runInProcess(c.args...)
		if code != exitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%q: exit %d, stderr %q; want %d and %q", c.args, code, stderr, exitUsage, c.want)
		}
	}
}

// plan --describe prints the library's description of the plan, with the
// time limit given.
func TestPlanDescribe(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr strings.Builder
	code := run([]string{"plan", "--rw", dir, "--describe", "--timeout", "45s"}, nil, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("plan --describe exit %d: %s", code, stderr.String())
	}
	p, err := sandbox.PlanFor(sandbox.Config{AllowedWritePaths: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	p = p.For(sandbox.ScopeCommand)
	p.TimeLimit = 45 * time.Second
	if stdout.String() != p.Describe() || !strings.Contains(stdout.String(), "45s") {
		t.Errorf("plan --describe printed:\n%s\nwant:\n%s", stdout.String(), p.Describe())
	}
}

// On Linux, plan, plan --describe and doctor name what WrapCommand and Run
// do of file metadata (plan: by default; ApplySelf's with --entry
// applyself): where the
// mount layer is available (used by default) chmod and utimes by path of
// the user's own files outside the grants fail with EROFS, and elsewhere
// they are not enforced (plan --describe lists the gap); --strict says the
// same (and refuses where the layer is unavailable).
func TestPlanMetadataPerEntryPoint(t *testing.T) {
	if runtime.GOOS != "linux" || !sandbox.Probe().Active {
		t.Skip("the file_metadata entry of WrapCommand/Run is Linux's (and needs an active sandbox)")
	}
	dir := t.TempDir()
	lines := func(args ...string) []string {
		var stdout, stderr strings.Builder
		if code := run(append([]string{"plan", "--rw", dir}, args...), nil, &stdout, &stderr); code != exitOK {
			t.Fatalf("plan %v: exit %d: %s", args, code, stderr.String())
		}
		// Each file_metadata entry with its wrapped continuation lines,
		// in single spaces.
		var out []string
		in := false
		for _, l := range strings.Split(stdout.String(), "\n") {
			switch {
			case strings.HasPrefix(l, "  "+sandbox.FeatureMetadata+" "):
				out = append(out, "")
				in = true
			case !in || !strings.HasPrefix(l, strings.Repeat(" ", 37)):
				in = false
				continue
			}
			out[len(out)-1] = strings.TrimSpace(out[len(out)-1] + " " + strings.Join(strings.Fields(l), " "))
		}
		return out
	}
	p, err := sandbox.PlanFor(sandbox.Config{DenyWritePaths: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	layer := false
	for _, f := range p.Features {
		if f.Feature == sandbox.FeatureDenyWrite && f.Scope == sandbox.ScopeCommand {
			layer = f.Enforced
		}
	}
	want := "file_metadata enforced WrapCommand/Run: everything outside the write paths is a read-only mount"
	if !layer {
		want = "file_metadata NOT enforced WrapCommand/Run: chmod and utimes by path of files the user owns outside the grants are NOT restricted (Landlock has no hook for them, and the mount-namespace layer is unavailable here"
	}
	got := lines()
	if len(got) != 1 || !strings.HasPrefix(got[0], want) {
		t.Errorf("plan's file_metadata lines %q; want one, starting %q (mount layer available: %v)", got, want, layer)
	}
	if self := lines("--entry", "applyself"); len(self) != 1 || !strings.HasPrefix(self[0], "file_metadata enforced ApplySelf: ") {
		t.Errorf("plan --entry applyself's file_metadata lines %q; want ApplySelf's, enforced", self)
	}
	var stdout, stderr strings.Builder
	run([]string{"plan", "--rw", dir, "--describe"}, nil, &stdout, &stderr)
	const gap = "- file_metadata: WrapCommand/Run: chmod and utimes by path of files the user owns outside the grants are NOT restricted"
	if strings.Contains(stdout.String(), gap) == layer {
		t.Errorf("plan --describe (mount layer available: %v) lists the WrapCommand/Run gap %v:\n%s", layer, !layer, stdout.String())
	}
	strict := lines("--strict")
	if len(strict) != 1 || !strings.HasPrefix(strict[0], want) {
		t.Errorf("plan --strict's file_metadata lines %q; want the first to start %q (mount layer available: %v)", strict, want, layer)
	}
}

// schema prints the library's JSON Schema of a Config.
func TestSchema(t *testing.T) {
	var stdout, stderr strings.Builder
	if code := run([]string{"schema"}, nil, &stdout, &stderr); code != exitOK {
		t.Fatalf("schema exit %d: %s", code, stderr.String())
	}
	want, err := sandbox.ConfigSchema()
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal([]byte(stdout.String()), &s); err != nil || strings.TrimSpace(stdout.String()) != string(want) {
		t.Errorf("schema printed (%v):\n%s", err, stdout.String())
	}
	if code := run([]string{"schema", "extra"}, nil, &stdout, &stderr); code != exitUsage {
		t.Errorf("schema extra: exit %d, want %d", code, exitUsage)
	}
	// --request: the schema of a whole run request.
	stdout.Reset()
	want, err = sandbox.RunRequestSchema()
	if err != nil {
		t.Fatal(err)
	}
	if code := run([]string{"schema", "--request"}, nil, &stdout, &stderr); code != exitOK || strings.TrimSpace(stdout.String()) != string(want) {
		t.Errorf("schema --request: exit %d:\n%s", code, stdout.String())
	}
}

// The --max-* flags become Config.Limits, and the plan lists each limit
// once for the entry point asked (--entry).
func TestPlanLimitFlags(t *testing.T) {
	details := func(entry string) (string, int) {
		var stdout, stderr strings.Builder
		code := run([]string{"plan", "--entry", entry, "--max-procs", "64", "--max-memory", "512M", "--max-cpu", "30s", "--max-file-size", "1G", "--max-open-files", "256", "--json"}, nil, &stdout, &stderr)
		if code != exitOK {
			t.Fatalf("plan exit %d: %s", code, stderr.String())
		}
		var rep planReport
		if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
			t.Fatal(err)
		}
		n := 0
		var b strings.Builder
		for _, f := range rep.Plan.Features {
			if strings.HasPrefix(f.Feature, "limit_") {
				n++
				b.WriteString(f.Detail + "\n")
			}
		}
		return b.String(), n
	}
	self, n := details(entryApplySelf)
	if n != 5 {
		t.Errorf("%d limit entries in ApplySelf's plan, want 5:\n%s", n, self)
	}
	if runtime.GOOS == "linux" && sandbox.Probe().Active {
		for _, v := range []string{"RLIMIT_NPROC 64", "RLIMIT_DATA 536870912", "30 s of CPU time", "RLIMIT_FSIZE 1073741824", "RLIMIT_NOFILE 256"} {
			if !strings.Contains(self, v) {
				t.Errorf("ApplySelf's plan does not show %s:\n%s", v, self)
			}
		}
	}
	if wrap, n := details(entryWrap); n != 5 || strings.Contains(wrap, "ApplySelf") {
		t.Errorf("%d limit entries in WrapCommand's plan, want 5, none ApplySelf's:\n%s", n, wrap)
	}
}

// --deny-write, --deny-read and --mount reach the Config and the plan
// shows them (enforced under WrapCommand/Run where the mount layer is
// available, with its steps; not enforced with the reason elsewhere).
func TestPlanMountFlags(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("--mount HOST:AT[:rw] separates with ':', which a Windows path has after its drive letter; Mounts exist only on Linux")
	}
	dir := t.TempDir()
	src := t.TempDir()
	var stdout, stderr strings.Builder
	code := run([]string{"plan", "--rw", dir, "--deny-write", filepath.Join(dir, "ro"), "--deny-read", filepath.Join(dir, ".env"),
		"--mount", src + ":" + filepath.Join(dir, "shown") + ":rw", "--no-git-protection", "--json"}, nil, &stdout, &stderr)
	if code != exitOK {
		t.Fatalf("plan exit %d: %s", code, stderr.String())
	}
	var rep planReport
	if err := json.Unmarshal([]byte(stdout.String()), &rep); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, f := range rep.Plan.Features {
		switch f.Feature {
		case sandbox.FeatureDenyWrite, sandbox.FeatureDenyRead, sandbox.FeatureMounts:
			seen[f.Feature] = true
			if !strings.Contains(f.Detail, "ro") && !strings.Contains(f.Detail, "shown") && !strings.Contains(f.Detail, ".env") &&
				!strings.Contains(f.Detail, "ApplySelf") && !strings.Contains(f.Detail, "unavailable") {
				t.Errorf("%s: detail names nothing: %s", f.Feature, f.Detail)
			}
		case sandbox.FeatureGitProtect:
			t.Errorf("git protection reported with --no-git-protection: %+v", f)
		}
	}
	if len(seen) != 3 {
		t.Errorf("the plan lacks some of deny_write_paths, deny_read_paths, mounts: %v", seen)
	}
	for _, c := range []struct{ arg, want string }{
		{"nocolon", "want HOST:AT"}, {src + ":" + dir + ":ro", "want HOST:AT"}, {":" + dir, "want HOST:AT"},
	} {
		_, errOut, code := runCLI(t, "plan", "--mount", c.arg)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("--mount %q: exit %d %q; want a usage error with %q", c.arg, code, errOut, c.want)
		}
	}
	if _, errOut, code := runCLI(t, "plan", "--deny-read", "~nobody/x"); code != exitUsage || !strings.Contains(errOut, "--deny-read") {
		t.Errorf("--deny-read ~nobody/x: exit %d %q; want a usage error naming the flag", code, errOut)
	}
}

// run says what Run removed after the program: a .git/commondir it
// planted in a protected repository.
func TestRunReportsRemovedCommonDir(t *testing.T) {
	linuxSandbox(t)
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git not installed")
	}
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(git, "init", "-q", ws).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	if p, err := sandbox.PlanFor(sandbox.Config{AllowedWritePaths: []string{ws}}); err != nil || len(p.MountLayer) == 0 {
		t.Skipf("the mount layer is not used here: %v", err)
	}
	_, errOut, _ := runCLI(t, "run", "--rw", ws, "--", "/bin/sh", "-c", "echo /tmp > "+ws+"/.git/commondir")
	want := "sandbox run: removed " + ws + "/.git/commondir"
	if !strings.Contains(errOut, want) {
		t.Errorf("stderr %q; want %q", errOut, want)
	}
	if _, err := os.Lstat(filepath.Join(ws, ".git", "commondir")); err == nil {
		t.Errorf("commondir is still there")
	}
}

// TestRunReportsCreatedRepository: `sandbox run` says so when the program
// made a .git where git will find it for the workspace (see
// RunResult.GitCreated), and leaves it there.
func TestRunReportsCreatedRepository(t *testing.T) {
	linuxSandbox(t)
	ws, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	_, errOut, _ := runCLI(t, "run", "--rw", ws, "--", "/bin/sh", "-c", "echo 'gitdir: /tmp/x' > "+ws+"/.git")
	want := "sandbox run: /bin/sh created " + ws + "/.git: its hooks and config are what the program wrote"
	if !strings.Contains(errOut, want) {
		t.Errorf("stderr %q; want %q", errOut, want)
	}
	if _, err := os.Lstat(filepath.Join(ws, ".git")); err != nil {
		t.Errorf("the .git is gone: %v", err)
	}
}

// machineGaps leaves out only WrapCommand/Run's file_metadata, and only
// where the mount layer is available; every other gap, and that one where
// the layer is unavailable, makes doctor's exit "degraded".
func TestMachineGaps(t *testing.T) {
	meta := sandbox.Enforcement{Feature: sandbox.FeatureMetadata, Scope: sandbox.ScopeCommand}
	selfMeta := sandbox.Enforcement{Feature: sandbox.FeatureMetadata, Scope: sandbox.ScopeApplySelf}
	other := sandbox.Enforcement{Feature: sandbox.FeatureTCPConnect}
	on := &sandbox.Enforcement{Feature: sandbox.FeatureDenyRead, Scope: sandbox.ScopeCommand, Enforced: true}
	off := &sandbox.Enforcement{Feature: sandbox.FeatureDenyRead, Scope: sandbox.ScopeCommand}
	for _, c := range []struct {
		name  string
		fs    []sandbox.Enforcement
		layer *sandbox.Enforcement
		want  int
	}{
		{"metadata with the layer available", []sandbox.Enforcement{meta}, on, 0},
		{"metadata with the layer unavailable", []sandbox.Enforcement{meta}, off, 1},
		{"metadata, layer not probed", []sandbox.Enforcement{meta}, nil, 1},
		{"ApplySelf's metadata counts", []sandbox.Enforcement{selfMeta}, on, 1},
		{"another gap counts", []sandbox.Enforcement{meta, other}, on, 1},
	} {
		if got := len(machineGaps(c.fs, c.layer)); got != c.want {
			t.Errorf("%s: %d gaps, want %d", c.name, got, c.want)
		}
	}
}
