package sandbox

// Seed 004's endowments descriptor: the JSON an Endo SandboxMaker's
// describe(endowments) takes (examples/endo), read and checked here, and
// mapped to a RunRequest in endowments_map.go.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/openparallax/sandbox/internal/spec"
)

// EndowmentsVersion is the version of the endowments descriptor this
// package reads. A descriptor without "version" is version 1; any other
// version is refused, since its fields could mean what this reader would
// not enforce.
const EndowmentsVersion = 1

// Endowments is seed 004's descriptor of what a program may do, as the
// Endo plugin in examples/endo takes it (JSON names in the struct tags):
//
//	{"version": 1,
//	 "fs": [{"path": "/home/u/project", "mode": "read-write", "mountAt": "/workspace"}],
//	 "net": {"outbound": true, "allowHosts": ["api.example.com", "10.0.0.0/8"], "allowPorts": [443]},
//	 "exec": {"allowPaths": ["/usr/bin"]},
//	 "env": {"PATH": "/usr/bin"},
//	 "devices": ["/dev/ttyUSB0"]}
//
// Everything it does not grant is denied. [ParseEndowments] reads and
// checks one; [Endowments.Config] maps it to a [Config],
// [Endowments.Request] to a [RunRequest], and [Endowments.Effective] says
// what of it this machine really enforces.
type Endowments struct {
	// Version is EndowmentsVersion once parsed.
	Version int `json:"version"`
	// FS are the filesystem grants.
	FS []FSEndowment `json:"fs,omitempty"`
	// Net is the network grant; its zero value is no network at all.
	Net NetEndowment `json:"net"`
	// Exec is what may be executed.
	Exec ExecEndowment `json:"exec"`
	// Env is the program's whole environment: nothing of the caller's is
	// inherited (Config.Env). Absent or empty: no variable at all, but
	// those Run adds (TMPDIR and the like, HOME; see Config.Env).
	Env map[string]string `json:"env,omitempty"`
	// Devices are device grants: "camera" and "microphone" (macOS
	// Seatbelt's device-camera and device-microphone; refused where
	// they cannot be granted, see Effective), or the absolute path of a
	// device node (character or block device), granted read-write.
	Devices []string `json:"devices,omitempty"`
}

// FSEndowment grants one path. Path is absolute, without "..", and is
// stored cleaned; it must exist. Mode is "read" (read and list,
// recursively for a directory) or "read-write" (also create, delete,
// rename, truncate inside). With MountAt the program sees the path at
// MountAt instead (Config.Mounts), with the same mode, and not at Path.
type FSEndowment struct {
	Path    string `json:"path"`
	Mode    string `json:"mode"`
	MountAt string `json:"mountAt,omitempty"`
}

// Values of FSEndowment.Mode.
const (
	ModeRead      = "read"
	ModeReadWrite = "read-write"
)

// NetEndowment grants TCP. Outbound alone is outgoing TCP to any host
// and port ("*:*"); AllowHosts (DNS names, "localhost", IP addresses or
// CIDR ranges) and AllowPorts narrow it: every host on every listed port,
// and no ports means any port of each host. Inbound lets the program
// listen on the AllowPorts (which must then be listed), reachable from
// the caller's loopback (see [Endowments.Config]). AllowHosts and
// AllowPorts without Outbound or Inbound are refused: they would read as
// a grant that is not made.
type NetEndowment struct {
	Outbound   bool     `json:"outbound,omitempty"`
	Inbound    bool     `json:"inbound,omitempty"`
	AllowHosts []string `json:"allowHosts,omitempty"`
	AllowPorts []int    `json:"allowPorts,omitempty"`
}

// ExecEndowment lists what may be executed: files, or directories of
// files. A non-empty list also lets the program create processes
// (Config.AllowProcessSpawn), as seed 004's macOS mapping does
// (process-exec with process-fork): a shell running a granted program
// needs both.
type ExecEndowment struct {
	AllowPaths []string `json:"allowPaths,omitempty"`
}

// EndowmentsError is a descriptor refused by [ParseEndowments] or a
// mapping refused by [Endowments.Request] or [Endowments.Effective]:
// Field is where, in the descriptor's own terms ("fs[0].mode",
// "net.allowHosts[2]"), Value what was found, Reason what to write
// instead. It is written for whoever wrote the descriptor, a person or
// a model.
type EndowmentsError struct {
	Field, Value, Reason string
}

