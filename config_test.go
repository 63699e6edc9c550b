package sandbox_test

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/openparallax/sandbox"
)

func TestConfigRejectsBadPaths(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name, path, reason string
	}{
		{"relative", "relative/path", "not absolute"},
		{"empty", "", "empty path"},
		{"dotdot", dir + "/a/../b", `".." segment`},
		{"nul", dir + "\x00x", "control character"},
		{"newline", dir + "\nx", "control character"},
		{"del", dir + "\x7f", "control character"},
		{"c1", dir + "\u0085", "control character"},
		{"invalid-utf8", dir + "\xff", "UTF-8"},
		{"missing", filepath.Join(dir, "does-not-exist"), "does not exist"},
	}
	if runtime.GOOS == "windows" {
		cases[0].path = `relative\path`
	}
	for _, field := range []string{"allowed_read_paths", "allowed_write_paths", "allowed_exec_paths"} {
		for _, c := range cases {
			t.Run(field+"/"+c.name, func(t *testing.T) {
				var cfg sandbox.Config
				switch field {
				case "allowed_read_paths":
					cfg.AllowedReadPaths = []string{c.path}
				case "allowed_write_paths":
					cfg.AllowedWritePaths = []string{c.path}
				default:
					cfg.AllowedExecPaths = []string{c.path}
				}
				err := cfg.Validate()
				if !errors.Is(err, sandbox.ErrInvalidConfig) {
					t.Fatalf("Validate(%q) = %v, want ErrInvalidConfig", c.path, err)
				}
				var ce *sandbox.ConfigError
				if !errors.As(err, &ce) || ce.Field != field || ce.Value != c.path || !strings.Contains(ce.Reason, c.reason) {
					t.Fatalf("error %v does not name field %s, value %q and reason %q", err, field, c.path, c.reason)
				}
				if _, err := sandbox.PlanFor(cfg); !errors.Is(err, sandbox.ErrInvalidConfig) {
					t.Fatalf("PlanFor accepted %q: %v", c.path, err)
				}
			})
		}
	}
}

func TestConfigResolvesSymlinks(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need privileges on Windows")
	}
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	plan, err := sandbox.PlanFor(sandbox.Config{AllowedWritePaths: []string{link + "/"}})
	if err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "linux" {
		return // rules are only listed where the mechanism makes them
	}
	if !plan.Available {
		t.Logf("no rules are made without the mechanism: %s", plan.Reason)
		return
	}
	want, _ := filepath.EvalSymlinks(real)
	found := false
	for _, r := range plan.Paths {
		if r.Path == link {
			t.Errorf("rule made on the symlink %s itself", link)
		}
		if r.Path == want && strings.Contains(r.Source, "allowed_write_paths") {
			found = true
		}
	}
	if !found {
		t.Errorf("no write rule on the symlink target %s: %+v", want, plan.Paths)
	}
}

