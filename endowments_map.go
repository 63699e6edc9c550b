package sandbox

// The endowments descriptor mapped to a Config and a RunRequest, and the
// effective endowments: what of a descriptor a plan says is enforced.

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// DefaultEndowmentsTimeout is seed 004's run timeout when the caller
// gives none: the program and every process it started are killed this
// long after it started.
const DefaultEndowmentsTimeout = 30 * time.Second

// Config maps e to a Config, field by field (e is assumed checked, as
// ParseEndowments leaves it):
//
//   - fs: "read" to AllowedReadPaths, "read-write" to AllowedWritePaths;
//     with mountAt, a Mount {Path, At: mountAt, Write: read-write}
//     instead, so the program sees the files at mountAt and not at path.
//   - net: see [NetEndowment.Connect] for AllowedTCPConnect; with
//     inbound, AllowedTCPBind is allowPorts. The program's listeners are
//     reachable from the caller at 127.0.0.1:PORT: directly where the
//     program shares the caller's network, and through the caller's
//     inbound relay where a host allowlist gives it a network namespace
//     of its own (there it must listen on 127.0.0.1 or 0.0.0.0). A
//     descriptor granting both "localhost" on a port and inbound on the
//     same port is refused by Run in that case (the port would name two
//     services).
//   - exec.allowPaths: AllowedExecPaths, and AllowProcessSpawn when not
//     empty.
//   - env: Env, always non-nil (absent: no variable).
//   - devices: "camera" AllowCamera, "microphone" AllowMicrophone, a
//     device path AllowedWritePaths.
//
// Nothing else of the Config is set: what the descriptor does not
// grant is denied.
func (e Endowments) Config() Config {
	var cfg Config
	for _, g := range e.FS {
		write := g.Mode == ModeReadWrite
		switch {
		case g.MountAt != "":
			cfg.Mounts = append(cfg.Mounts, Mount{Path: g.Path, At: g.MountAt, Write: write})
		case write:
			cfg.AllowedWritePaths = append(cfg.AllowedWritePaths, g.Path)
		default:
			cfg.AllowedReadPaths = append(cfg.AllowedReadPaths, g.Path)
		}
	}
	cfg.AllowedTCPConnect = e.Net.Connect()
	if e.Net.Inbound {
		for _, p := range e.Net.AllowPorts {
			cfg.AllowedTCPBind = append(cfg.AllowedTCPBind, uint16(p))
		}
	}
	cfg.AllowedExecPaths = slices.Clone(e.Exec.AllowPaths)
	cfg.AllowProcessSpawn = len(e.Exec.AllowPaths) > 0
	cfg.Env = maps.Clone(e.Env)
	if cfg.Env == nil {
		cfg.Env = map[string]string{}
	}
	for _, d := range e.Devices {
		switch d {
		case "camera":
			cfg.AllowCamera = true
		case "microphone":
			cfg.AllowMicrophone = true
		default:
			cfg.AllowedWritePaths = append(cfg.AllowedWritePaths, d)
		}
	}
	return cfg
}

// Connect is n as Config.AllowedTCPConnect entries: none without
// Outbound; "*:*" (any host, any port) for Outbound alone; "*:PORT" for
// each port without hosts; "HOST:*" for each host without ports; else
// every host with every port. IPv6 addresses and ranges are written in
// brackets ("[fd00::/8]:443"). What each entry becomes on each platform
// is [ParseEndpoint]'s, and [PlanFor] reports it.
func (n NetEndowment) Connect() []string {
	if !n.Outbound {
		return nil
	}
	hosts := n.AllowHosts
	if len(hosts) == 0 {
		hosts = []string{"*"}
	}
	ports := []string{"*"}
	if len(n.AllowPorts) > 0 {
		ports = ports[:0]
		for _, p := range n.AllowPorts {
			ports = append(ports, strconv.Itoa(p))
		}
	}
	var out []string
	for _, h := range hosts {
		if strings.Contains(h, ":") { // IPv6: the address or range in brackets
			h = "[" + h + "]"
		}
		for _, p := range ports {
			if e := h + ":" + p; !slices.Contains(out, e) {
				out = append(out, e)
			}
		}
	}
	return out
}

