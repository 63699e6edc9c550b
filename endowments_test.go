package sandbox_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/openparallax/sandbox"
)

// parseOK parses a descriptor the test expects to be accepted.
func parseOK(t *testing.T, js string) sandbox.Endowments {
	t.Helper()
	e, err := sandbox.ParseEndowments([]byte(js))
	if err != nil {
		t.Fatalf("ParseEndowments(%s): %v", js, err)
	}
	return e
}

// q is a path as a JSON string.
func q(p string) string { return `"` + filepath.ToSlash(p) + `"` }

func TestEndowmentsVersion(t *testing.T) {
	if e := parseOK(t, `{}`); e.Version != 1 {
		t.Errorf("absent version = %d, want 1", e.Version)
	}
	parseOK(t, `{"version": 1}`)
	for _, v := range []string{"0", "2", "-1"} {
		_, err := sandbox.ParseEndowments([]byte(`{"version": ` + v + `}`))
		var ee *sandbox.EndowmentsError
		if !errors.As(err, &ee) || ee.Field != "version" || !strings.Contains(err.Error(), "version 1") {
			t.Errorf("version %s: %v, want refused naming version 1", v, err)
		}
	}
}

// TestEndowmentsRefused: every rule of the descriptor refuses with the
// field and a reason that says what to write.
func TestEndowmentsRefused(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the descriptor's paths are POSIX paths; the plugin runs on Linux and macOS")
	}
	dir := t.TempDir()
	for _, c := range []struct{ js, field, want string }{
		{`{"fs": [{"path": ` + q(dir) + `, "mode": "rw"}]}`, "fs[0].mode", `"read" or "read-write"`},
		{`{"fs": [{"path": ` + q(dir) + `}]}`, "fs[0].mode", `"read" or "read-write"`},
		{`{"fs": [{"path": "work/x", "mode": "read"}]}`, "fs[0].path", "not absolute"},
		{`{"fs": [{"path": ` + q(dir+"/a/../b") + `, "mode": "read"}]}`, "fs[0].path", `".."`},
		{`{"fs": [{"path": ` + q(dir+"/missing") + `, "mode": "read"}]}`, "fs[0].path", "does not exist"},
		{`{"fs": [{"path": "", "mode": "read"}]}`, "fs[0].path", "empty"},
		{`{"fs": [{"path": ` + q(dir) + `, "mode": "read", "mountAt": "workspace"}]}`, "fs[0].mountAt", "/workspace"},
		{`{"fs": [{"path": ` + q(dir) + `, "mode": "read", "mountAt": "/"}]}`, "fs[0].mountAt", "root"},
		{`{"fs": [{"path": ` + q(dir) + `, "mode": "read", "mountAt": "/w"}, {"path": ` + q(dir) + `, "mode": "read", "mountAt": "/w/"}]}`, "fs[1].mountAt", "fs[0]"},
		{`{"net": {"allowHosts": ["example.com"]}}`, "net.allowHosts", `"outbound": true`},
		{`{"net": {"allowPorts": [443]}}`, "net.allowPorts", `"outbound": true`},
		{`{"net": {"inbound": true}}`, "net.inbound", "allowPorts"},
		{`{"net": {"outbound": true, "allowPorts": [0]}}`, "net.allowPorts[0]", "1 to 65535"},
		{`{"net": {"outbound": true, "allowPorts": [70000]}}`, "net.allowPorts[0]", "1 to 65535"},
		{`{"net": {"outbound": true, "allowHosts": ["https://example.com"]}}`, "net.allowHosts[0]", "URL"},
		{`{"net": {"outbound": true, "allowHosts": ["example.com:443"]}}`, "net.allowHosts[0]", "allowPorts"},
		{`{"net": {"outbound": true, "allowHosts": ["*.example.com"]}}`, "net.allowHosts[0]", "wildcard"},
		{`{"net": {"outbound": true, "allowHosts": ["*"]}}`, "net.allowHosts[0]", "omit allowHosts"},
		{`{"net": {"outbound": true, "allowHosts": ["[::1]"]}}`, "net.allowHosts[0]", "without brackets"},
		{`{"net": {"outbound": true, "allowHosts": ["10.0.0.0/33"]}}`, "net.allowHosts[0]", "CIDR"},
		{`{"net": {"outbound": true, "allowHosts": ["bad host"]}}`, "net.allowHosts[0]", "not a host name"},
		{`{"net": {"outbound": true, "inbound": true, "allowHosts": ["a.example", "localhost"], "allowPorts": [8080]}}`, "net.allowHosts[1]", "drop inbound or this host"},
		{`{"net": {"outbound": true, "inbound": true, "allowHosts": ["127.0.0.0/8"], "allowPorts": [8080]}}`, "net.allowHosts[0]", "drop inbound"},
		{`{"net": {"outbound": true, "inbound": true, "allowHosts": ["::1"], "allowPorts": [8080]}}`, "net.allowHosts[0]", "drop inbound"},
		{`{"exec": {"allowPaths": ["bin"]}}`, "exec.allowPaths[0]", "not absolute"},
		{`{"exec": {"allowPaths": [` + q(dir+"/none") + `]}}`, "exec.allowPaths[0]", "does not exist"},
		{`{"env": {"A=B": "x"}}`, "env", `"="`},
		{`{"env": {"": "x"}}`, "env", "name"},
		{`{"env": {"A": "x\u0000y"}}`, "env", "NUL"},
		{`{"devices": ["speaker"]}`, "devices[0]", `"camera", "microphone"`},
		{`{"devices": [` + q(dir) + `]}`, "devices[0]", "not a device"},
	} {
		_, err := sandbox.ParseEndowments([]byte(c.js))
		var ee *sandbox.EndowmentsError
		if !errors.As(err, &ee) || ee.Field != c.field || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n  got  %v\n  want an EndowmentsError for %s saying %q", c.js, err, c.field, c.want)
		}
	}
}