func TestParseEndpoint(t *testing.T) {
	good := map[string]sandbox.Endpoint{
		"localhost:80":           {Host: "localhost", Port: 80},
		"LocalHost:80":           {Host: "localhost", Port: 80},
		"127.0.0.1:8080":         {Host: "127.0.0.1", Port: 8080},
		"[::1]:443":              {Host: "::1", Port: 443},
		"*:443":                  {Host: "*", Port: 443},
		":443":                   {Host: "*", Port: 443},
		"Example.COM:443":        {Host: "example.com", Port: 443},
		"api.example.com.:1":     {Host: "api.example.com", Port: 1},
		"[::ffff:1.2.3.4]:65535": {Host: "1.2.3.4", Port: 65535},
		"10.0.0.0/8:443":         {Host: "10.0.0.0/8", Port: 443},
		"[fd00::/8]:*":           {Host: "fd00::/8", AnyPort: true},
		"10.1.2.3/32:443":        {Host: "10.1.2.3", Port: 443},
	}
	for in, want := range good {
		got, err := sandbox.ParseEndpoint(in)
		if err != nil || got != want {
			t.Errorf("ParseEndpoint(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	bad := []string{
		"", "localhost", "localhost:0", "localhost:65536", "localhost:-1", "localhost:+80",
		"localhost:http", "localhost:0x50", "http://example.com:80", "10.1.2.3/8:80",
		"*.example.com:443", "exa mple.com:80", "[fe80::1%eth0]:80", "host:80\x00",
		"-bad.example:80", "a..b:80", "localhost:99999999999999999999",
		// any-port forms: "*" is the whole port or nothing
		"host:", "host:*x", "host:x*", "host:**", "host:*1", "host:1*", "host: *", "host:1-2",
		"host:*:*", "*", "[::1]*", "*.example.com:*", "0.0.0.0/0:*", "[fd00::]/8:*",
		// brackets hold an IPv6 address only
		"[127.0.0.1]:80", "[localhost]:80", "[example.com]:443", "[*]:443", "[]:443",
	}
	for _, in := range bad {
		if ep, err := sandbox.ParseEndpoint(in); err == nil {
			t.Errorf("ParseEndpoint(%q) = %+v, want error", in, ep)
		}
		err := sandbox.Config{AllowedTCPConnect: []string{in}}.Validate()
		var ce *sandbox.ConfigError
		if !errors.As(err, &ce) || ce.Field != "allowed_tcp_connect" || ce.Value != in {
			t.Errorf("Validate with connect %q = %v, want ConfigError naming the field and value", in, err)
		}
	}
}

func TestConfigJSONFieldNames(t *testing.T) {
	in := `{"allowed_read_paths":["/r"],"allowed_write_paths":["/w"],"allowed_tcp_connect":["*:443"],
		"allowed_tcp_bind":[8080],"allow_process_spawn":true,"allowed_exec_paths":["/bin/true"],
		"allow_unix_sockets":true,"allow_udp":true,"strict":true}`
	var cfg sandbox.Config
	dec := json.NewDecoder(strings.NewReader(in))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		t.Fatal(err)
	}
	want := sandbox.Config{
		AllowedReadPaths: []string{"/r"}, AllowedWritePaths: []string{"/w"}, AllowedTCPConnect: []string{"*:443"},
		AllowedTCPBind: []uint16{8080}, AllowProcessSpawn: true, AllowedExecPaths: []string{"/bin/true"},
		AllowUnixSockets: true, AllowUDP: true, Strict: true,
	}
	got, _ := json.Marshal(cfg)
	exp, _ := json.Marshal(want)
	if string(got) != string(exp) {
		t.Fatalf("decoded %s, want %s", got, exp)
	}
}

// The round-2 fields are validated like the others, and a platform without
// the layer they need reports each of them as not enforced, so that Strict
// refuses them instead of ignoring them.
func TestRoundTwoFieldsValidatedAndReported(t *testing.T) {
	dir := t.TempDir()
	if runtime.GOOS == "windows" {
		t.Skip("the deny paths and mounts use Unix paths in this test")
	}
	for name, cfg := range map[string]sandbox.Config{
		"deny_write relative": {DenyWritePaths: []string{"rel"}},
		"deny_read dotdot":    {DenyReadPaths: []string{dir + "/a/../b"}},
		"mount missing path":  {Mounts: []sandbox.Mount{{Path: dir + "/nope", At: "/x"}}},
		"mount relative at":   {Mounts: []sandbox.Mount{{Path: dir, At: "x"}}},
		"mount over root":     {Mounts: []sandbox.Mount{{Path: dir, At: "/"}}},
	} {
		if err := cfg.Validate(); !errors.Is(err, sandbox.ErrInvalidConfig) {
			t.Errorf("%s: Validate = %v, want ErrInvalidConfig", name, err)
		}
	}

	// A deny path need not exist: a protected path must not become
	// creatable, so it is named before it is there.
	cfg := sandbox.Config{
		AllowedWritePaths: []string{dir},
		DenyWritePaths:    []string{dir + "/.git/hooks"},
		DenyReadPaths:     []string{dir + "/.env"},
		Mounts:            []sandbox.Mount{{Path: dir, At: "/workspace"}},
		AllowCamera:       true,
		AllowMicrophone:   true,
	}
	plan, err := sandbox.PlanFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]sandbox.Enforcement{}
	for _, f := range plan.Features {
		got[f.Feature] = f
	}
	want := []string{sandbox.FeatureDenyWrite, sandbox.FeatureDenyRead, sandbox.FeatureMounts}
	if runtime.GOOS != "darwin" {
		want = append(want, sandbox.FeatureCamera, sandbox.FeatureMicrophone)
	}
	for _, name := range want {
		f, ok := got[name]
		if !ok {
			t.Errorf("plan does not mention %s: %+v", name, plan.Features)
			continue
		}
		if f.Enforced || f.Detail == "" {
			t.Errorf("%s: %+v, want reported as not enforced with a reason", name, f)
		}
	}
	if runtime.GOOS == "darwin" {
		if !got[sandbox.FeatureCamera].Enforced || !got[sandbox.FeatureMicrophone].Enforced {
			t.Errorf("macOS grants camera and microphone through Seatbelt: %+v", plan.Features)
		}
	}
	if plan.Available && runtime.GOOS == "linux" {
		cfg.Strict = true
		err := sandbox.New().WrapCommand(exec.Command("/bin/true"), cfg)
		if !errors.Is(err, sandbox.ErrNotEnforced) || !strings.Contains(err.Error(), sandbox.FeatureDenyWrite) {
			t.Errorf("Strict WrapCommand with an unenforced deny path: %v, want ErrNotEnforced naming %s", err, sandbox.FeatureDenyWrite)
		}
	}
}

