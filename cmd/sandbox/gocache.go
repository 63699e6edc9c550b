package main

// --go-cache: a Go build cache kept between runs.
//
// Run gives the program a private HOME (when none is passed) that is
// deleted after the run, and with it the go command's default build
// cache: every `go build` then starts cold. --go-cache DIR keeps one: DIR
// is created (0700) if absent, granted read-write, and named by GOCACHE in
// the program's environment.
//
// The program writes that cache, so nothing outside the sandbox may trust
// it: a go command run outside that took its objects would link what a
// confined program wrote. The caller's own build cache ($GOCACHE, or the
// default os.UserCacheDir()/go-build) is therefore refused, as is a
// directory holding it or inside it; the help and the README say to give
// sandboxed runs a directory of their own. Runs sharing one DIR link
// what earlier runs wrote there: the README says to share it only between
// runs trusted alike.

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"

	"github.com/openparallax/sandbox"
	"github.com/openparallax/sandbox/internal/spec"
)

// applyGoCache adds --go-cache's grant to cfg and GOCACHE to its Env (an
// --env GOCACHE is replaced), making DIR when it is absent. With no DIR it
// changes nothing.
func (p *progFlags) applyGoCache(cfg *sandbox.Config) error {
	_, err := p.goCacheGrant(cfg, true)
	return err
}

// planGoCache is applyGoCache for plan and verify, which make nothing:
// a DIR that does not exist yet is left out of cfg, and note says so
// ("" when the grant was added, or there is no DIR).
func (p *progFlags) planGoCache(cfg *sandbox.Config) (note string, err error) {
	return p.goCacheGrant(cfg, false)
}

func (p *progFlags) goCacheGrant(cfg *sandbox.Config, create bool) (note string, err error) {
	if p.goCache == "" {
		return "", nil
	}
	dir, err := expandPath(p.goCache)
	if err != nil {
		return "", fmt.Errorf("--go-cache %q: %v", p.goCache, err)
	}
	if create {
		err = os.MkdirAll(dir, 0o700)
	} else if _, err = os.Stat(dir); os.IsNotExist(err) {
		return fmt.Sprintf("--go-cache %s does not exist yet: run makes it (0700) and grants it read-write with GOCACHE set; this leaves it out", dir), nil
	}
	if err != nil {
		return "", fmt.Errorf("--go-cache %q: %v", p.goCache, err)
	}
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		dir = r
	}
	for _, own := range callerGoCaches() {
		if spec.Under(dir, own) || spec.Under(own, dir) {
			return "", fmt.Errorf("--go-cache %q: this is (or holds) your own Go build cache %s, which go commands outside the sandbox trust; give sandboxed runs a directory of their own, e.g. ~/.cache/sandbox-go-build", p.goCache, own)
		}
	}
	cfg.AllowedWritePaths = append(cfg.AllowedWritePaths, dir)
	env := maps.Clone(cfg.Env)
	if env == nil {
		env = map[string]string{}
	}
	env["GOCACHE"] = dir
	cfg.Env = env
	return "", nil
}

// callerGoCaches are the build caches go commands outside the sandbox use:
// $GOCACHE when set, and the default, os.UserCacheDir()/go-build (resolved
// where they exist).
func callerGoCaches() []string {
	var out []string
	if c := os.Getenv("GOCACHE"); c != "" && c != "off" && filepath.IsAbs(c) {
		out = append(out, c)
	}
	if d, err := os.UserCacheDir(); err == nil {
		out = append(out, filepath.Join(d, "go-build"))
	}
	for i, c := range out {
		if r, err := filepath.EvalSymlinks(c); err == nil {
			out[i] = r
		}
	}
	return out
}
