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
	name  string
	spawn func() error
	total time.Duration
	n     int
}

func run(name string, args ...string) func() error {
	return func() error { return exec.Command(name, args...).Run() }
}

func main() {
	n := flag.Int("n", 200, "spawns per variant per round")
	rounds := flag.Int("rounds", 5, "rounds")
	goexec := flag.String("goexec", "", "path of the goexec baseline")
	llRestrict := flag.String("landlock-restrict", "", "path of go-landlock's landlock-restrict")
	bwrap := flag.String("bwrap", "", "path of bwrap")
	flag.Parse()

	const target = "/bin/true"
	vs := []*variant{{name: "bare " + target, spawn: run(target)}}
	if *goexec != "" {
		vs = append(vs, &variant{name: "Go exec baseline (goexec)", spawn: run(*goexec, target)})
	}
	sb := sandbox.New()
	vs = append(vs,
		&variant{name: "sandbox WrapCommand", spawn: func() error {
			cmd := exec.Command(target)
			if err := sb.WrapCommand(cmd, sandbox.Config{}); err != nil {
				return err
			}
			return cmd.Run()
		}},
		&variant{name: "sandbox Run", spawn: func() error {
			res, err := sandbox.Run(context.Background(), sandbox.Config{}, target, nil, sandbox.RunOptions{})
			if err == nil && res.ExitCode != 0 {
				err = fmt.Errorf("exit code %d: %s", res.ExitCode, res.Stderr)
			}
			return err
		}})
	if *llRestrict != "" {
		vs = append(vs, &variant{name: "landlock-restrict -ro /", spawn: run(*llRestrict, "-ro", "/", "--", target)})
	}
	if *bwrap != "" {
		vs = append(vs, &variant{name: "bwrap --unshare-all", spawn: run(*bwrap, "--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", target)})
	}

	for _, v := range vs { // warm up, and fail early
		if err := v.spawn(); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", v.name, err)
			os.Exit(1)
		}
	}
	for range *rounds {
		for _, v := range vs {
			start := time.Now()
			for range *n {
				if err := v.spawn(); err != nil {
					fmt.Fprintf(os.Stderr, "%s: %v\n", v.name, err)
					os.Exit(1)
				}
			}
			v.total += time.Since(start)
			v.n += *n
		}
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
	fmt.Fprintln(w, "variant\tmean per spawn\tvs bare\tvs Go exec\t")
	for _, v := range vs {
		m := mean(v)
		rel := "-"
		if base > 0 {
			rel = fmt.Sprintf("%.2fx", float64(m)/float64(base))
		}
		fmt.Fprintf(w, "%s\t%.3f ms\t%.2fx\t%s\t\n", v.name, float64(m)/1e6, float64(m)/float64(bare), rel)
	}
	w.Flush()
}