// Request maps e and one run to a RunRequest: the Config of
// [Endowments.Config], the command, the working directory dir ("" is the
// runner's; absolute otherwise) and the timeout (0 is
// DefaultEndowmentsTimeout). The program must be one exec.allowPaths
// grants: command[0] is an absolute path, or a name looked up in env's
// PATH, or, when env has no PATH, in exec.allowPaths (a directory there
// is searched, a file matches by its name); what it resolves to must lie
// inside an exec.allowPaths entry (resolved), else the request is
// refused with the entry to add. The request is then checked as
// [RunRequest.Validate] does.
func (e Endowments) Request(command []string, dir string, timeout time.Duration) (RunRequest, error) {
	if len(command) == 0 || command[0] == "" {
		return RunRequest{}, &EndowmentsError{Field: "command", Reason: "want the program to run, e.g. \"echo\""}
	}
	if dir != "" && !filepath.IsAbs(dir) {
		return RunRequest{}, &EndowmentsError{Field: "cwd", Value: dir, Reason: "want an absolute path that the descriptor grants"}
	}
	if timeout < 0 {
		return RunRequest{}, &EndowmentsError{Field: "timeout", Value: timeout.String(), Reason: "want a positive time in milliseconds"}
	}
	if timeout == 0 {
		timeout = DefaultEndowmentsTimeout
	}
	prog, err := e.lookPath(command[0])
	if err != nil {
		return RunRequest{}, err
	}
	if dir != "" {
		dir = filepath.Clean(dir)
	}
	r := RunRequest{Config: e.Config(), Command: append([]string{prog}, command[1:]...), Dir: dir, Timeout: timeout}
	return r, r.Validate()
}

// lookPath finds the program name as Request documents, and checks that
// exec.allowPaths grants it.
func (e Endowments) lookPath(name string) (string, error) {
	prog := ""
	switch {
	case strings.ContainsRune(name, '/') || strings.ContainsRune(name, filepath.Separator):
		if !filepath.IsAbs(name) {
			return "", &EndowmentsError{Field: "command", Value: name, Reason: "a path must be absolute; or give a name found in env's PATH or in exec.allowPaths"}
		}
		prog = filepath.Clean(name)
	default:
		var dirs []string
		if path, ok := e.Env["PATH"]; ok {
			dirs = filepath.SplitList(path)
		} else {
			for _, p := range e.Exec.AllowPaths {
				if fi, err := os.Stat(p); err == nil && !fi.IsDir() && filepath.Base(p) == name {
					dirs = append(dirs, filepath.Dir(p))
				} else if err == nil && fi.IsDir() {
					dirs = append(dirs, p)
				}
			}
		}
		for _, d := range dirs {
			if c := filepath.Join(d, name); filepath.IsAbs(c) && executable(c) {
				prog = c
				break
			}
		}
		if prog == "" {
			where := "in exec.allowPaths (env has no PATH)"
			if _, ok := e.Env["PATH"]; ok {
				where = "in env's PATH " + strconv.Quote(e.Env["PATH"])
			}
			return "", &EndowmentsError{Field: "command", Value: name, Reason: "not found " + where + ": give its absolute path, or add its directory"}
		}
	}
	resolved, err := filepath.EvalSymlinks(prog)
	if err != nil {
		return "", &EndowmentsError{Field: "command", Value: name, Reason: "cannot be resolved: " + err.Error()}
	}
	for _, p := range e.Exec.AllowPaths {
		if within(resolved, evalOr(hostLinks{}, p)) {
			return prog, nil
		}
	}
	return "", &EndowmentsError{Field: "command", Value: name,
		Reason: "is " + resolved + ", which exec.allowPaths does not grant: add " + resolved + " or its directory " + filepath.Dir(resolved) + " to exec.allowPaths"}
}

// executable reports whether p is a regular file with an execute bit.
func executable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode().Perm()&0o111 != 0
}