// TestEndowmentsJSON: unknown fields at any level and trailing data are
// refused, and the error lists the fields there are.
func TestEndowmentsJSON(t *testing.T) {
	for _, js := range []string{
		`{"filesystem": []}`,
		`{"net": {"allowhosts": ["x"]}}`,
		`{"fs": [{"path": "/", "mode": "read", "mount_at": "/w"}]}`,
		`{"exec": {"paths": []}}`,
		`{} {}`,
		`{"net": {"allowPorts": [1.5]}}`,
		`[]`,
	} {
		_, err := sandbox.ParseEndowments([]byte(js))
		if err == nil || !strings.HasPrefix(err.Error(), "endowments: ") {
			t.Errorf("%s: %v, want refused", js, err)
		}
	}
	// encoding/json would take these case-insensitively; the plugin's
	// shapes would not.
	for _, js := range []string{`{"Version": 1}`, `{"net": {"allowhosts": ["x"]}}`, `{"fs": [{"Path": "/", "mode": "read"}]}`, `{"exec": {"allowpaths": []}}`} {
		_, err := sandbox.ParseEndowments([]byte(js))
		var ee *sandbox.EndowmentsError
		if !errors.As(err, &ee) || !strings.Contains(err.Error(), "unknown field") || !strings.Contains(err.Error(), "the fields there are") {
			t.Errorf("%s: %v, want the name refused with the names there are", js, err)
		}
	}
}

