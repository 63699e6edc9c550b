package sandbox_test

import (
	"encoding/json"
	"errors"
	"os"
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
	}
	for in, want := range good {
		got, err := sandbox.ParseEndpoint(in)
		if err != nil || got != want {
			t.Errorf("ParseEndpoint(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	bad := []string{
		"", "localhost", "localhost:0", "localhost:65536", "localhost:-1", "localhost:+80",
		"localhost:http", "localhost:0x50", "http://example.com:80", "10.0.0.0/8:80",
		"*.example.com:443", "exa mple.com:80", "[fe80::1%eth0]:80", "host:80\x00",
		"-bad.example:80", "a..b:80", "localhost:99999999999999999999",
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