// Effective returns what a program confined by e really gets under Run
// on the machine plan p was made for (p is PlanFor(e.Config())): e with
// every restriction that is not enforced dropped, so that the record
// reads as wide as the program's real reach, and the plan's entries that
// are not enforced (the reasons, for help()).
//
// Dropped from the record, by the plan's WrapCommand/Run entries:
// filesystem not enforced makes fs read-write "/" (mounts kept);
// exec not enforced makes exec.allowPaths "/"; tcp_connect not enforced
// makes net outbound to any host and port; tcp_connect_host not enforced
// drops allowHosts (any host on allowPorts); tcp_bind not enforced makes
// inbound true (on allowPorts: the record has no "any port" for
// listening; the returned entry says what holds). Other entries (fs_truncate, udp, ...) have no field in
// the descriptor: they are only returned.
//
// Grants that would change what the program sees cannot be dropped,
// only refused: the error is an *EndowmentsError when mountAt cannot be
// made here (the mounts entry is not enforced: macOS, no user
// namespaces, or a target the mount layer cannot make) or a device
// grant cannot be ("camera" and "microphone" outside macOS), and when
// the sandbox is unavailable here at all.
func (e Endowments) Effective(p Plan) (Endowments, []Enforcement, error) {
	if !p.Available {
		return Endowments{}, nil, &EndowmentsError{Field: "platform", Value: p.Platform,
			Reason: "no sandbox is in force on this machine (" + p.Mechanism + ": " + p.Reason + "): nothing would be confined"}
	}
	out := e.clone()
	var dropped []Enforcement
	for _, f := range p.Features {
		if f.Enforced || f.Scope == ScopeApplySelf {
			continue
		}
		if err := e.refuseGrant(f); err != nil {
			return Endowments{}, nil, err
		}
		dropped = append(dropped, f)
		out.widen(f.Feature)
	}
	return out, dropped, nil
}

// refuseGrant is the error for an unenforced entry that is a grant the
// program would not get, or nil.
func (e Endowments) refuseGrant(f Enforcement) error {
	reason := f.Detail
	if f.Hint != "" {
		reason += " (" + f.Hint + ")"
	}
	switch f.Feature {
	case FeatureMounts:
		for i, g := range e.FS {
			if g.MountAt != "" {
				return &EndowmentsError{Field: fieldIndex("fs", i) + ".mountAt", Value: g.MountAt,
					Reason: "cannot be shown there on this machine: " + reason + "; grant the path without mountAt, where it is"}
			}
		}
	case FeatureCamera, FeatureMicrophone:
		if i := slices.Index(e.Devices, f.Feature); i >= 0 {
			return &EndowmentsError{Field: fieldIndex("devices", i), Value: f.Feature,
				Reason: "cannot be granted on this machine: " + reason + "; grant the device node's path instead (e.g. /dev/video0)"}
		}
	}
	return nil
}

// widen drops from e the restriction the feature stands for.
func (e *Endowments) widen(feature string) {
	switch feature {
	case FeatureFilesystem:
		var kept []FSEndowment
		for _, g := range e.FS {
			if g.MountAt != "" {
				kept = append(kept, g)
			}
		}
		e.FS = append([]FSEndowment{{Path: "/", Mode: ModeReadWrite}}, kept...)
	case FeatureExec:
		e.Exec.AllowPaths = []string{"/"}
	case FeatureTCPConnect:
		e.Net.Outbound, e.Net.AllowHosts = true, nil
		if !e.Net.Inbound {
			e.Net.AllowPorts = nil
		}
	case FeatureTCPHost:
		e.Net.AllowHosts = nil
	case FeatureTCPBind:
		e.Net.Inbound = true
	}
}

// clone is a deep copy of e.
func (e Endowments) clone() Endowments {
	c := e
	c.FS = slices.Clone(e.FS)
	c.Net.AllowHosts = slices.Clone(e.Net.AllowHosts)
	c.Net.AllowPorts = slices.Clone(e.Net.AllowPorts)
	c.Exec.AllowPaths = slices.Clone(e.Exec.AllowPaths)
	c.Env = maps.Clone(e.Env)
	c.Devices = slices.Clone(e.Devices)
	return c
}