func TestEndowmentsConnect(t *testing.T) {
	for _, c := range []struct {
		net  sandbox.NetEndowment
		want []string
	}{
		{sandbox.NetEndowment{}, nil},
		{sandbox.NetEndowment{AllowHosts: []string{"x.example"}, AllowPorts: []int{1}}, nil}, // not outbound: nothing
		{sandbox.NetEndowment{Outbound: true}, []string{"*:*"}},
		{sandbox.NetEndowment{Outbound: true, AllowPorts: []int{443, 80}}, []string{"*:443", "*:80"}},
		{sandbox.NetEndowment{Outbound: true, AllowHosts: []string{"api.example.com", "10.1.2.3"}}, []string{"api.example.com:*", "10.1.2.3:*"}},
		{sandbox.NetEndowment{Outbound: true, AllowHosts: []string{"localhost", "10.0.0.0/8"}, AllowPorts: []int{443, 8443}},
			[]string{"localhost:443", "localhost:8443", "10.0.0.0/8:443", "10.0.0.0/8:8443"}},
		{sandbox.NetEndowment{Outbound: true, AllowHosts: []string{"::1", "fd00::/8"}, AllowPorts: []int{443}}, []string{"[::1]:443", "[fd00::/8]:443"}},
		{sandbox.NetEndowment{Outbound: true, AllowHosts: []string{"fd00::/8"}}, []string{"[fd00::/8]:*"}},
		{sandbox.NetEndowment{Outbound: true, AllowHosts: []string{"a.example", "a.example"}, AllowPorts: []int{1, 1}}, []string{"a.example:1"}},
		{sandbox.NetEndowment{Inbound: true, AllowPorts: []int{8080}}, nil},
	} {
		if got := c.net.Connect(); !slices.Equal(got, c.want) {
			t.Errorf("%+v: Connect() = %q, want %q", c.net, got, c.want)
		}
	}
}

// TestEndowmentsConfig maps every field.
func TestEndowmentsConfig(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the descriptor's paths are POSIX paths; the plugin runs on Linux and macOS")
	}
	dir := t.TempDir()
	ro, rw, src, bin := filepath.Join(dir, "ro"), filepath.Join(dir, "rw"), filepath.Join(dir, "src"), filepath.Join(dir, "bin")
	for _, d := range []string{ro, rw, src, bin} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e := parseOK(t, `{"fs": [{"path": `+q(ro+"/")+`, "mode": "read"}, {"path": `+q(rw)+`, "mode": "read-write"},
		{"path": `+q(src)+`, "mode": "read-write", "mountAt": "/workspace/"}, {"path": `+q(ro)+`, "mode": "read", "mountAt": "/data"}],
		"net": {"outbound": true, "inbound": true, "allowHosts": ["api.example.com"], "allowPorts": [8080]},
		"exec": {"allowPaths": [`+q(bin)+`]}, "env": {"PATH": "/usr/bin", "LANG": "C"}, "devices": ["camera", "microphone", "/dev/null"]}`)
	got := e.Config()
	want := sandbox.Config{
		AllowedReadPaths:  []string{ro},
		AllowedWritePaths: []string{rw, "/dev/null"},
		Mounts:            []sandbox.Mount{{Path: src, At: "/workspace", Write: true}, {Path: ro, At: "/data"}},
		AllowedTCPConnect: []string{"api.example.com:8080"},
		AllowedTCPBind:    []uint16{8080},
		AllowedExecPaths:  []string{bin},
		AllowProcessSpawn: true,
		Env:               map[string]string{"PATH": "/usr/bin", "LANG": "C"},
		AllowCamera:       true,
		AllowMicrophone:   true,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Config():\n  got  %+v\n  want %+v", got, want)
	}
	if e.FS[0].Path != ro || e.FS[2].MountAt != "/workspace" {
		t.Errorf("paths not cleaned in the record: %+v", e.FS)
	}

	// Nothing granted: nothing in the Config, and an empty (not nil)
	// environment: nothing of the caller's.
	empty := parseOK(t, `{}`).Config()
	if empty.Env == nil || len(empty.Env) != 0 {
		t.Errorf("no env: Config.Env = %#v, want an empty map", empty.Env)
	}
	empty.Env = nil
	if !reflect.DeepEqual(empty, sandbox.Config{}) {
		t.Errorf("{}: Config() = %+v, want the zero Config", empty)
	}
}