// Error is "endowments: FIELD "VALUE": REASON".
func (e *EndowmentsError) Error() string {
	if e.Value == "" {
		return "endowments: " + e.Field + ": " + e.Reason
	}
	return fmt.Sprintf("endowments: %s %q: %s", e.Field, e.Value, e.Reason)
}

// endowmentsJSON is the descriptor as read: Version a pointer, to tell
// "absent" (1) from 0.
type endowmentsJSON struct {
	Version *int              `json:"version"`
	FS      []FSEndowment     `json:"fs"`
	Net     NetEndowment      `json:"net"`
	Exec    ExecEndowment     `json:"exec"`
	Env     map[string]string `json:"env"`
	Devices []string          `json:"devices"`
}

// ParseEndowments reads one descriptor from JSON and checks it: an
// unknown field at any level is refused (a misspelt restriction must not
// become none), and so is trailing data; then the rules of
// [Endowments.Check]. The error says where and what to write instead
// (an *EndowmentsError, or the JSON decoder's error prefixed with
// "endowments:").
func ParseEndowments(b []byte) (Endowments, error) {
	var j endowmentsJSON
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return Endowments{}, fmt.Errorf("endowments: %v (the fields are version, fs, net, exec, env, devices; "+
			"fs entries: path, mode, mountAt; net: outbound, inbound, allowHosts, allowPorts; exec: allowPaths)", err)
	}
	if dec.More() {
		return Endowments{}, errors.New("endowments: trailing data after the descriptor")
	}
	if err := exactNames(b); err != nil {
		return Endowments{}, err
	}
	e := Endowments{Version: EndowmentsVersion, FS: j.FS, Net: j.Net, Exec: j.Exec, Env: j.Env, Devices: j.Devices}
	if j.Version != nil {
		e.Version = *j.Version
	}
	if err := e.Check(); err != nil {
		return Endowments{}, err
	}
	// Check cleaned the paths in place; the record keeps them cleaned.
	return e, nil
}

// endowmentsNames are the descriptor's field names, by where they may
// appear.
var endowmentsNames = map[string][]string{
	"":     {"version", "fs", "net", "exec", "env", "devices"},
	"fs":   {"path", "mode", "mountAt"},
	"net":  {"outbound", "inbound", "allowHosts", "allowPorts"},
	"exec": {"allowPaths"},
}

// exactNames refuses a field name spelt other than exactly (encoding/json
// matches names case-insensitively: "allowhosts" would be read as
// allowHosts here, and refused by the plugin's shapes, which match
// exactly).
func exactNames(b []byte) error {
	var top map[string]json.RawMessage
	if json.Unmarshal(b, &top) != nil {
		return nil // the typed decode has accepted it: not an object is impossible
	}
	check := func(where string, obj map[string]json.RawMessage) error {
		for k := range obj {
			if !slices.Contains(endowmentsNames[where], k) {
				in := where
				if in == "" {
					in = "the descriptor"
				}
				return &EndowmentsError{Field: strings.TrimPrefix(where+"."+k, "."),
					Reason: fmt.Sprintf("unknown field %q in %s: the fields there are %s", k, in, strings.Join(endowmentsNames[where], ", "))}
			}
		}
		return nil
	}
	if err := check("", top); err != nil {
		return err
	}
	for _, where := range []string{"net", "exec"} {
		var obj map[string]json.RawMessage
		if json.Unmarshal(top[where], &obj) == nil {
			if err := check(where, obj); err != nil {
				return err
			}
		}
	}
	var fsList []map[string]json.RawMessage
	if json.Unmarshal(top["fs"], &fsList) == nil {
		for _, g := range fsList {
			if err := check("fs", g); err != nil {
				return err
			}
		}
	}
	return nil
}

