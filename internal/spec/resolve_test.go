package spec

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// fakeFS is a host of absolute Unix paths: directories, files and
// symlinks (absolute or relative targets), resolved as the kernel would.
type fakeFS struct {
	dirs, files map[string]bool
	links       map[string]string
}

// fileInfo is a FileInfo of a mode alone.
type fileInfo fs.FileMode

func (m fileInfo) Name() string       { return "x" }
func (m fileInfo) Size() int64        { return 0 }
func (m fileInfo) Mode() fs.FileMode  { return fs.FileMode(m) }
func (m fileInfo) ModTime() time.Time { return time.Time{} }
func (m fileInfo) IsDir() bool        { return fs.FileMode(m).IsDir() }
func (m fileInfo) Sys() any           { return nil }

func (f fakeFS) stat(_ string, mode fs.FileMode) (fs.FileInfo, error) { return fileInfo(mode), nil }

func (f fakeFS) Lstat(p string) (fs.FileInfo, error) {
	switch {
	case f.links[p] != "":
		return f.stat(p, fs.ModeSymlink|0o777)
	case f.dirs[p] || p == "/":
		return f.stat(p, fs.ModeDir|0o755)
	case f.files[p]:
		return f.stat(p, 0o644)
	}
	return nil, &fs.PathError{Op: "lstat", Path: p, Err: fs.ErrNotExist}
}

func (f fakeFS) Readlink(p string) (string, error) {
	if t := f.links[p]; t != "" {
		return t, nil
	}
	return "", &fs.PathError{Op: "readlink", Path: p, Err: errors.New("not a link")}
}

func (f fakeFS) EvalSymlinks(p string) (string, error) {
	cur, todo := "/", strings.Split(p, "/")
	for n := 0; len(todo) > 0; {
		part := todo[0]
		todo = todo[1:]
		if part == "" || part == "." {
			continue
		}
		if part == ".." {
			cur = path.Dir(cur)
			continue
		}
		next := path.Join(cur, part)
		if t := f.links[next]; t != "" {
			if n++; n > 40 {
				return "", errors.New("too many links")
			}
			if path.IsAbs(t) {
				cur = "/"
			}
			todo = append(strings.Split(t, "/"), todo...)
			continue
		}
		if _, err := f.Lstat(next); err != nil {
			return "", err
		}
		cur = next
	}
	return cur, nil
}

func (f fakeFS) Stat(p string) (fs.FileInfo, error) {
	r, err := f.EvalSymlinks(p)
	if err != nil {
		return nil, err
	}
	return f.Lstat(r)
}

func (f fakeFS) ReadFile(string) ([]byte, error)       { return nil, os.ErrNotExist }
func (f fakeFS) ReadDir(string) ([]fs.DirEntry, error) { return nil, os.ErrNotExist }

func unixPaths(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("these cases are written in Unix paths, which are not absolute on Windows")
	}
}

func host() fakeFS {
	return fakeFS{
		dirs:  map[string]bool{"/w": true, "/data": true, "/secret": true, "/usr": true, "/usr/bin": true},
		files: map[string]bool{"/data/a": true, "/secret/key": true, "/usr/bin/tool": true},
		links: map[string]string{"/w/link": "/secret", "/alias": "data", "/bin": "usr/bin"},
	}
}

