package linux

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"github.com/openparallax/sandbox/internal/mountns"
	"github.com/openparallax/sandbox/internal/seccomp"
	"github.com/openparallax/sandbox/internal/spec"
	"github.com/openparallax/sandbox/internal/trampoline"
)

var update = flag.Bool("update", false, "rewrite testdata/planspawn/*.json from PlanSpawn's output")

// goldenNonce is the exec nonce of every golden spawn: a placeholder for
// the per-spawn random one.
var goldenNonce = [2]uint64{0x1111111111111111, 0x2222222222222222}

// spawnCase is one golden PlanSpawn: a resolved Config (built here, never
// resolved against the host), a target and the host's facts.
type spawnCase struct {
	name   string
	rc     *spec.Resolved
	target Target
	// host adjusts goldenHost's facts for this case.
	host func(*Host)
}

func goldenPath(p string, dir bool) spec.Path { return spec.Path{Given: p, Resolved: p, IsDir: dir} }

func goldenTarget(path string, opts SpawnOptions) Target {
	return Target{Path: path, Resolved: path, Argv: []string{path, "--flag"}, Env: []string{"PATH=/usr/bin:/bin", "HOME=/home/agent"},
		Dir: "/work/ws", SpawnOptions: opts}
}

func spawnCases() []spawnCase {
	return []spawnCase{{
		name:   "minimal",
		rc:     &spec.Resolved{},
		target: goldenTarget("/usr/bin/tool", SpawnOptions{}),
	}, {
		name: "realistic",
		rc: &spec.Resolved{
			Config:  spec.Config{AllowProcessSpawn: true},
			Read:    []spec.Path{goldenPath("/usr", true)},
			Write:   []spec.Path{goldenPath("/work/ws", true)},
			Exec:    []spec.Path{goldenPath("/usr/bin", true)},
			Connect: []spec.Endpoint{{Host: "127.0.0.1", Port: 50051}, {Host: "api.example.com", Port: 443}},
		},
		target: goldenTarget("/usr/bin/engine", SpawnOptions{FailurePipe: true, DenySetsid: true, DenyPdeathsigChange: true, PIDNamespace: true}),
	}, {
		name: "mountlayer",
		rc: &spec.Resolved{
			Read:      []spec.Path{goldenPath("/usr", true)},
			Write:     []spec.Path{goldenPath("/work/ws", true)},
			DenyWrite: []string{"/work/ws/.git"},
			DenyRead:  []string{"/work/ws/.env"},
			Mounts:    []spec.Mount{{Path: "/data/models", At: "/work/ws/models"}, {Path: "/data/cache", At: "/work/ws/cache", Write: true}},
		},
		target: goldenTarget("/usr/bin/tool", SpawnOptions{}),
		host: func(h *Host) {
			h.Layer = goldenLayer(h.Layer)
		},
	}, {
		// The own root: a Mount at /workspace, absent on the host.
		name: "privateroot",
		rc: &spec.Resolved{
			Config: spec.Config{PrivateRoot: true, AllowProcessSpawn: true},
			Read:   []spec.Path{goldenPath("/usr", true)},
			Write:  []spec.Path{goldenPath("/work/ws", true)},
			Mounts: []spec.Mount{{Path: "/data/models", At: "/workspace"}},
		},
		target: goldenTarget("/usr/bin/tool", SpawnOptions{FailurePipe: true, PIDNamespace: true}),
		host: func(h *Host) {
			h.Layer = goldenRootLayer(h.Layer)
		},
	}, {
		name: "egress",
		rc: &spec.Resolved{
			Config:  spec.Config{AllowProcessSpawn: true},
			Read:    []spec.Path{goldenPath("/usr", true)},
			Connect: []spec.Endpoint{{Host: "github.com", AnyPort: true}, {Host: "pypi.org", Port: 443}},
			Bind:    []uint16{8080},
		},
		target: goldenTarget("/usr/bin/tool", SpawnOptions{FailurePipe: true}),
	}, {
		name: "limits",
		rc: &spec.Resolved{Config: spec.Config{Limits: spec.Limits{
			Processes: 64, MemoryBytes: 1 << 30, CPUTime: time.Minute, FileSizeBytes: 100 << 20, OpenFiles: 256}}},
		target: goldenTarget("/usr/bin/tool", SpawnOptions{}),
		host: func(h *Host) {
			// cgroup v2 enforces the tree-wide limits (goldenHost); the
			// child sets RLIMIT_FSIZE (1), RLIMIT_NOFILE (7) and
			// RLIMIT_CORE (4) 0, under goldenCeilings. The numbers are
			// Linux's generic resource numbers (asm-generic: amd64,
			// arm64 and the architectures built here only as data;
			// those seccomp.Build has no program for skip this test).
			h.CgroupProcs = 1
		},
	}, {
		// Strict with the mount layer: every entry enforced.
		name:   "strict",
		rc:     strictConfig(),
		target: goldenTarget("/usr/bin/tool", SpawnOptions{}),
		host: func(h *Host) {
			h.Layer = goldenLayer(h.Layer)
		},
	}, {
		// Strict without it: refused (file_metadata is not enforced).
		name:   "strict_refused",
		rc:     strictConfig(),
		target: goldenTarget("/usr/bin/tool", SpawnOptions{}),
	}}
}

