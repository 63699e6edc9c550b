package sandbox

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

func loadSchema(t *testing.T) map[string]any {
	t.Helper()
	b, err := ConfigSchema()
	if err != nil {
		t.Fatal(err)
	}
	var s map[string]any
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

func jsonNames(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		if n, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ","); n != "-" {
			out = append(out, n)
		}
	}
	return out
}

// Every JSON field of Config and Mount is in the schema with a description,
// and every description belongs to a field.
func TestConfigSchemaCoversEveryField(t *testing.T) {
	s := loadSchema(t)
	props := s["properties"].(map[string]any)
	mountProps := props["mounts"].(map[string]any)["items"].(map[string]any)["properties"].(map[string]any)
	fields := map[string]bool{}
	check := func(props map[string]any, typ reflect.Type, prefix string) {
		names := jsonNames(typ)
		for _, n := range names {
			fields[prefix+n] = true
			p, ok := props[n].(map[string]any)
			if !ok {
				t.Errorf("%s%s: not in the schema", prefix, n)
				continue
			}
			if d, _ := p["description"].(string); d == "" {
				t.Errorf("%s%s: no description", prefix, n)
			}
		}
		if len(props) != len(names) {
			t.Errorf("schema has %d properties for %s, the struct %d", len(props), typ.Name(), len(names))
		}
	}
	check(props, reflect.TypeFor[Config](), "")
	check(mountProps, reflect.TypeFor[Mount](), "mounts.")
	for k := range configFieldDocs {
		if !fields[k] {
			t.Errorf("configFieldDocs[%q] describes no field", k)
		}
	}
}

// fullConfig sets every field of Config, with paths under dir.
func fullConfig(dir string) Config {
	return Config{
		AllowedReadPaths: []string{dir}, AllowedWritePaths: []string{dir}, AllowedTCPConnect: []string{"*:443", "localhost:8080", "[::1]:22", ":80", "127.0.0.1:5432", "api.example.com:443"},
		AllowedTCPBind: []uint16{0, 8080}, AllowProcessSpawn: true, AllowedExecPaths: []string{dir}, AllowUnixSockets: true, AllowUDP: true, AllowChown: true, AllowSysVIPC: true, AllowExecWritePaths: true, AllowSharedMemory: true,
		PrivateRoot:    true,
		DenyWritePaths: []string{filepath.Join(dir, ".git")}, DenyReadPaths: []string{filepath.Join(dir, ".env")},
		Mounts: []Mount{{Path: dir, At: filepath.Join(dir, "at"), Write: true}}, AllowCamera: true, AllowMicrophone: true, NoTLSTrustService: true, NoGitProtection: true, Strict: true, StrictAcceptLoader: true, Env: map[string]string{"PATH": "/usr/bin:/bin", "EMPTY": ""},
		Limits: Limits{Processes: 64, MemoryBytes: 1 << 30, CPUTime: 90 * time.Second, FileSizeBytes: 1 << 20, OpenFiles: 256},
	}
}

// validate checks v against the subset of JSON Schema ConfigSchema uses.
func validate(s map[string]any, v any, at string) error {
	if types, ok := s["type"]; ok {
		var want []string
		switch ty := types.(type) {
		case string:
			want = []string{ty}
		case []any:
			for _, x := range ty {
				want = append(want, x.(string))
			}
		}
		got := "null"
		switch x := v.(type) {
		case map[string]any:
			got = "object"
		case []any:
			got = "array"
		case string:
			got = "string"
		case bool:
			got = "boolean"
		case float64:
			got = "number"
			if x == float64(int64(x)) {
				got = "integer"
			}
		}
		if !slices.Contains(want, got) && !(got == "integer" && slices.Contains(want, "number")) {
			return fmt.Errorf("%s: %s, want %v", at, got, want)
		}
	}
	switch x := v.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		for k, val := range x {
			ps, ok := props[k].(map[string]any)
			if !ok {
				if s["additionalProperties"] == false {
					return fmt.Errorf("%s: unknown property %q", at, k)
				}
				continue
			}
			if err := validate(ps, val, at+"."+k); err != nil {
				return err
			}
		}
		req, _ := s["required"].([]any)
		for _, r := range req {
			if _, ok := x[r.(string)]; !ok {
				return fmt.Errorf("%s: %s required", at, r)
			}
		}
	case []any:
		for i, e := range x {
			if err := validate(s["items"].(map[string]any), e, fmt.Sprintf("%s[%d]", at, i)); err != nil {
				return err
			}
		}
	case string:
		if n, ok := s["minLength"].(float64); ok && float64(len(x)) < n {
			return fmt.Errorf("%s: shorter than %v", at, n)
		}
		if p, ok := s["pattern"].(string); ok && !regexp.MustCompile(p).MatchString(x) {
			return fmt.Errorf("%s: %q does not match %s", at, x, p)
		}
	case float64:
		if n, ok := s["minimum"].(float64); ok && x < n {
			return fmt.Errorf("%s: below %v", at, n)
		}
		if n, ok := s["maximum"].(float64); ok && x > n {
			return fmt.Errorf("%s: above %v", at, n)
		}
	}
	return nil
}

