package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/openparallax/sandbox"
)

// maxRequestBytes bounds a --request document.
const maxRequestBytes = 1 << 20

// requestCompanions are the flags run takes together with --request: how
// the run is shown, not what is run. Every other flag would change the
// request (its Config, environment, directory, timeout or command) and is
// refused with it: the request is the whole request.
var requestCompanions = []string{"request", "tty", "explain"}

// runRequest is what run runs: the request of --request, or the one the
// flags and CMD make. Either way the program's environment is the
// Config's Env, whole (see progFlags.configEnv; a request without an env
// gets PATH alone, as run without --env does), and Dir is absolute or "".
func (a *runArgs) runRequest(fs *flag.FlagSet, stdin io.Reader) (sandbox.RunRequest, error) {
	if a.request == "" {
		return a.flagRequest(fs)
	}
	var extra []string
	fs.Visit(func(f *flag.Flag) {
		if !slices.Contains(requestCompanions, f.Name) {
			extra = append(extra, "--"+f.Name)
		}
	})
	switch {
	case len(extra) > 0:
		return sandbox.RunRequest{}, fmt.Errorf("--request is the whole request: %s would change it (set it in the request; only --tty and --explain go with --request)", strings.Join(extra, ", "))
	case fs.NArg() > 0:
		return sandbox.RunRequest{}, errors.New("--request is the whole request: the command is its \"command\", not arguments after --")
	}
	req, err := readRequest(a.request, stdin)
	if err != nil {
		return req, err
	}
	if req.Config.Env == nil {
		req.Config.Env = map[string]string{"PATH": os.Getenv("PATH")}
	}
	if req.Dir != "" {
		if err := checkDir(req.Dir, "dir"); err != nil {
			return req, fmt.Errorf("--request: %v", err)
		}
	}
	return req, nil
}

// flagRequest is the request of run's flags and CMD.
func (a *runArgs) flagRequest(fs *flag.FlagSet) (sandbox.RunRequest, error) {
	if fs.NArg() == 0 {
		return sandbox.RunRequest{}, errors.New("missing CMD (write it after --)")
	}
	if err := a.pf.check(); err != nil {
		return sandbox.RunRequest{}, err
	}
	cfg, err := a.cf.config()
	if err != nil {
		return sandbox.RunRequest{}, err
	}
	if err := a.pf.configEnv(&cfg); err != nil {
		return sandbox.RunRequest{}, err
	}
	return sandbox.RunRequest{Config: cfg, Command: fs.Args(), Dir: a.pf.cwd, Timeout: a.timeout}, nil
}

// readRequest reads and checks the request in file, or on stdin for "-".
func readRequest(file string, stdin io.Reader) (sandbox.RunRequest, error) {
	var r io.Reader = stdin
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return sandbox.RunRequest{}, fmt.Errorf("--request: %v", err)
		}
		defer f.Close()
		r = f
	} else if stdin == nil {
		return sandbox.RunRequest{}, errors.New("--request -: no standard input")
	}
	b, err := io.ReadAll(io.LimitReader(r, maxRequestBytes+1))
	switch {
	case err != nil:
		return sandbox.RunRequest{}, fmt.Errorf("--request %s: %v", file, err)
	case len(b) > maxRequestBytes:
		return sandbox.RunRequest{}, fmt.Errorf("--request %s: larger than %d bytes", file, maxRequestBytes)
	}
	req, err := sandbox.ParseRunRequest(b)
	if err != nil {
		return req, fmt.Errorf("--request %s: %v", file, strings.TrimPrefix(err.Error(), "sandbox: "))
	}
	return req, nil
}

// checkDir refuses a working directory that is not an absolute path to a
// directory; what names it in the error.
func checkDir(dir, what string) error {
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("%s %q: want an absolute path", what, dir)
	}
	fi, err := os.Stat(dir)
	switch {
	case err != nil:
		return fmt.Errorf("%s %q: %v", what, dir, err)
	case !fi.IsDir():
		return fmt.Errorf("%s %q: not a directory", what, dir)
	}
	return nil
}

// envPATH is the program's PATH in env, found as the system finds it
// (on Windows whatever the case of its name).
func envPATH(env map[string]string) (string, bool) {
	if v, ok := env["PATH"]; ok || runtime.GOOS != "windows" {
		return v, ok
	}
	for k, v := range env {
		if strings.EqualFold(k, "PATH") {
			return v, true
		}
	}
	return "", false
}