// strictConfig is the mountlayer case's Config, with Strict.
func strictConfig() *spec.Resolved {
	return &spec.Resolved{
		Config:    spec.Config{Strict: true},
		Read:      []spec.Path{goldenPath("/usr", true)},
		Write:     []spec.Path{goldenPath("/work/ws", true)},
		DenyWrite: []string{"/work/ws/.git"},
		DenyRead:  []string{"/work/ws/.env"},
		Mounts:    []spec.Mount{{Path: "/data/models", At: "/work/ws/models"}, {Path: "/data/cache", At: "/work/ws/cache", Write: true}},
	}
}

// goldenLayer is the mount layer newMountLayer would plan for the
// mountlayer case, on a host that has the paths below.
func goldenLayer(l *mountLayer) *mountLayer {
	dirs := []string{"/", "/usr", "/usr/bin", "/work", "/work/ws", "/work/ws/.git", "/work/ws/models", "/work/ws/cache", "/data", "/data/models", "/data/cache", "/tmp", "/dev", "/dev/shm"}
	files := []string{"/usr/bin/tool", "/work/ws/.env"}
	ms := mountns.Spec{
		Write:      []mountns.WritePath{{Path: "/work/ws"}},
		Read:       []string{"/usr"},
		Exec:       []string{"/usr/bin/tool"},
		DenyWrite:  []string{"/work/ws/.git"},
		DenyRead:   []string{"/work/ws/.env"},
		Mounts:     []mountns.Mount{{Source: "/data/models", Target: "/work/ws/models"}, {Source: "/data/cache", Target: "/work/ws/cache", Write: true}},
		PrivateTmp: true,
		Lookup: func(p string) mountns.Kind {
			switch {
			case slices.Contains(dirs, p):
				return mountns.Dir
			case slices.Contains(files, p):
				return mountns.File
			}
			return mountns.Missing
		},
		Resolve: func(p string) string {
			if slices.Contains(dirs, p) || slices.Contains(files, p) {
				return p
			}
			return ""
		},
	}
	l.needs = []string{"deny_write_paths", "deny_read_paths", "mounts"}
	l.ns = nsState{ok: true}
	l.spec = ms
	l.plan, l.err = mountns.Build(ms)
	return l
}

// goldenRootLayer is the mount layer newMountLayer would plan for the
// privateroot case on goldenLayer's host, with /bin a link to usr/bin and
// a PID namespace (a fresh /proc).
func goldenRootLayer(l *mountLayer) *mountLayer {
	dirs := []string{"/", "/usr", "/usr/bin", "/usr/lib", "/work", "/work/ws", "/data", "/data/models", "/tmp", "/dev", "/dev/shm", "/proc", "/etc"}
	files := []string{"/usr/bin/tool", "/etc/hosts", "/dev/null"}
	ms := mountns.Spec{
		Write:      []mountns.WritePath{{Path: "/work/ws"}},
		Read:       []string{"/usr"},
		Exec:       []string{"/usr/bin/tool"},
		Mounts:     []mountns.Mount{{Source: "/data/models", Target: "/workspace"}},
		PrivateTmp: true,
		Root: &mountns.Root{Show: []string{"/usr/lib", "/etc/hosts", "/dev/null", "/usr/bin/tool"},
			Links: []mountns.Link{{Path: "/bin", Target: "usr/bin"}}, FreshProc: true},
		Lookup: func(p string) mountns.Kind {
			switch {
			case slices.Contains(dirs, p):
				return mountns.Dir
			case slices.Contains(files, p):
				return mountns.File
			}
			return mountns.Missing
		},
		Resolve: func(p string) string {
			if slices.Contains(dirs, p) || slices.Contains(files, p) {
				return p
			}
			return ""
		},
	}
	l.needs = []string{"mounts", "private_root"}
	l.root = []string{"private_root", "the mount at /workspace (absent on this host)"}
	l.ns = nsState{ok: true}
	l.spec = ms
	l.plan, l.err = mountns.Build(ms)
	return l
}

// goldenCeilings are the golden caller's hard limits, by resource (Linux's
// generic numbers): a common distribution's defaults, none below what the
// cases ask.
var goldenCeilings = map[int]uint64{
	rlimitNPROC: 127431, rlimitDATA: math.MaxUint64, rlimitCPU: math.MaxUint64, rlimitFSIZE: math.MaxUint64, rlimitNOFILE: 524288,
}