// schemaSamples are Configs as JSON that must validate, and ones that must
// not, each with the library's own verdict alongside.
func schemaSamples(t *testing.T) (valid, invalid map[string]string) {
	dir := t.TempDir()
	full := fullConfig(dir)
	v := reflect.ValueOf(full)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Fatalf("fullConfig leaves %s unset: set every field so that the schema is tested on it", v.Type().Field(i).Name)
		}
	}
	fullJSON, _ := json.Marshal(full)
	zeroJSON, _ := json.Marshal(Config{})
	valid = map[string]string{"every field": string(fullJSON), "zero Config as Go writes it": string(zeroJSON), "empty object": `{}`,
		"cpu_time in nanoseconds": `{"limits": {"cpu_time": 1500000000}}`}
	invalid = map[string]string{
		"unknown field":         `{"allow_everything": true}`,
		"bool as string":        `{"allow_udp": "yes"}`,
		"port out of range":     `{"allowed_tcp_bind": [70000]}`,
		"negative port":         `{"allowed_tcp_bind": [-1]}`,
		"URL as endpoint":       `{"allowed_tcp_connect": ["https://example.com:443"]}`,
		"endpoint without port": `{"allowed_tcp_connect": ["example.com"]}`,
		"endpoint port *x":      `{"allowed_tcp_connect": ["example.com:*x"]}`,
		"endpoint port range":   `{"allowed_tcp_connect": ["example.com:1-2"]}`,
		"relative path":         `{"allowed_read_paths": ["src"]}`,
		"path not a list":       `{"allowed_write_paths": "` + filepath.ToSlash(dir) + `"}`,
		"mount without at":      `{"mounts": [{"path": "` + filepath.ToSlash(dir) + `"}]}`,
		"mount unknown field":   `{"mounts": [{"path": "` + filepath.ToSlash(dir) + `", "at": "/w", "mode": "rw"}]}`,
		"negative limit":        `{"limits": {"memory_bytes": -1}}`,
		"unknown limit":         `{"limits": {"memory": 1}}`,
		"cpu_time not duration": `{"limits": {"cpu_time": "soon"}}`,
	}
	return valid, invalid
}

// Valid samples validate, decode strictly into a Config and pass Validate;
// invalid ones are refused by the schema and by the strict decoder or
// Validate.
func TestConfigSchemaValidates(t *testing.T) {
	s := loadSchema(t)
	valid, invalid := schemaSamples(t)
	decode := func(doc string) error {
		var cfg Config
		dec := json.NewDecoder(bytes.NewReader([]byte(doc)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&cfg); err != nil {
			return err
		}
		return cfg.Validate()
	}
	for name, doc := range valid {
		var v any
		json.Unmarshal([]byte(doc), &v)
		if err := validate(s, v, "$"); err != nil {
			t.Errorf("%s: refused by the schema: %v\n%s", name, err, doc)
		}
		if err := decode(doc); err != nil {
			t.Errorf("%s: refused by the library: %v", name, err)
		}
	}
	for name, doc := range invalid {
		var v any
		json.Unmarshal([]byte(doc), &v)
		if err := validate(s, v, "$"); err == nil {
			t.Errorf("%s: accepted by the schema: %s", name, doc)
		}
		if err := decode(doc); err == nil {
			t.Errorf("%s: accepted by the library, though the schema refuses it: %s", name, doc)
		}
	}
	// The endpoint pattern accepts what ParseEndpoint accepts.
	re := regexp.MustCompile(endpointPattern)
	for _, e := range []string{"*:1", ":65535", "localhost:80", "LOCALHOST:80", "10.0.0.1:22", "[::1]:443", "[2001:db8::1]:8443", "a-b.example.COM.:443",
		"api.example.com:*", "*:*", ":*", "[::1]:*", "10.1.2.3:*",
		"10.0.0.0/8:443", "10.0.0.0/8:*", "127.0.0.4/31:80", "[fd00::/8]:443", "[fd00::/8]:*", "[2001:db8::/32]:22", "10.1.2.3/32:443", "[::1/128]:80"} {
		if _, err := ParseEndpoint(e); err != nil {
			t.Fatalf("%s: %v", e, err)
		}
		if !re.MatchString(e) {
			t.Errorf("endpoint pattern refuses %q, which ParseEndpoint accepts", e)
		}
	}
	// And refuses the spellings of a range ParseEndpoint refuses with the
	// one to write.
	for _, e := range []string{"[fd00::]/8:443", "fd00::/8:443", "[fd00::/8]443", "10.0.0.0/8", "http://10.0.0.0/8:80", "10.0.0.0/8/8:443"} {
		if _, err := ParseEndpoint(e); err == nil {
			t.Fatalf("ParseEndpoint accepts %q", e)
		}
		if re.MatchString(e) {
			t.Errorf("endpoint pattern accepts %q, which ParseEndpoint refuses", e)
		}
	}
}

// The same samples through a real JSON Schema validator (Python's
// jsonschema, Draft 2020-12), which also checks the schema itself against
// the meta-schema.
func TestConfigSchemaWithJSONSchemaValidator(t *testing.T) {
	py := jsonschemaPython(t)
	b, err := ConfigSchema()
	if err != nil {
		t.Fatal(err)
	}
	valid, invalid := schemaSamples(t)
	runJSONSchema(t, py, b, valid, invalid)
}

// The limits text says what is true now: enforced under WrapCommand and Run
// on Linux (through a cgroup for the tree), per process under ApplySelf,
// not yet on macOS and Windows; it never says WrapCommand and Run enforce
// nothing (issue 31, item 9).
func TestConfigSchemaLimitsText(t *testing.T) {
	props := loadSchema(t)["properties"].(map[string]any)
	d := props["limits"].(map[string]any)["description"].(string)
	for _, bad := range []string{"nothing yet", "not enforced under WrapCommand", "not yet under WrapCommand"} {
		if strings.Contains(d, bad) {
			t.Errorf("limits description says %q: %s", bad, d)
		}
	}
	for _, want := range []string{"WrapCommand and Run", "cgroup", "ApplySelf", "macOS and Windows", "PlanFor", "Strict"} {
		if !strings.Contains(d, want) {
			t.Errorf("limits description lacks %q: %s", want, d)
		}
	}
}
