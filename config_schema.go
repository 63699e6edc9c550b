package sandbox

import (
	"encoding/json"
	"fmt"
	"reflect"
	"runtime"
	"strings"
)

// fieldDoc is what the JSON Schema says about one Config field besides its
// type, which comes from the struct.
type fieldDoc struct {
	description string
	examples    []any
	item        map[string]any // extra keywords for each array item
	required    bool           // a field of a Mount object that must be present
	// schema, when set, is the field's whole schema (less the description
	// and examples), for a type with JSON of its own (Limits).
	schema map[string]any
}

// configFieldDocs describes every JSON field of Config and Mount, keyed
// "field" or "mounts.field". It is the one place these descriptions live
// for the schema; TestConfigSchemaCoversEveryField fails when a field of
// Config or Mount has no entry here or an entry names no field.
var configFieldDocs = map[string]fieldDoc{
	"allowed_read_paths": {
		description: "Absolute paths the program may read; a directory may also be listed, and everything beneath it read, recursively. Each path must exist.",
		examples:    []any{[]string{"/usr/share/dict"}},
		item:        map[string]any{"minLength": 1, "pattern": absPathPattern()},
	},
	"allowed_write_paths": {
		description: "Absolute paths the program may read and write; inside a directory it may create, delete, rename and truncate files and directories (never device nodes). Each path must exist.",
		examples:    []any{[]string{"/home/user/project"}},
		item:        map[string]any{"minLength": 1, "pattern": absPathPattern()},
	},
	"allowed_tcp_connect": {
		description: `Outgoing TCP endpoints as "host:port". The host is "*" or empty for any host, "localhost", an IP address (IPv6 in brackets) or a DNS name; the port is 1-65535, or "*" for every port ("api.example.com:*"; "*:*" is any TCP anywhere, unrestricted). An address range in CIDR notation allows every address in it: "10.0.0.0/8:443", "10.0.0.0/8:*", IPv6 as "[fd00::/8]:443"; canonical only ("10.1.2.3/8" is refused), a /32 or /128 is the address, "0.0.0.0/0" and "::/0" are refused (write "*:PORT"); a range matches the addresses a program dials, never a DNS name, whatever it resolves to. No URLs, port ranges or wildcard names. Where only ports can be enforced (Linux ApplySelf, and WrapCommand/Run without network namespaces), the host part is reported as not enforced, and a "host:*" entry leaves TCP connect unrestricted (reported). Under WrapCommand/Run with the egress namespace the host is enforced exactly; a "host:*" entry is then reached on any port only through the proxy (proxy-aware clients), and directly only on the ports other entries list (reported). On macOS "localhost:*" is enforced; any other "host:*" becomes "*:*", host not enforced (reported); a range becomes "*:PORT" (one inside 127.0.0.0/8: "localhost:PORT"), host not enforced (reported).`,
		examples:    []any{[]string{"*:443", "localhost:8080", "api.example.com:443", "api.example.com:*"}},
		item:        map[string]any{"pattern": endpointPattern},
	},
	"allowed_tcp_bind": {
		description: "Local TCP ports the program may bind (listen on); 0 lets the kernel choose a port.",
		examples:    []any{[]int{8080}},
	},
	"allow_process_spawn": {
		description: "Let the program create child processes (fork, vfork, clone); children inherit the sandbox. Running another program in place (exec) is governed by allowed_exec_paths.",
	},
	"allowed_exec_paths": {
		description: "Absolute paths of the only files (or directories of files) that may be executed; a granted program's interpreter is granted with it. Empty: nothing may be executed.",
		examples:    []any{[]string{"/usr/bin/git"}},
		item:        map[string]any{"minLength": 1, "pattern": absPathPattern()},
	},
	"allow_unix_sockets": {
		description: "Let the program create AF_UNIX sockets (off by default: before Landlock ABI 9 nothing stops a connect to a socket such as /var/run/docker.sock). socketpair is always allowed.",
	},
	"allow_udp": {
		description: "Let the program create UDP sockets to any host and port (for example for DNS); UDP destinations are not restricted.",
	},
	"deny_write_paths": {
		description: "Absolute paths that stay read-only even inside allowed_write_paths (EROFS; the path itself cannot be renamed or removed). Needs the mount-namespace layer of WrapCommand and Run; reported as not enforced where it is not in force, and for a path that does not exist when the sandbox starts.",
		examples:    []any{[]string{"/home/user/project/.git"}},
		item:        map[string]any{"minLength": 1, "pattern": absPathPattern()},
	},
	"deny_read_paths": {
		description: "Absolute paths that can be neither read, written nor listed, even inside granted paths (EACCES). Enforced like deny_write_paths, and reported likewise.",
		examples:    []any{[]string{"/home/user/project/.env"}},
		item:        map[string]any{"minLength": 1, "pattern": absPathPattern()},
	},
	"mounts": {
		description: "Host paths shown at other paths inside the sandbox, read-only unless write is true. The path \"at\" need not exist on the host: where it does not, the program gets a root of its own (private_root) and it is made there, never on the host. Needs the Linux mount-namespace layer of WrapCommand and Run: refused (an error) under ApplySelf, on macOS and Windows, and where user namespaces are unavailable.",
		examples:    []any{[]map[string]any{{"path": "/home/user/project", "at": "/workspace", "write": true}}},
	},
	"mounts.path": {description: "The host path to show (absolute, must exist).", required: true, item: map[string]any{"minLength": 1, "pattern": absPathPattern()}},
	"mounts.at":   {description: "Where it appears inside the sandbox (absolute, not /).", required: true, item: map[string]any{"minLength": 1, "pattern": absPathPattern()}},
	"mounts.write": {
		description: "Writable inside the sandbox; read-only when false.",
	},
	"private_root": {
		description: "Give the program a root of its own (Linux, WrapCommand and Run): a tmpfs holding only the system paths, the grants, the mounts, /dev, /proc and a private /tmp; the names and stat of everything else, and the host's mount table, are hidden. Used anyway when a mount's \"at\" does not exist on the host. Refused (an error) where it cannot be made: under ApplySelf, on macOS and Windows, without user namespaces.",
	},
	"no_git_protection": {
		description: "Turn off the default protection of git repositories in the write paths: under WrapCommand and Run every repository in a write path or a writable mount's source, at any depth (bare ones included), keeps its hooks and config read-only, and its .git cannot be renamed or removed (git add, commit, branch, merge and fetch still work). A repository the program creates itself is not protected (it is reported after the run).",
	},
	"allow_chown": {
		description: "Let the program change file owners and write extended attributes by path (chown, lchown, fchownat, setxattr, removexattr and their variants). Off by default: these reach files outside every grant. fchown and fsetxattr on a descriptor the program opened stay allowed.",
	},
	"allow_sysv_ipc": {
		description: "Permit System V shared memory, message queues and semaphores. Off by default: outside a private IPC namespace the program could read and change other programs' segments and queues. Under WrapCommand and Run (Linux) the program gets a private IPC namespace; where namespaces are unavailable, and under ApplySelf, it is the host's: reported as not enforced.",
	},
	"allow_exec_write_paths": {
		description: "Make every write path executable too, for build-and-run work (a compiler's ./a.out, go run, scripts the program writes). Off by default: whatever the program can write it can then run.",
	},
	"allow_shared_memory": {
		description: "Grant /dev/shm read-write for POSIX shared memory and named semaphores (Python multiprocessing), and the Java heap file of the Z garbage collector. Under WrapCommand and Run it is a private tmpfs (the mount-namespace layer); elsewhere, or where that layer is unavailable, it is the host's, shared with every process of the user: reported as not enforced.",
	},
	"allow_camera": {
		description: "Grant the camera (macOS device-camera); elsewhere reported as not enforceable: grant the device paths instead.",
	},
	"allow_microphone": {
		description: "Grant the microphone (macOS device-microphone); elsewhere reported as not enforceable.",
	},
	"no_tls_trust_service": {
		description: "macOS: leave the system's certificate trust service (com.apple.trustd.agent) out of the profile. It is otherwise granted with any non-loopback TCP endpoint so that TLS verification works, and it fetches the AIA, OCSP and CRL URLs of certificates the program hands it; without it that verification fails. Ignored elsewhere.",
	},
	"limits": {
		description: "Resource limits; 0 or absent means no limit for that resource, negative values are refused. Linux enforces them: under WrapCommand and Run processes, memory_bytes and cpu_time bound the whole process tree through a cgroup where the caller can manage one (otherwise a per-process rlimit stands in, reported as not enforced), and file_size_bytes and open_files are per-process rlimits; under ApplySelf all five are per-process rlimits (processes counts every task of the user; the tree-wide ones are reported as not enforced). macOS and Windows do not enforce them yet. PlanFor reports each requested limit per entry point, and Strict refuses one not enforced.",
		examples:    []any{map[string]any{"processes": 256, "memory_bytes": 2 << 30, "cpu_time": "5m", "file_size_bytes": 1 << 30, "open_files": 1024}},
		schema: map[string]any{
			"type":                 "object",
			"additionalProperties": false,
			"properties": map[string]any{
				"processes":       limitInt("Tasks (processes and threads) the tree may hold at once."),
				"memory_bytes":    limitInt("Memory the tree may hold resident, memfd and tmpfs pages included; no swap on top."),
				"file_size_bytes": limitInt("Size of the largest file a process may write or extend."),
				"open_files":      limitInt("Descriptors a process may hold (numbered 0 to open_files-1)."),
				"cpu_time": map[string]any{
					"description": `Total CPU time of the tree: a Go duration such as "90s" or "1m30s", or nanoseconds as an integer.`,
					"type":        []string{"string", "integer"},
					"pattern":     durationPattern,
					"minimum":     0,
				},
			},
		},
	},
	"env": {
		description: "The program's whole environment under WrapCommand and Run, as names and values; nothing of the caller's is inherited, {} means no variable at all. Absent or null: the caller's cmd.Env or the run options decide. Run still adds TMPDIR, TMP, TEMP, GOTMPDIR and, without HOME, a private HOME; the egress layer adds proxy variables. Not for ApplySelf (refused).",
		examples:    []any{map[string]string{"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}},
		schema: map[string]any{
			"type":                 []string{"object", "null"},
			"additionalProperties": map[string]any{"type": "string"},
			"propertyNames":        map[string]any{"minLength": 1, "pattern": "^[^=\\u0000]+$"},
		},
	},
	"strict": {
		description: "Refuse to apply anything if any part of the Config cannot be enforced on this machine; without it the rest is applied and the gaps are reported.",
	},
	"strict_accept_loader": {
		description: "With strict: accept the one gap that comes with granting a dynamically linked program, the dynamic loader (exec_loader: run directly it maps any file the program can read as code), and still refuse every other part not enforced. Refused without strict.",
	},
}

// limitInt is the schema of an integer limit.
func limitInt(description string) map[string]any {
	return map[string]any{"description": description, "type": "integer", "minimum": 0}
}

// endpointPattern accepts every "host:port" ParseEndpoint accepts (address
// ranges too: "10.0.0.0/8:443", "[fd00::/8]:443") and refuses the
// commonest mistakes (a URL, a missing port, an IPv6 range outside its
// brackets); ParseEndpoint
// stays the judge. It uses only syntax ECMA-262 and Go's regexp share.
const endpointPattern = `^(\*|\[[0-9A-Fa-f:.]+(/[0-9]{1,3})?\]|[0-9.]+/[0-9]{1,2}|[^\s:/\[\]]*):([0-9]{1,5}|\*)$`

// absPathPattern is an absolute path on this platform: "/..." or, on
// Windows, "C:\..." or "\\server\...".
func absPathPattern() string {
	if runtime.GOOS == "windows" {
		return `^([A-Za-z]:[\\/]|\\\\)`
	}
	return `^/`
}

// ConfigSchema returns a JSON Schema (draft 2020-12) of Config, so that a
// program or a tool-calling model can write a Config this library accepts.
// It is generated from the Config struct, its JSON names and types, with
// the descriptions kept in one table, so a new field cannot be left out.
// A Config that validates against it can still be refused by
// [Config.Validate] (a path that does not exist, a port 0 to connect to):
// the schema describes the shape, Validate the machine.
func ConfigSchema() ([]byte, error) {
	schema, err := configSchemaObject()
	if err != nil {
		return nil, err
	}
	schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	schema["$id"] = "https://github.com/openparallax/sandbox/config.schema.json"
	return json.MarshalIndent(schema, "", "  ")
}

// configSchemaObject is the Config's schema without $schema and $id, as
// ConfigSchema prints it and RunRequestSchema embeds it.
func configSchemaObject() (map[string]any, error) {
	props, err := schemaProperties(reflect.TypeFor[Config](), "")
	if err != nil {
		return nil, err
	}
	return map[string]any{
		"title":                "sandbox.Config",
		"description":          "What a program confined by github.com/openparallax/sandbox may do; everything it does not grant is denied. The empty object grants nothing but the system paths every program needs. Unknown fields are refused.",
		"type":                 "object",
		"additionalProperties": false,
		"properties":           props,
	}, nil
}

// RunRequestSchema returns the JSON Schema (draft 2020-12) of a
// [RunRequest]: the Config's schema (as [ConfigSchema]) under "config",
// the command, and the run options. Like the Config's, it describes the
// shape; [ParseRunRequest] checks the machine.
func RunRequestSchema() ([]byte, error) {
	cfg, err := configSchemaObject()
	if err != nil {
		return nil, err
	}
	schema := map[string]any{
		"$schema":              "https://json-schema.org/draft/2020-12/schema",
		"$id":                  "https://github.com/openparallax/sandbox/run-request.schema.json",
		"title":                "sandbox.RunRequest",
		"description":          "One request to run a program confined by github.com/openparallax/sandbox: what it may do (config, whose env is its whole environment), the command, and the run's options. Unknown fields are refused.",
		"type":                 "object",
		"additionalProperties": false,
		"required":             []string{"command"},
		"properties": map[string]any{
			"config": cfg,
			"command": map[string]any{
				"description": `The program and its arguments. A name without a slash is looked up in the PATH of config.env (the CLI), as env(1) does.`,
				"type":        "array", "minItems": 1,
				"items":    map[string]any{"type": "string"},
				"examples": []any{[]string{"git", "status"}},
			},
			"dir": map[string]any{
				"description": "The working directory (absolute); the config must grant it. Absent: the runner's.",
				"type":        "string", "minLength": 1, "pattern": absPathPattern(),
			},
			"timeout": map[string]any{
				"description": `Kill the program and every process it started this long after it started: a Go duration such as "30s" or "5m" (a bare number is refused). Absent or "0s": no timeout.`,
				"type":        "string",
				"pattern":     durationPattern,
				"examples":    []any{"30s"},
			},
			"max_output": map[string]any{
				"description": "Bytes of standard output, and separately of standard error, that are kept; the rest is discarded and the result says it was cut. 0 or absent: the default.",
				"type":        "integer", "minimum": 0,
			},
		},
	}
	return json.MarshalIndent(schema, "", "  ")
}

// durationPattern matches a Go duration string that is not negative.
const durationPattern = `^(0|([0-9]*\.?[0-9]+(ns|us|µs|μs|ms|s|m|h))+)$`

// schemaProperties builds the "properties" of struct type t; prefix is
// "" for Config and "mounts." for Mount.
func schemaProperties(t reflect.Type, prefix string) (map[string]any, error) {
	props := map[string]any{}
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			return nil, fmt.Errorf("sandbox: schema: %s.%s has no JSON name", t.Name(), f.Name)
		}
		doc, ok := configFieldDocs[prefix+name]
		if !ok {
			return nil, fmt.Errorf("sandbox: schema: no description for %s (%s.%s)", prefix+name, t.Name(), f.Name)
		}
		var s map[string]any
		if doc.schema != nil {
			s = map[string]any{}
			for k, v := range doc.schema {
				s[k] = v
			}
		} else {
			var err error
			if s, err = schemaType(f.Type, doc, name); err != nil {
				return nil, fmt.Errorf("sandbox: schema: %s: %w", prefix+name, err)
			}
		}
		s["description"] = doc.description
		if len(doc.examples) > 0 {
			s["examples"] = doc.examples
		}
		props[name] = s
	}
	return props, nil
}