// "host:*" (any port) and "*:*" (any TCP): parsed into an Endpoint whose
// Port is 0 with AnyPort set, written back as given.
func TestParseEndpointAnyPort(t *testing.T) {
	good := map[string]sandbox.Endpoint{
		"api.example.com:*":   {Host: "api.example.com", AnyPort: true},
		"API.Example.com.:*":  {Host: "api.example.com", AnyPort: true},
		"10.1.2.3:*":          {Host: "10.1.2.3", AnyPort: true},
		"[::ffff:10.1.2.3]:*": {Host: "10.1.2.3", AnyPort: true},
		"[::1]:*":             {Host: "::1", AnyPort: true},
		"localhost:*":         {Host: "localhost", AnyPort: true},
		"LOCALHOST:*":         {Host: "localhost", AnyPort: true},
		"*:*":                 {Host: "*", AnyPort: true},
		":*":                  {Host: "*", AnyPort: true},
	}
	for in, want := range good {
		got, err := sandbox.ParseEndpoint(in)
		if err != nil || got != want {
			t.Errorf("ParseEndpoint(%q) = %+v, %v; want %+v", in, got, err, want)
			continue
		}
		if got.Port != 0 || !strings.HasSuffix(got.String(), ":*") {
			t.Errorf("%q: Port %d, String %q: want port 0 and \":*\"", in, got.Port, got.String())
		}
		if again, err := sandbox.ParseEndpoint(got.String()); err != nil || again != got {
			t.Errorf("%q: String %q parses to %+v, %v", in, got.String(), again, err)
		}
		if got.Unrestricted() != (got.Host == "*") {
			t.Errorf("%q: Unrestricted %v", in, got.Unrestricted())
		}
	}
	if s := (sandbox.Endpoint{Host: "::1", AnyPort: true}).String(); s != "[::1]:*" {
		t.Errorf("String of ::1 any port = %q", s)
	}
	if ep, _ := sandbox.ParseEndpoint("*:443"); ep.Unrestricted() || ep.AnyPort {
		t.Errorf("*:443 = %+v: not any port", ep)
	}
}
