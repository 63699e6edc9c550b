//go:build linux

package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// drive runs each host (a spawn binary) for one round at a time, hosts
// interleaved round by round, so that machine drift affects them alike,
// and prints per host the mean of each variant and its ratio to the bare
// spawn measured by the same host in the same rounds. args are passed to
// every host; goexec is LABEL:PATH,... and gives each host its baseline.
func drive(spec string, n, rounds int, args []string, goexec string) {
	type host struct {
		label, path string
		order       []string
		vs          map[string]*variant
	}
	var hs []*host
	for _, kv := range strings.Split(spec, ",") {
		label, path, ok := strings.Cut(kv, "=")
		if !ok {
			fmt.Fprintf(os.Stderr, "-hosts: %q is not LABEL=PATH\n", kv)
			os.Exit(2)
		}
		hs = append(hs, &host{label: label, path: path, vs: map[string]*variant{}})
	}
	for r := range rounds {
		for _, h := range hs {
			a := append([]string{"-n", strconv.Itoa(n), "-rounds", "1", "-raw"}, args...)
			for _, lp := range strings.Split(goexec, ",") {
				if l, p, ok := strings.Cut(lp, ":"); ok && l == h.label {
					a = append(a, "-goexec", p)
				}
			}
			var out, errb bytes.Buffer
			cmd := exec.Command(h.path, a...)
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Run(); err != nil {
				fmt.Fprintf(os.Stderr, "%s, round %d: %v\n%s", h.label, r, err, errb.Bytes())
				os.Exit(1)
			}
			for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
				f := strings.Split(line, "\t")
				if len(f) != 4 {
					fmt.Fprintf(os.Stderr, "%s: bad line %q\n", h.label, line)
					os.Exit(1)
				}
				ns, _ := strconv.ParseInt(f[1], 10, 64)
				cnt, _ := strconv.Atoi(f[2])
				cpu, _ := strconv.ParseInt(f[3], 10, 64)
				v := h.vs[f[0]]
				if v == nil {
					v = &variant{name: f[0]}
					h.vs[f[0]] = v
					h.order = append(h.order, f[0])
				}
				if cpu < 0 || v.cpu < 0 {
					v.cpu = -1
				} else {
					v.cpu += time.Duration(cpu)
				}
				v.total += time.Duration(ns)
				v.n += cnt
				v.rounds = append(v.rounds, time.Duration(ns))
			}
		}
	}
	kernel, _ := os.ReadFile("/proc/sys/kernel/osrelease")
	fmt.Printf("%d spawns of /bin/true per variant and host (%d rounds of %d, hosts and variants interleaved); Linux %s\n",
		n*rounds, rounds, n, strings.TrimSpace(string(kernel)))
	for _, h := range hs {
		fmt.Printf("\nhost %s (%s)\n", h.label, h.path)
		w := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(w, "variant\tmean per spawn\tvs bare\tvs bare, per round\tchild CPU per spawn\tCPU vs bare\t")
		bare := h.vs[h.order[0]]
		for _, name := range h.order {
			v := h.vs[name]
			m := v.total / time.Duration(v.n)
			cpu, cpuRel := "-", "-"
			if v.cpu >= 0 && bare.cpu > 0 {
				cpu = fmt.Sprintf("%.3f ms", float64(v.cpu)/float64(v.n)/1e6)
				cpuRel = fmt.Sprintf("%.2fx", float64(v.cpu)/float64(v.n)/(float64(bare.cpu)/float64(bare.n)))
			}
			fmt.Fprintf(w, "%s\t%.3f ms\t%.2fx\t%s\t%s\t%s\t\n", name, float64(m)/1e6,
				float64(v.total)/float64(v.n)/(float64(bare.total)/float64(bare.n)), roundSpread(v, bare), cpu, cpuRel)
		}
		w.Flush()
	}
}