// goldenHost is a Linux host with Landlock ABI 6, seccomp, namespaces
// (network namespaces and the transparent path too), a cgroup v2 with
// every controller, and the static helper, for a caller that is not root
// with the hard limits goldenCeilings; every rule path exists, with a
// fixed identity.
func goldenHost(t *testing.T, rc *spec.Resolved, target Target) Host {
	rc.Cgroup = &spec.Cgroup{Version: "cgroup v2", Pids: true, Memory: true, CPU: true,
		Swap: "memory.max, memory.swap.max 0", Where: "/sys/fs/cgroup/sandbox.slice/openparallax-sandbox"}
	h := Host{ABI: 6, Seccomp: true, Layer: &mountLayer{}, Namespaces: nsState{ok: true}, Helper: true,
		ParentMountNS: [2]uint64{4, 4026531841}, Nonce: goldenNonce,
		Creds: credsOf(false, goldenCeilings), RlimitCeilings: goldenCeilings}
	h.Policy = goldenPolicy(rc, target)
	h.Egress = spawnEgress(goldenEgress(rc), h.Policy, target.Env)
	h.Rules = map[string]RuleID{}
	for i, r := range h.Policy.Paths {
		h.Rules[r.Path] = RuleID{Dev: 2049, Ino: uint64(1000 + i), Dir: r.Access&ll.AccessFSReadDir != 0}
	}
	for i, m := range rc.Mounts {
		h.Rules[m.Path] = RuleID{Dev: 2050, Ino: uint64(2000 + i), Dir: true}
	}
	return h
}

// goldenEgress is egressPlanFor's plan for rc on the golden host: network
// namespaces and the transparent path available (the probes the tests
// replace), and a caller that is not root (egressPlanFor reads the
// effective user ID: root serves the inbound ports by setns, without the
// non-root caller's pool).
func goldenEgress(rc *spec.Resolved) egressPlan {
	defer func(ns func() (bool, string, string), tr func() (bool, string)) {
		netNamespacesAvailable, transparentAvailable = ns, tr
	}(netNamespacesAvailable, transparentAvailable)
	netNamespacesAvailable = func() (bool, string, string) { return true, "", "" }
	transparentAvailable = func() (bool, string) { return true, "" }
	e := egressPlanFor(rc)
	if e.on {
		e.inbound, e.poolPer, e.inNote = inboundPorts(rc.Bind, false)
	}
	return e
}

// goldenPolicy is buildLinuxPolicy's policy (the host fact Host.Policy)
// without the rules it adds from what it reads on the host, which are
// this machine's, not the Config's, and the only ones dropped:
//   - "interpreter of ...": the interpreter chains of the exec paths and
//     the target (execgrant.Chain, the ELF interpreters present here),
//     and the loaders among them (Loaders);
//   - "allowed_exec_paths: ...": the exec directories' extras
//     (execgrant.Extras: symlink targets and helper directories found
//     there), with their own interpreters.
//
// The rules of the Config's paths ("allowed_exec_paths" and the others)
// and the System rules (inChild: made in the child, never looked at here)
// stay. No case sets AllowSharedMemory, whose /dev/shm rule
// buildLinuxPolicy adds only where this machine has it.
func goldenPolicy(rc *spec.Resolved, target Target) linuxPolicy {
	p := buildLinuxPolicy(rc, 6, inChild, []string{target.Resolved})
	p.Paths = slices.DeleteFunc(p.Paths, func(r linuxRule) bool {
		return strings.HasPrefix(r.Source(), "interpreter of ") || strings.HasPrefix(r.Source(), "allowed_exec_paths: ")
	})
	p.Loaders = nil
	return p
}