// TestEndowmentsRequest: the command must be one exec.allowPaths grants,
// found in env's PATH or in exec.allowPaths; timeout and cwd defaults.
func TestEndowmentsRequest(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the descriptor's paths are POSIX paths; the plugin runs on Linux and macOS")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	os.Mkdir(bin, 0o755)
	tool := filepath.Join(bin, "tool")
	if err := os.WriteFile(tool, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other")
	os.WriteFile(other, []byte("#!/bin/sh\n"), 0o755)

	e := parseOK(t, `{"exec": {"allowPaths": [`+q(bin)+`]}}`)
	r, err := e.Request([]string{"tool", "a", "b"}, "", 0)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Command, []string{tool, "a", "b"}) || r.Timeout != 30*time.Second || r.Dir != "" {
		t.Errorf("Request = %+v, want %s a b, 30s, no dir", r, tool)
	}
	if r, err := e.Request([]string{tool}, dir+"/", 1500*time.Millisecond); err != nil || r.Dir != dir || r.Timeout != 1500*time.Millisecond {
		t.Errorf("Request with cwd and timeout = %+v, %v", r, err)
	}
	// A file in exec.allowPaths is found by its name.
	if r, err := parseOK(t, `{"exec": {"allowPaths": [`+q(tool)+`]}}`).Request([]string{"tool"}, "", 0); err != nil || r.Command[0] != tool {
		t.Errorf("file entry: %+v, %v", r, err)
	}
	// With env's PATH the name is looked up there only.
	if _, err := parseOK(t, `{"exec": {"allowPaths": [`+q(bin)+`]}, "env": {"PATH": "/nonexistent"}}`).Request([]string{"tool"}, "", 0); err == nil ||
		!strings.Contains(err.Error(), `env's PATH "/nonexistent"`) {
		t.Errorf("name not in env's PATH: %v", err)
	}
	for _, c := range []struct {
		cmd  []string
		dir  string
		tout time.Duration
		want string
	}{
		{nil, "", 0, "want the program"},
		{[]string{"nothere"}, "", 0, "not found in exec.allowPaths"},
		{[]string{other}, "", 0, "add " + other + " or its directory " + dir},
		{[]string{"bin/tool"}, "", 0, "must be absolute"},
		{[]string{tool}, "rel", 0, "absolute"},
		{[]string{tool}, "", -time.Second, "positive"},
	} {
		if _, err := e.Request(c.cmd, c.dir, c.tout); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Request(%q, %q, %v) = %v, want an error saying %q", c.cmd, c.dir, c.tout, err, c.want)
		}
	}
}

// plan is a Plan with the given WrapCommand/Run entries not enforced.
func plan(notEnforced ...string) sandbox.Plan {
	p := sandbox.Plan{Platform: "test", Mechanism: "test", Available: true}
	for _, f := range []string{sandbox.FeatureFilesystem, sandbox.FeatureExec, sandbox.FeatureTCPConnect, sandbox.FeatureTCPHost,
		sandbox.FeatureTCPBind, sandbox.FeatureUDP, sandbox.FeatureMounts, sandbox.FeatureCamera, sandbox.FeatureMicrophone} {
		p.Features = append(p.Features, sandbox.Enforcement{Feature: f, Enforced: !slices.Contains(notEnforced, f), Detail: f + " detail", Scope: sandbox.ScopeCommand})
	}
	// ApplySelf's entries do not count for Run.
	p.Features = append(p.Features, sandbox.Enforcement{Feature: sandbox.FeatureTCPHost, Scope: sandbox.ScopeApplySelf, Detail: "not for Run"})
	return p
}