// Check applies the descriptor's rules, cleaning paths in place: version
// 1; every path absolute, without "..", existing, and not reached
// through a symbolic link that leaves the declared scope (see
// checkLinks); modes "read" or "read-write"; mountAt absolute, not "/",
// each used once; hosts that are names, IP addresses or CIDR ranges
// (ports go in allowPorts); ports 1 to 65535; allowHosts and allowPorts
// only with outbound or inbound, and inbound only with ports; env names
// without "=" or NUL; devices "camera", "microphone" or device nodes.
func (e *Endowments) Check() error {
	if e.Version != EndowmentsVersion {
		return &EndowmentsError{Field: "version", Value: fmt.Sprint(e.Version),
			Reason: fmt.Sprintf("unknown version: this reader knows version %d (omit the field for it)", EndowmentsVersion)}
	}
	for _, step := range []func() error{e.checkFS, e.checkNet, e.checkExec, e.checkEnv, e.checkDevices, e.checkLinks} {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// cleanExisting checks one path of the descriptor: absolute, no "..",
// existing; it returns the path cleaned.
func cleanExisting(field, p string) (string, error) {
	c, err := spec.CleanPath(p)
	if err != nil {
		reason := err.Error()
		if strings.Contains(reason, "not absolute") {
			reason += `: write the whole path from the root, e.g. "/home/user/project"`
		} else if strings.Contains(reason, "..") {
			reason += `: write the path without "..", as it is after resolving them`
		}
		return "", &EndowmentsError{Field: field, Value: p, Reason: reason}
	}
	if _, err := os.Lstat(c); err != nil {
		reason := "cannot be read here: " + err.Error()
		if errors.Is(err, fs.ErrNotExist) {
			reason = "does not exist on this machine: grant a path that exists (to show a directory at a path of your choosing, use mountAt)"
		}
		return "", &EndowmentsError{Field: field, Value: p, Reason: reason}
	}
	return c, nil
}

func (e *Endowments) checkFS() error {
	at := map[string]int{}
	for i := range e.FS {
		g := &e.FS[i]
		field := fmt.Sprintf("fs[%d]", i)
		p, err := cleanExisting(field+".path", g.Path)
		if err != nil {
			return err
		}
		g.Path = p
		if g.Mode != ModeRead && g.Mode != ModeReadWrite {
			return &EndowmentsError{Field: field + ".mode", Value: g.Mode, Reason: `want "read" or "read-write"`}
		}
		if g.MountAt == "" {
			continue
		}
		m, err := spec.CleanPath(g.MountAt)
		switch {
		case err != nil:
			return &EndowmentsError{Field: field + ".mountAt", Value: g.MountAt, Reason: err.Error() + `: write an absolute path such as "/workspace"`}
		case m == "/":
			return &EndowmentsError{Field: field + ".mountAt", Value: g.MountAt, Reason: "cannot mount over the root: choose a directory such as /workspace"}
		}
		if j, dup := at[m]; dup {
			return &EndowmentsError{Field: field + ".mountAt", Value: g.MountAt, Reason: fmt.Sprintf("fs[%d] is already shown there: one path per mountAt", j)}
		}
		at[m], g.MountAt = i, m
	}
	return nil
}

func (e *Endowments) checkExec() error {
	for i, p := range e.Exec.AllowPaths {
		c, err := cleanExisting(fmt.Sprintf("exec.allowPaths[%d]", i), p)
		if err != nil {
			return err
		}
		e.Exec.AllowPaths[i] = c
	}
	return nil
}

func (e *Endowments) checkEnv() error {
	if err := spec.ValidateEnv(e.Env); err != nil {
		var ce *ConfigError
		if errors.As(err, &ce) {
			return &EndowmentsError{Field: "env", Value: ce.Value, Reason: ce.Reason}
		}
		return err
	}
	return nil
}

func (e *Endowments) checkDevices() error {
	for i, d := range e.Devices {
		field := fmt.Sprintf("devices[%d]", i)
		if d == "camera" || d == "microphone" {
			continue
		}
		if !filepath.IsAbs(d) {
			return &EndowmentsError{Field: field, Value: d, Reason: `want "camera", "microphone" or the absolute path of a device node, e.g. "/dev/ttyUSB0"`}
		}
		c, err := cleanExisting(field, d)
		if err != nil {
			return err
		}
		fi, err := os.Stat(c)
		if err != nil || fi.Mode()&fs.ModeDevice == 0 {
			return &EndowmentsError{Field: field, Value: d, Reason: "not a device node: grant files and directories in fs"}
		}
		e.Devices[i] = c
	}
	return nil
}