// TestPlanSpawnGolden compares PlanSpawn's spawn of each case with
// testdata/planspawn/<name>.json (-update rewrites them): the payload and
// wiring a security reviewer reads, with the rights by name.
func TestPlanSpawnGolden(t *testing.T) {
	if _, err := seccomp.Build(seccomp.Policy{}); err != nil {
		t.Skipf("no seccomp program for this architecture: %v", err)
	}
	for _, c := range spawnCases() {
		t.Run(c.name, func(t *testing.T) {
			host := goldenHost(t, c.rc, c.target)
			if c.host != nil {
				c.host(&host)
			}
			s, err := PlanSpawn(c.rc, c.target, host)
			var got any = goldenOf(s)
			if err != nil {
				got = map[string]string{"error": err.Error()}
			} else {
				checkFilter(t, s)
			}
			b, err := json.MarshalIndent(got, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			b = append(b, '\n')
			file := path.Join("testdata", "planspawn", c.name+".json")
			if *update {
				if err := os.WriteFile(file, b, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run with -update to write it)", err)
			}
			if !bytes.Equal(bytes.ReplaceAll(want, []byte("\r\n"), []byte("\n")), b) {
				t.Errorf("PlanSpawn's spawn is not %s (run with -update to rewrite it, then review the diff):\n%s", file, b)
			}
		})
	}
}

// checkFilter checks the program the golden files leave out: the cached
// program of s.Seccomp, with the nonce written in where it checks one.
func checkFilter(t *testing.T, s Spawn) {
	t.Helper()
	c, err := trampolineFilter(s.Seccomp)
	if err != nil {
		t.Fatal(err)
	}
	want := c.prog
	if s.Seccomp.AllowExec && s.Seccomp.ExecNonce {
		want = c.patched(goldenNonce)
	}
	if len(s.Payload.Filters) != 1 || !slices.Equal(s.Payload.Filters[0], want) {
		t.Errorf("the payload's filter is not the program of %+v", s.Seccomp)
	}
}

// goldenSpawn is a Spawn as the golden files show it: rights by name, the
// seccomp policy in place of its program (which is per architecture).
type goldenSpawn struct {
	Plan                                   goldenPlan
	Seccomp                                seccomp.Policy
	Payload                                goldenPayload
	Files                                  []FileRole
	HelperFD                               int
	Args                                   []string
	Namespaces, NetNamespace, PIDNamespace bool
}

type goldenPlan struct {
	Available  bool
	Reason     string   `json:",omitempty"`
	Features   []string // "feature [scope]: enforced|NOT enforced: detail"
	MountLayer []string `json:",omitempty"`
	// Network and Egress are the egress layer's (egressPlan.addTo).
	Network []string         `json:",omitempty"`
	Egress  *spec.EgressPlan `json:",omitempty"`
}

type goldenPayload struct {
	Path                          string
	Env                           []string
	FirstFD, ErrFD                int
	HandledFS, HandledNet, Scoped string
	Rules                         []goldenRule
	Ports                         []string
	Filters                       int
	ExecNonce                     string
	CgroupFDs                     []int
	Flags                         uint32
	Rlimits                       []trampoline.Rlimit
	Mounts                        []string
	Net                           trampoline.NetStep
	ParentMountNS                 [2]uint64
}

type goldenRule struct {
	Path      string
	Dir, File string `json:",omitempty"`
	Dev, Ino  uint64 `json:",omitempty"`
}

func goldenOf(s Spawn) goldenSpawn {
	p := s.Payload
	g := goldenSpawn{Seccomp: s.Seccomp, Files: s.Files, HelperFD: s.HelperFD, Args: s.Args,
		Namespaces: s.Namespaces, NetNamespace: s.NetNamespace, PIDNamespace: s.PIDNamespace}
	g.Plan = goldenPlan{Available: s.Plan.Available, Reason: s.Plan.Reason, MountLayer: s.Plan.MountLayer,
		Network: s.Plan.Network, Egress: s.Plan.Egress}
	for _, f := range s.Plan.Features {
		scope := ""
		if f.Scope != "" {
			scope = " [" + f.Scope + "]"
		}
		g.Plan.Features = append(g.Plan.Features, fmt.Sprintf("%s%s: %s: %s", f.Feature, scope, pick(f.Enforced, "enforced", "NOT enforced"), f.Detail))
	}
	g.Payload = goldenPayload{Path: p.Path, Env: p.Env, FirstFD: p.FirstFD, ErrFD: p.ErrFD,
		HandledFS: landlock.AccessFSSet(p.HandledFS).String(), HandledNet: landlock.AccessNetSet(p.HandledNet).String(),
		Scoped: landlock.ScopedSet(p.Scoped).String(), Filters: len(p.Filters),
		ExecNonce: fmt.Sprintf("%#x", p.ExecNonce), CgroupFDs: p.CgroupFDs, Flags: p.Flags, Rlimits: p.Rlimits,
		Net: p.Net, ParentMountNS: p.ParentMountNS}
	for _, r := range p.Rules {
		gr := goldenRule{Path: r.Path, Dev: r.Dev, Ino: r.Ino}
		if r.Dir != 0 {
			gr.Dir = landlock.AccessFSSet(r.Dir).String()
		}
		if r.File != 0 {
			gr.File = landlock.AccessFSSet(r.File).String()
		}
		g.Payload.Rules = append(g.Payload.Rules, gr)
	}
	for _, r := range p.Ports {
		g.Payload.Ports = append(g.Payload.Ports, fmt.Sprintf("%d %s", r.Port, landlock.AccessNetSet(r.Access)))
	}
	for _, m := range p.Mounts {
		g.Payload.Mounts = append(g.Payload.Mounts, fmt.Sprintf("%+v", m))
	}
	return g
}