// TestResolveIn: paths are resolved through the injected FS, duplicates
// (two spellings of one object) kept once, directories told apart.
func TestResolveIn(t *testing.T) {
	unixPaths(t)
	rc, err := ResolveIn(host(), Config{
		AllowedReadPaths:  []string{"/data", "/alias", "/data/a"},
		AllowedWritePaths: []string{"/w"},
		AllowedExecPaths:  []string{"/bin/tool"},
		AllowedTCPConnect: []string{"Example.COM:443", "example.com:443", "localhost:*"},
		AllowedTCPBind:    []uint16{8080, 8080},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []Path{{Given: "/data", Resolved: "/data", IsDir: true}, {Given: "/data/a", Resolved: "/data/a"}}
	if !slices.Equal(rc.Read, want) {
		t.Errorf("Read = %+v, want %+v", rc.Read, want)
	}
	if len(rc.Exec) != 1 || rc.Exec[0].Resolved != "/usr/bin/tool" || rc.Exec[0].IsDir {
		t.Errorf("Exec = %+v, want /usr/bin/tool, a file", rc.Exec)
	}
	if len(rc.Connect) != 2 || rc.Connect[0] != (Endpoint{Host: "example.com", Port: 443}) || !rc.Connect[1].AnyPort {
		t.Errorf("Connect = %+v", rc.Connect)
	}
	if !slices.Equal(rc.Bind, []uint16{8080}) {
		t.Errorf("Bind = %v", rc.Bind)
	}
}

// TestResolveInRefuses: each refusal is a *ConfigError naming the field,
// matching ErrInvalidConfig, and nothing is resolved in its place.
func TestResolveInRefuses(t *testing.T) {
	unixPaths(t)
	for _, tc := range []struct {
		name        string
		cfg         Config
		field, text string
	}{
		{"missing", Config{AllowedReadPaths: []string{"/nope"}}, "allowed_read_paths", "path does not exist"},
		{"relative", Config{AllowedWritePaths: []string{"w"}}, "allowed_write_paths", "not absolute"},
		{"dotdot", Config{AllowedReadPaths: []string{"/w/../secret"}}, "allowed_read_paths", `".." segment`},
		{"control", Config{DenyReadPaths: []string{"/w/\x1b[2J"}}, "deny_read_paths", "control character"},
		{"planted symlink", Config{AllowedWritePaths: []string{"/w"}, AllowedReadPaths: []string{"/w/link/key"}},
			"allowed_read_paths", "resolves through the symlink /w/link, which lies inside the write path /w"},
		{"planted mount source", Config{AllowedWritePaths: []string{"/w"}, Mounts: []Mount{{Path: "/w/link", At: "/m"}}},
			"mounts", "path: resolves through the symlink /w/link"},
		{"mount over root", Config{Mounts: []Mount{{Path: "/data", At: "/"}}}, "mounts", "cannot mount over /"},
		{"endpoint", Config{AllowedTCPConnect: []string{"https://example.com"}}, "allowed_tcp_connect", "not a URL"},
		{"negative limit", Config{Limits: Limits{OpenFiles: -1}}, "limits.open_files", "negative"},
	} {
		_, err := ResolveIn(host(), tc.cfg)
		var ce *ConfigError
		if !errors.As(err, &ce) || !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("%s: %v, want a *ConfigError", tc.name, err)
			continue
		}
		if ce.Field != tc.field || !strings.Contains(ce.Error(), tc.text) {
			t.Errorf("%s: field %q, %q; want %q containing %q", tc.name, ce.Field, ce.Error(), tc.field, tc.text)
		}
	}
}

// TestStrictErrorScope: Strict refuses only the unenforced entries of the
// entry point called, and an unavailable mechanism before anything else.
func TestStrictErrorScope(t *testing.T) {
	p := Plan{Available: true, Features: []Enforcement{
		{Feature: FeatureFilesystem, Enforced: true},
		{Feature: FeatureLimitMemory, Detail: "per process", Scope: ScopeApplySelf},
		{Feature: FeaturePrivateTmp, Detail: "no namespaces", Scope: ScopeCommand},
	}}
	if err := CheckApplicable(p, false, ScopeCommand); err != nil {
		t.Errorf("not strict: %v", err)
	}
	err := CheckApplicable(p, true, ScopeCommand)
	if !errors.Is(err, ErrNotEnforced) || !strings.Contains(err.Error(), FeaturePrivateTmp+" (no namespaces)") || strings.Contains(err.Error(), FeatureLimitMemory) {
		t.Errorf("strict, command: %v", err)
	}
	err = CheckApplicable(p, true, ScopeApplySelf)
	if !errors.Is(err, ErrNotEnforced) || !strings.Contains(err.Error(), FeatureLimitMemory) || strings.Contains(err.Error(), FeaturePrivateTmp) {
		t.Errorf("strict, apply_self: %v", err)
	}
	p.Available, p.Reason = false, "no landlock"
	if err := CheckApplicable(p, false, ScopeCommand); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "no landlock") {
		t.Errorf("unavailable: %v", err)
	}
}
