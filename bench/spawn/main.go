//go:build linux

// Command spawn times process spawns of /bin/true: bare, through a Go
// program that only execs (the fair baseline for a re-exec trampoline),
// through this library's WrapCommand and Run, through go-landlock's
// landlock-restrict and through bwrap. Variants are interleaved in rounds so
// that drift in the machine affects them alike. Run it through
// bench/spawn.sh, which builds the helpers.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/openparallax/sandbox"
)

type variant struct {
	name   string
	spawn  func() (time.Duration, error) // the child's CPU time, or -1
	total  time.Duration
	cpu    time.Duration // -1: not known
	n      int
	rounds []time.Duration // the time of each round
}

func run(name string, args ...string) func() (time.Duration, error) {
	return func() (time.Duration, error) { return cpuOf(exec.Command(name, args...)) }
}

// cpuOf runs cmd and returns the CPU time (user and system) the kernel
// accounted to it and to the descendants it waited for: on a loaded
// machine a steadier measure than wall time.
func cpuOf(cmd *exec.Cmd) (time.Duration, error) {
	err := cmd.Run()
	if cmd.ProcessState == nil {
		return -1, err
	}
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime(), err
}

func main() {
	n := flag.Int("n", 200, "spawns per variant per round")
	rounds := flag.Int("rounds", 5, "rounds")
	goexec := flag.String("goexec", "", "path of the goexec baseline")
	llRestrict := flag.String("landlock-restrict", "", "path of go-landlock's landlock-restrict")
	bwrap := flag.String("bwrap", "", "path of bwrap")
	raw := flag.Bool("raw", false, "print one line per variant: name, nanoseconds, spawns (for -hosts)")
	hosts := flag.String("hosts", "", "LABEL=PATH,...: drive these spawn binaries round by round, interleaved, and print one table per host")
	flag.Parse()
	if *hosts != "" {
		// -goexec is then LABEL:PATH,... (one baseline per host).
		drive(*hosts, *n, *rounds, []string{"-landlock-restrict", *llRestrict, "-bwrap", *bwrap}, *goexec)
		return
	}

	const target = "/bin/true"
	vs := []*variant{{name: "bare " + target, spawn: run(target)}}
	if *goexec != "" {
		vs = append(vs, &variant{name: "Go exec baseline (goexec)", spawn: run(*goexec, target)})
	}
	sb := sandbox.New()
	vs = append(vs,
		&variant{name: "sandbox WrapCommand", spawn: func() (time.Duration, error) {
			cmd := exec.Command(target)
			if err := sb.WrapCommand(cmd, sandbox.Config{}); err != nil {
				return -1, err
			}
			return cpuOf(cmd)
		}},
		&variant{name: "sandbox Run", spawn: func() (time.Duration, error) {
			res, err := sandbox.Run(context.Background(), sandbox.Config{}, target, nil, sandbox.RunOptions{})
			if err == nil && res.ExitCode != 0 {
				err = fmt.Errorf("exit code %d: %s", res.ExitCode, res.Stderr)
			}
			return -1, err // Run's Result has no CPU times
		}})
	// The mount layer (a deny-write path makes WrapCommand and Run use it:
	// the child half's namespace step in new mount and IPC namespaces, a
	// user namespace too when not root), and bwrap with the equivalent
	// mounts.
	ws, err := os.MkdirTemp("", "spawn-bench-ws-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer os.RemoveAll(ws)
	ro := ws + "/ro"
	os.Mkdir(ro, 0o755)
	layerCfg := sandbox.Config{AllowedWritePaths: []string{ws}, DenyWritePaths: []string{ro}}
	vs = append(vs,
		&variant{name: "sandbox WrapCommand, mount layer", spawn: func() (time.Duration, error) {
			cmd := exec.Command(target)
			if err := sb.WrapCommand(cmd, layerCfg); err != nil {
				return -1, err
			}
			return cpuOf(cmd)
		}},
		&variant{name: "sandbox Run, mount layer", spawn: func() (time.Duration, error) {
			res, err := sandbox.Run(context.Background(), layerCfg, target, nil, sandbox.RunOptions{})
			if err == nil && res.ExitCode != 0 {
				err = fmt.Errorf("exit code %d: %s", res.ExitCode, res.Stderr)
			}
			return -1, err
		}})
	if *llRestrict != "" {
		vs = append(vs, &variant{name: "landlock-restrict -ro /", spawn: run(*llRestrict, "-ro", "/", "--", target)})
	}
	if *bwrap != "" {
		vs = append(vs, &variant{name: "bwrap --unshare-all", spawn: run(*bwrap, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", target)})
		vs = append(vs, &variant{name: "bwrap --unshare-all, the layer's mounts", spawn: run(*bwrap, "--ro-bind", "/", "/",
			"--tmpfs", "/tmp", "--tmpfs", "/dev/shm", "--bind", ws, ws, "--ro-bind", ro, ro, "--unshare-all", "--die-with-parent", target)})
	}

	for _, v := range vs { // warm up, and fail early
		if _, err := v.spawn(); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", v.name, err)
			os.Exit(1)
		}
	}
	for range *rounds {
		for _, v := range vs {
			start := time.Now()
			for range *n {
				cpu, err := v.spawn()
				if err != nil {
					fmt.Fprintf(os.Stderr, "%s: %v\n", v.name, err)
					os.Exit(1)
				}
				if cpu < 0 || v.cpu < 0 {
					v.cpu = -1
				} else {
					v.cpu += cpu
				}
			}
			d := time.Since(start)
			v.total += d
			v.n += *n
			v.rounds = append(v.rounds, d)
		}
	}

	if *raw {
		for _, v := range vs {
			fmt.Printf("%s\t%d\t%d\t%d\n", v.name, v.total.Nanoseconds(), v.n, v.cpu.Nanoseconds())
		}
		return
	}
	mean := func(v *variant) time.Duration { return v.total / time.Duration(v.n) }
	bare := mean(vs[0])
	var base time.Duration
	if *goexec != "" {
		base = mean(vs[1])
	}
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	fmt.Printf("%d spawns of %s per variant (%d rounds of %d, interleaved); %s, Linux %s, GOMAXPROCS %d, cgo %v\n\n",
		*n**rounds, target, *rounds, *n, runtime.Version(), strings.TrimSpace(string(kernel)), runtime.GOMAXPROCS(0), cgoEnabled)
	w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "variant\tmean per spawn\tvs bare\tvs Go exec\tvs Go exec, per round\t")
	for _, v := range vs {
		m := mean(v)
		rel, spread := "-", "-"
		if base > 0 {
			rel = fmt.Sprintf("%.2fx", float64(m)/float64(base))
			spread = roundSpread(v, vs[1])
		}
		fmt.Fprintf(w, "%s\t%.3f ms\t%.2fx\t%s\t%s\t\n", v.name, float64(m)/1e6, float64(m)/float64(bare), rel, spread)
	}
	w.Flush()
}

// roundSpread is the lowest and highest ratio of v to base over the
// rounds, each round compared with the same round of base: how much of a
// difference between variants is noise.
func roundSpread(v, base *variant) string {
	lo, hi := 0.0, 0.0
	for i := range v.rounds {
		r := float64(v.rounds[i]) / float64(base.rounds[i])
		if i == 0 || r < lo {
			lo = r
		}
		if i == 0 || r > hi {
			hi = r
		}
	}
	return fmt.Sprintf("%.2f-%.2fx", lo, hi)
}