func TestEndowmentsEffective(t *testing.T) {
	base := sandbox.Endowments{Version: 1,
		FS:   []sandbox.FSEndowment{{Path: "/p", Mode: "read"}, {Path: "/s", Mode: "read-write", MountAt: "/workspace"}},
		Net:  sandbox.NetEndowment{Outbound: true, AllowHosts: []string{"a.example"}, AllowPorts: []int{443}},
		Exec: sandbox.ExecEndowment{AllowPaths: []string{"/usr/bin"}}, Env: map[string]string{"A": "1"}}

	eff, dropped, err := base.Effective(plan())
	if err != nil || len(dropped) != 0 || !reflect.DeepEqual(eff, base) {
		t.Errorf("all enforced: %+v %v %v, want the descriptor itself", eff, dropped, err)
	}

	eff, dropped, err = base.Effective(plan(sandbox.FeatureFilesystem, sandbox.FeatureExec, sandbox.FeatureTCPHost, sandbox.FeatureUDP))
	if err != nil {
		t.Fatal(err)
	}
	wantFS := []sandbox.FSEndowment{{Path: "/", Mode: "read-write"}, {Path: "/s", Mode: "read-write", MountAt: "/workspace"}}
	if !reflect.DeepEqual(eff.FS, wantFS) || !slices.Equal(eff.Exec.AllowPaths, []string{"/"}) ||
		eff.Net.AllowHosts != nil || !slices.Equal(eff.Net.AllowPorts, []int{443}) || !eff.Net.Outbound {
		t.Errorf("widened: %+v", eff)
	}
	var names []string
	for _, d := range dropped {
		names = append(names, d.Feature)
	}
	if !slices.Equal(names, []string{sandbox.FeatureFilesystem, sandbox.FeatureExec, sandbox.FeatureTCPHost, sandbox.FeatureUDP}) {
		t.Errorf("dropped = %v", names)
	}
	if base.FS[0].Path != "/p" || base.Exec.AllowPaths[0] != "/usr/bin" {
		t.Errorf("Effective changed its receiver: %+v", base)
	}

	eff, _, _ = base.Effective(plan(sandbox.FeatureTCPConnect))
	if !eff.Net.Outbound || eff.Net.AllowHosts != nil || eff.Net.AllowPorts != nil {
		t.Errorf("tcp_connect not enforced: net = %+v, want outbound to anything", eff.Net)
	}
	in := sandbox.Endowments{Version: 1, Net: sandbox.NetEndowment{Inbound: true, AllowPorts: []int{8080}}}
	if eff, _, _ := in.Effective(plan(sandbox.FeatureTCPBind, sandbox.FeatureTCPConnect)); !eff.Net.Inbound || !eff.Net.Outbound || !slices.Equal(eff.Net.AllowPorts, []int{8080}) {
		t.Errorf("inbound with connect and bind not enforced: %+v", eff.Net)
	}

	// Grants that change what the program sees are refused, not dropped.
	_, _, err = base.Effective(plan(sandbox.FeatureMounts))
	var ee *sandbox.EndowmentsError
	if !errors.As(err, &ee) || ee.Field != "fs[1].mountAt" || !strings.Contains(err.Error(), "mounts detail") {
		t.Errorf("mounts not enforced: %v, want fs[1].mountAt refused with the plan's reason", err)
	}
	cam := sandbox.Endowments{Version: 1, Devices: []string{"/dev/null", "camera"}}
	if _, _, err := cam.Effective(plan(sandbox.FeatureCamera)); !errors.As(err, &ee) || ee.Field != "devices[1]" {
		t.Errorf("camera not enforceable: %v, want devices[1] refused", err)
	}
	if _, _, err := base.Effective(sandbox.Plan{Available: false, Reason: "no landlock"}); err == nil || !strings.Contains(err.Error(), "no landlock") {
		t.Errorf("unavailable: %v, want refused with the reason", err)
	}
}

// TestEndowmentsEffectiveHere: the real plan of this machine for a
// descriptor, as `sandbox plan --endowments` makes it.
func TestEndowmentsEffectiveHere(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the plugin runs on Linux and macOS")
	}
	dir := t.TempDir()
	e := parseOK(t, `{"fs": [{"path": `+q(dir)+`, "mode": "read-write"}], "exec": {"allowPaths": ["/bin"]}}`)
	p, err := sandbox.PlanFor(e.Config())
	if err != nil {
		t.Fatal(err)
	}
	eff, dropped, err := e.Effective(p)
	if !p.Available {
		if err == nil {
			t.Fatal("no sandbox here, and Effective did not refuse")
		}
		t.Skipf("no sandbox on this machine: %s", p.Reason)
	}
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dropped {
		if d.Enforced || d.Scope == sandbox.ScopeApplySelf {
			t.Errorf("dropped an entry that is enforced or not Run's: %+v", d)
		}
	}
	if !slices.ContainsFunc(p.Features, func(f sandbox.Enforcement) bool { return f.Feature == sandbox.FeatureFilesystem && !f.Enforced }) &&
		!reflect.DeepEqual(eff.FS, e.FS) {
		t.Errorf("filesystem enforced here, yet the effective fs differs: %+v", eff.FS)
	}
}
