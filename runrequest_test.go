package sandbox

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseRunRequest(t *testing.T) {
	dir := t.TempDir()
	doc := `{"config": {"allowed_write_paths": [` + jsonString(dir) + `], "env": {"PATH": "/usr/bin:/bin"}},
		"command": ["git", "status"], "dir": ` + jsonString(dir) + `, "timeout": "1m30s", "max_output": 4096}`
	r, err := ParseRunRequest([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := RunRequest{
		Config:  Config{AllowedWritePaths: []string{dir}, Env: map[string]string{"PATH": "/usr/bin:/bin"}},
		Command: []string{"git", "status"}, Dir: dir, Timeout: 90 * time.Second, MaxOutput: 4096,
	}
	if !reflect.DeepEqual(r, want) {
		t.Fatalf("got %+v\nwant %+v", r, want)
	}
	if o := r.Options(); o.Dir != dir || o.Timeout != 90*time.Second || o.MaxOutput != 4096 || o.Env != nil {
		t.Errorf("Options: %+v", o)
	}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"timeout":"1m30s"`) {
		t.Errorf("timeout not written as a duration: %s", b)
	}
	back, err := ParseRunRequest(b)
	if err != nil || !reflect.DeepEqual(back, r) {
		t.Errorf("round trip: %+v, %v", back, err)
	}
}

// TestParseRunRequestRefuses: every malformed request is refused with an
// error that names what to fix; a misspelt field, at any level, is never
// ignored.
func TestParseRunRequestRefuses(t *testing.T) {
	for doc, want := range map[string]string{
		`{"command": []}`:                                               "command",
		`{}`:                                                            "command",
		`{"command": [""]}`:                                             "command",
		`{"command": ["x"], "timeout": 30}`:                             `"30s"`,
		`{"command": ["x"], "timeout": "soon"}`:                         "timeout",
		`{"command": ["x"], "timeout": "-1s"}`:                          "negative",
		`{"command": ["x"], "max_output": -1}`:                          "max_output",
		`{"command": ["x"], "comand": ["y"]}`:                           "comand",
		`{"command": ["x"], "config": {"alowed_read": []}}`:             "alowed_read",
		`{"command": ["x"], "config": {"env": {"A=B": ""}}}`:            "env",
		`{"command": ["x"], "config": {"allowed_read_paths": ["rel"]}}`: "allowed_read_paths",
		`{"command": ["x"]} {"command": ["y"]}`:                         "trailing",
	} {
		_, err := ParseRunRequest([]byte(doc))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want an error naming %q", doc, err, want)
		}
	}
	_, err := ParseRunRequest([]byte(`{"command": ["x"], "config": {"env": {"A=B": ""}}}`))
	if !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("a bad Config: %v; want ErrInvalidConfig", err)
	}
}

// TestRunRequestSchema: the schema accepts what ParseRunRequest accepts
// and refuses what it refuses (in shape), checked by a real validator.
func TestRunRequestSchema(t *testing.T) {
	b, err := RunRequestSchema()
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	props := s["properties"].(map[string]any)
	if _, ok := props["config"].(map[string]any)["properties"].(map[string]any)["env"]; !ok {
		t.Error("the request's config schema lacks env")
	}
	py := jsonschemaPython(t)
	dir := t.TempDir()
	full, _ := json.Marshal(RunRequest{Config: fullConfig(dir), Command: []string{"true"}, Dir: dir, Timeout: time.Minute, MaxOutput: 10})
	valid := map[string]string{
		"full":    string(full),
		"minimal": `{"command": ["true"]}`,
	}
	invalid := map[string]string{
		"no command":     `{"config": {}}`,
		"empty command":  `{"command": []}`,
		"number timeout": `{"command": ["x"], "timeout": 30}`,
		"bad timeout":    `{"command": ["x"], "timeout": "soon"}`,
		"relative dir":   `{"command": ["x"], "dir": "w"}`,
		"unknown":        `{"command": ["x"], "comand": 1}`,
		"env not string": `{"command": ["x"], "config": {"env": {"A": 1}}}`,
		"env bad name":   `{"command": ["x"], "config": {"env": {"A=B": "1"}}}`,
	}
	for name, doc := range valid {
		if _, err := ParseRunRequest([]byte(doc)); err != nil {
			t.Errorf("valid sample %s refused by ParseRunRequest: %v", name, err)
		}
	}
	runJSONSchema(t, py, b, valid, invalid)
}

func jsonString(s string) string { b, _ := json.Marshal(s); return string(b) }

// jsonschemaPython is a python3 with the jsonschema module, or skips.
func jsonschemaPython(t *testing.T) string {
	var tried []string
	for _, cand := range []string{"python3", "/usr/bin/python3"} {
		p, err := exec.LookPath(cand)
		if err != nil {
			tried = append(tried, cand+": not found")
			continue
		}
		if out, err := exec.Command(p, "-c", "import jsonschema").CombinedOutput(); err != nil {
			tried = append(tried, p+": "+strings.TrimSpace(string(out)))
			continue
		}
		return p
	}
	t.Skipf("no python3 with the jsonschema module (Debian: python3-jsonschema), the real validator cannot run: %s", strings.Join(tried, "; "))
	return ""
}

// runJSONSchema validates each sample against schema with python's
// jsonschema (draft 2020-12): valid ones must pass, invalid ones fail.
func runJSONSchema(t *testing.T, py string, schema []byte, valid, invalid map[string]string) {
	dir := t.TempDir()
	write := func(name string, v any) string {
		p := filepath.Join(dir, name)
		data, _ := json.Marshal(v)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const script = `
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
v = jsonschema.Draft202012Validator(schema)
bad = 0
for name, doc in json.load(open(sys.argv[2])).items():
    errs = list(v.iter_errors(json.loads(doc)))
    if errs: print("valid sample refused:", name, errs[0].message); bad += 1
for name, doc in json.load(open(sys.argv[3])).items():
    if not list(v.iter_errors(json.loads(doc))): print("invalid sample accepted:", name); bad += 1
sys.exit(1 if bad else 0)
`
	schemaPath := filepath.Join(dir, "schema.json")
	if err := os.WriteFile(schemaPath, schema, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(py, "-c", script, schemaPath, write("valid.json", valid), write("invalid.json", invalid)).CombinedOutput()
	if err != nil {
		t.Errorf("jsonschema: %v\n%s", err, out)
	}
}
