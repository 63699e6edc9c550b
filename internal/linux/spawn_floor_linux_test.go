//go:build linux

package linux

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"github.com/openparallax/sandbox/internal/trampoline"
)

// BenchmarkSpawnFloor measures what a wrapped spawn's child half costs, step
// by step, against a bare exec.Command spawn, in one run with every
// variant's iterations interleaved (so each ratio is under the same load):
//
//	go test -run '^$' -bench SpawnFloor -benchtime 100x ./internal/linux
//
// The variants are the real payloads WrapCommand plans for /bin/true on a
// tiny git repository (warm Engine, every default on), with steps taken
// out of the payload, which the helper follows; only cmd.Run is timed
// (the parent's own part is BenchmarkWrapParent in the root package):
//
//   - helper: the helper executed from its memfd, a Landlock ruleset that
//     handles one right nothing here uses (make-block: the helper always
//     makes and enforces one) and no rule, the capability drop,
//     no_new_privs, then execve of the target: the child half's floor;
//   - rules: the minimal Config's Landlock rules added (the default system
//     paths, the write path, the target);
//   - seccomp: the seccomp program loaded too (no namespaces);
//   - minimal: the minimal Config's whole payload (the mount namespace and
//     its mounts added);
//   - realistic: the realistic Config's whole payload;
//   - realistic-less: the realistic payload less the rules the minimal
//     one does not have (its exec grants' rules: 134 here): what those
//     rules cost in the child.
//
// Metrics: each variant's median in ms and as a multiple of bare's
// (X-x-bare), rules-x-minimal: realistic ÷ realistic-less, and
// exec-rules: how many rules realistic-less leaves out.
func BenchmarkSpawnFloor(b *testing.B) {
	if k := kernel(); k.abi < 1 || !k.seccomp {
		b.Skipf("sandbox unavailable here: %s", k.abiReason)
	}
	if f, why := childHalf(); f == nil {
		b.Skipf("no helper: %s", why)
	}
	ws := b.TempDir()
	if out, err := exec.Command("git", "init", "-q", ws).CombinedOutput(); err != nil {
		b.Skipf("git init: %v %s", err, out)
	}
	if err := os.WriteFile(filepath.Join(ws, "README"), []byte("hello\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	minimal := Config{AllowedWritePaths: []string{ws}}
	realistic := Config{AllowedWritePaths: []string{ws}, AllowedExecPaths: []string{"/usr/bin", "/bin"}, AllowProcessSpawn: true}
	// payloadOf is the payload WrapCommand plans for /bin/true under cfg.
	payloadOf := func(cfg Config) (*trampoline.Payload, *exec.Cmd) {
		cmd := exec.Command("/bin/true")
		c, err := WrapCommand(cmd, cfg)
		if err != nil {
			b.Fatal(err)
		}
		c.Drop()
		p, err := trampoline.FromEnviron(cmd.Env)
		if err != nil {
			b.Fatal(err)
		}
		return p, cmd
	}
	minimalRules := map[string]bool{}
	mp, _ := payloadOf(minimal)
	for _, r := range mp.Rules {
		minimalRules[r.Path] = true
	}
	noNamespaces := func(p *trampoline.Payload, cmd *exec.Cmd) {
		p.Flags &^= trampoline.FlagNamespaces
		p.Mounts, p.Net, p.ParentMountNS = nil, trampoline.NetStep{}, [2]uint64{}
		cmd.SysProcAttr = nil
	}
	variants := []struct {
		name string
		cfg  *Config
		edit func(p *trampoline.Payload, cmd *exec.Cmd)
	}{
		{"bare", nil, nil},
		{"helper", &minimal, func(p *trampoline.Payload, cmd *exec.Cmd) {
			noNamespaces(p, cmd)
			p.HandledFS, p.HandledNet, p.Scoped = uint64(ll.AccessFSMakeBlock), 0, 0
			p.Rules, p.Ports, p.Filters = nil, nil, nil
		}},
		{"rules", &minimal, func(p *trampoline.Payload, cmd *exec.Cmd) {
			noNamespaces(p, cmd)
			p.Filters = nil
		}},
		{"seccomp", &minimal, noNamespaces},
		{"minimal", &minimal, nil},
		{"realistic", &realistic, nil},
		{"realistic-less", &realistic, func(p *trampoline.Payload, _ *exec.Cmd) {
			p.Rules = slices.DeleteFunc(p.Rules, func(r trampoline.PathRule) bool { return !minimalRules[r.Path] })
		}},
	}
	spawn := func(b *testing.B, cfg *Config, edit func(*trampoline.Payload, *exec.Cmd)) time.Duration {
		cmd := exec.Command("/bin/true")
		cmd.Dir = ws
		var c *Command
		if cfg != nil {
			var err error
			if c, err = WrapCommand(cmd, *cfg); err != nil {
				b.Fatal(err)
			}
			defer c.Drop()
		}
		if edit != nil {
			p, err := trampoline.FromEnviron(cmd.Env)
			if err != nil {
				b.Fatal(err)
			}
			edit(p, cmd)
			cmd.Env = p.Environ()
		}
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v %s", err, out)
		}
		return time.Since(start)
	}
	// How many rules realistic-less takes out.
	rp, rcmd := payloadOf(realistic)
	execRules := len(rp.Rules)
	variants[6].edit(rp, rcmd)
	execRules -= len(rp.Rules)
	times := make([][]time.Duration, len(variants))
	for i, v := range variants { // warm
		spawn(b, v.cfg, variants[i].edit)
	}
	for b.Loop() {
		for i, v := range variants {
			times[i] = append(times[i], spawn(b, v.cfg, v.edit))
		}
	}
	med := make([]float64, len(variants))
	for i, v := range variants {
		s := slices.Clone(times[i])
		slices.Sort(s)
		med[i] = float64(s[len(s)/2].Nanoseconds()) / 1e6
		b.ReportMetric(med[i], v.name+"-ms")
		if i > 0 {
			b.ReportMetric(med[i]/med[0], v.name+"-x-bare")
		}
	}
	b.ReportMetric(med[5]/med[6], "rules-x-minimal")
	b.ReportMetric(float64(execRules), "exec-rules")
}
