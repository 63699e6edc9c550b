package sandbox_test

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openparallax/sandbox"
)

func describe(t *testing.T, cfg sandbox.Config) (sandbox.Plan, string) {
	t.Helper()
	p, err := sandbox.PlanFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p, p.Describe()
}

// The description follows the Config: each grant changes it and is named in
// it.
func TestDescribeFollowsConfig(t *testing.T) {
	ws, data := t.TempDir(), t.TempDir()
	ws, _ = filepath.EvalSymlinks(ws)
	data, _ = filepath.EvalSymlinks(data)
	// A program file that exists on every platform: this test's binary.
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if bin, err = filepath.EvalSymlinks(bin); err != nil {
		t.Fatal(err)
	}
	_, base := describe(t, sandbox.Config{})
	cases := []struct {
		name string
		cfg  sandbox.Config
		want string
	}{
		{"write path", sandbox.Config{AllowedWritePaths: []string{ws}}, ws},
		{"read path", sandbox.Config{AllowedReadPaths: []string{data}}, data},
		{"connect", sandbox.Config{AllowedTCPConnect: []string{"*:8443"}}, "*:8443"},
		{"bind", sandbox.Config{AllowedTCPBind: []uint16{8081}}, "8081"},
		{"spawn", sandbox.Config{AllowProcessSpawn: true}, "can start child processes"},
		{"udp", sandbox.Config{AllowUDP: true}, "UDP to and from any host"},
		{"unix sockets", sandbox.Config{AllowUnixSockets: true}, "can create unix domain sockets"},
		{"exec", sandbox.Config{AllowedExecPaths: []string{bin}},
			"It can run only these programs (and the interpreters they need, the targets of symlinks in them, and the helper programs of git, gcc and go): " + bin},
		{"camera", sandbox.Config{AllowCamera: true}, "can use the camera"},
		{"microphone", sandbox.Config{AllowMicrophone: true}, "can use the microphone"},
		{"deny write", sandbox.Config{AllowedWritePaths: []string{ws}, DenyWritePaths: []string{filepath.Join(ws, ".git")}},
			"These stay read-only even inside writable paths: " + filepath.Join(ws, ".git")},
		{"mount", sandbox.Config{Mounts: []sandbox.Mount{{Path: data, At: filepath.Join(ws, "at")}}},
			"It sees " + data + " at " + filepath.Join(ws, "at") + " (read-only)"},
		{"writable mount", sandbox.Config{Mounts: []sandbox.Mount{{Path: data, At: filepath.Join(ws, "at"), Write: true}}},
			"It sees " + data + " at " + filepath.Join(ws, "at") + " (writable)"},
		{"deny read", sandbox.Config{AllowedWritePaths: []string{ws}, DenyReadPaths: []string{filepath.Join(ws, "secret")}}, filepath.Join(ws, "secret")},
		{"private root", sandbox.Config{PrivateRoot: true}, "It has a root of its own"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, d := describe(t, c.cfg)
			if !p.Available {
				t.Skipf("no sandbox mechanism here: %s", p.Reason)
			}
			if d == base || !strings.Contains(d, c.want) {
				t.Errorf("description for %s does not mention %q (or equals the empty Config's):\n%s", c.name, c.want, d)
			}
		})
	}
	if p, _ := describe(t, sandbox.Config{}); p.Available && !strings.Contains(base, "cannot start other processes") {
		t.Errorf("empty Config's description does not say spawning is denied:\n%s", base)
	}
}