// schemaType is the schema of one Go type. For a scalar field, doc.item's
// keywords apply to the field itself; for an array, to its items.
func schemaType(t reflect.Type, doc fieldDoc, name string) (map[string]any, error) {
	s := map[string]any{}
	switch t.Kind() {
	case reflect.String:
		s["type"] = "string"
		for k, v := range doc.item {
			s[k] = v
		}
	case reflect.Bool:
		s["type"] = "boolean"
	case reflect.Uint16:
		s["type"], s["minimum"], s["maximum"] = "integer", 0, 65535
	case reflect.Slice:
		var items map[string]any
		if e := t.Elem(); e.Kind() == reflect.Struct {
			props, err := schemaProperties(e, name+".")
			if err != nil {
				return nil, err
			}
			required := []string{}
			for i := range e.NumField() {
				n, _, _ := strings.Cut(e.Field(i).Tag.Get("json"), ",")
				if configFieldDocs[name+"."+n].required {
					required = append(required, n)
				}
			}
			items = map[string]any{"type": "object", "additionalProperties": false, "properties": props, "required": required}
		} else {
			var err error
			if items, err = schemaType(t.Elem(), fieldDoc{item: doc.item}, name); err != nil {
				return nil, err
			}
		}
		// null too: encoding/json writes a nil slice of a field without
		// omitempty as null, and decodes null as an empty list.
		s["type"], s["items"] = []string{"array", "null"}, items
	default:
		return nil, fmt.Errorf("Go type %s has no schema mapping", t)
	}
	return s, nil
}
