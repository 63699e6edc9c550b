// Command filecycles measures how a Go package's files depend on each
// other: file A refers to file B when an identifier used in A is declared
// in B (a function, method, type, field's type, variable or constant of
// the same package). It prints the largest strongly connected components
// of that graph, the sets of files that all reach each other, for one
// GOOS (the current one unless -goos says otherwise). Test files are left
// out.
//
//	go run ./tools/filecycles -goos linux .
//
// It type-checks the package from source with the standard library's own
// go/types, so a reference is what the compiler resolves, not a name that
// merely matches.
package main

import (
	"flag"
	"fmt"
	"go/ast"
	"go/build"
	"go/importer"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"sort"
)

func main() {
	goos := flag.String("goos", build.Default.GOOS, "the GOOS whose files are measured")
	top := flag.Int("top", 3, "how many components to print")
	flag.Parse()
	dir := "."
	if flag.NArg() > 0 {
		dir = flag.Arg(0)
	}
	if err := run(dir, *goos, *top); err != nil {
		fmt.Fprintln(os.Stderr, "filecycles:", err)
		os.Exit(1)
	}
}

func run(dir, goos string, top int) error {
	ctx := build.Default
	ctx.GOOS = goos
	ctx.CgoEnabled = false
	bp, err := ctx.ImportDir(dir, 0)
	if err != nil {
		return err
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range bp.GoFiles {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, 0)
		if err != nil {
			return err
		}
		files = append(files, f)
	}
	info := &types.Info{Uses: map[*ast.Ident]types.Object{}}
	conf := types.Config{Importer: importer.ForCompiler(fset, "source", nil)}
	conf.Error = func(error) {} // measure what resolves; a GOOS this machine cannot check fully still counts
	pkg, _ := conf.Check(bp.ImportPath, fset, files, info)
	edges := map[string]map[string]bool{}
	for _, f := range files {
		edges[fset.File(f.Pos()).Name()] = map[string]bool{}
	}
	for id, obj := range info.Uses {
		if obj == nil || obj.Pkg() != pkg || !obj.Pos().IsValid() {
			continue
		}
		from, to := fset.File(id.Pos()).Name(), fset.File(obj.Pos()).Name()
		if _, ours := edges[to]; ours && from != to {
			edges[from][to] = true
		}
	}
	comps := scc(edges)
	sort.Slice(comps, func(i, j int) bool { return len(comps[i]) > len(comps[j]) })
	fmt.Printf("%s (GOOS=%s): %d files; largest cycles:\n", dir, goos, len(files))
	for i, c := range comps {
		if i == top || len(c) < 2 {
			break
		}
		for k := range c {
			c[k] = filepath.Base(c[k])
		}
		slices.Sort(c)
		fmt.Printf("  %d files: %v\n", len(c), c)
	}
	if len(comps) == 0 || len(comps[0]) < 2 {
		fmt.Println("  none")
	}
	return nil
}

// scc returns the strongly connected components of g (Tarjan).
func scc(g map[string]map[string]bool) [][]string {
	index, low := map[string]int{}, map[string]int{}
	on := map[string]bool{}
	var stack []string
	var out [][]string
	n := 0
	var visit func(v string)
	visit = func(v string) {
		index[v], low[v] = n, n
		n++
		stack = append(stack, v)
		on[v] = true
		for w := range g[v] {
			if _, seen := index[w]; !seen {
				visit(w)
				low[v] = min(low[v], low[w])
			} else if on[w] {
				low[v] = min(low[v], index[w])
			}
		}
		if low[v] == index[v] {
			var c []string
			for {
				w := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				on[w] = false
				c = append(c, w)
				if w == v {
					break
				}
			}
			out = append(out, c)
		}
	}
	names := make([]string, 0, len(g))
	for v := range g {
		names = append(names, v)
	}
	slices.Sort(names)
	for _, v := range names {
		if _, seen := index[v]; !seen {
			visit(v)
		}
	}
	return out
}