// Every unenforced feature is named with its reason, in a real plan and in
// one whose every feature is unenforced (including one Describe does not
// know); a sentence about an unenforced feature says so where it stands.
func TestDescribeNamesEveryUnenforcedFeature(t *testing.T) {
	ws := t.TempDir()
	real, _ := describe(t, sandbox.Config{
		AllowedWritePaths: []string{ws}, AllowedTCPConnect: []string{"example.com:443"},
		DenyWritePaths: []string{filepath.Join(ws, ".git")}, DenyReadPaths: []string{filepath.Join(ws, ".env")},
		Mounts: []sandbox.Mount{{Path: ws, At: filepath.Join(ws, "at")}}, AllowCamera: true, AllowMicrophone: true,
	})
	synthetic := sandbox.Plan{Platform: "plan9", Mechanism: "test", Available: true}
	for _, f := range []string{sandbox.FeatureFilesystem, sandbox.FeatureExec, sandbox.FeatureTCPConnect, sandbox.FeatureSpawn,
		sandbox.FeatureUDP, sandbox.FeatureCamera, "a_feature_describe_does_not_know"} {
		synthetic.Features = append(synthetic.Features, sandbox.Enforcement{Feature: f, Detail: "reason for " + f, Hint: "remedy for " + f})
	}
	for name, p := range map[string]sandbox.Plan{"real": real, "synthetic": synthetic} {
		d := p.Describe()
		if len(p.NotEnforced()) == 0 {
			t.Logf("%s: every feature is enforced here", name)
		}
		for _, f := range p.NotEnforced() {
			if !strings.Contains(d, f.Feature+": "+f.Detail) || (f.Hint != "" && !strings.Contains(d, f.Hint)) {
				t.Errorf("%s: description does not name unenforced %s with its reason %q:\n%s", name, f.Feature, f.Detail, d)
			}
		}
		if strings.Contains(d, "Everything above is enforced") != (len(p.NotEnforced()) == 0) {
			t.Errorf("%s: the closing line contradicts the plan:\n%s", name, d)
		}
	}
	d := synthetic.Describe()
	for _, s := range []string{"off limits: reading, writing, creating or listing it fails with a permission error (NOT enforced", "cannot start other processes: creating one fails with a permission error (NOT enforced"} {
		if !strings.Contains(d, s) {
			t.Errorf("synthetic plan: %q not marked unenforced where it stands:\n%s", s, d)
		}
	}
}

func TestDescribeUnavailableAndTimeLimit(t *testing.T) {
	p := sandbox.Plan{Platform: "plan9", Mechanism: "none", Reason: "no mechanism on plan9",
		Features: []sandbox.Enforcement{{Feature: sandbox.FeatureFilesystem, Detail: "sandbox unavailable: no mechanism on plan9"}}}
	d := p.Describe()
	if !strings.Contains(d, "No sandbox is in force") || !strings.Contains(d, "no mechanism on plan9") || strings.Contains(d, "permission error") {
		t.Errorf("unavailable plan:\n%s", d)
	}
	if !strings.Contains(d, "no time limit") {
		t.Errorf("no time limit not stated:\n%s", d)
	}
	p.TimeLimit = 90 * time.Second
	if d := p.Describe(); !strings.Contains(d, "stopped after 1m30s") {
		t.Errorf("time limit not stated:\n%s", d)
	}
}

// TestDescribeOtherPlatform: the plan of another OS, computed here, does
// not say "on this machine" (sandbox plan --describe --platform).
func TestDescribeOtherPlatform(t *testing.T) {
	other := "darwin"
	if runtime.GOOS == "darwin" {
		other = "windows"
	}
	p, err := sandbox.PlanForPlatform(sandbox.Config{}, other)
	if err != nil {
		t.Fatal(err)
	}
	d := p.Describe()
	if strings.Contains(d, "this machine") || !strings.Contains(d, "on a "+other+" machine") {
		t.Errorf("the %s plan's description:\n%s", other, d)
	}
}

// TestDescribeOwnRoot: with a root of its own, a path outside the grants
// is not found, and the description says so instead of promising a
// permission error (an agent would otherwise read ENOENT as "missing").
func TestDescribeOwnRoot(t *testing.T) {
	p, err := sandbox.PlanFor(sandbox.Config{AllowedWritePaths: []string{t.TempDir()}, PrivateRoot: true})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(p.Features, func(e sandbox.Enforcement) bool { return e.Feature == sandbox.FeaturePrivateRoot })
	if i < 0 || !p.Features[i].Enforced {
		t.Skip("no own root in force here (the mount layer needs user namespaces): nothing to describe")
	}
	d := p.For(sandbox.ScopeCommand).Describe()
	if !strings.Contains(d, "does not exist for it") || !strings.Contains(d, "(ENOENT)") || strings.Contains(d, "is off limits: reading") {
		t.Errorf("description with the own root:\n%s", d)
	}
}
