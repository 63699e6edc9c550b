package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/openparallax/sandbox"
)

// configFlags are the flags that make a sandbox.Config. --config loads a JSON
// Config first; the other flags add to it.
type configFlags struct {
	file                        string
	ro, rw, exec, connect, bind []string
	allowSpawn, strict          bool
	allowCamera, allowMic       bool
	limits                      sandbox.Limits // set by the --max-* flags; zero fields leave --config's
}

func multi(fs *flag.FlagSet, dst *[]string, name, help string) {
	fs.Func(name, help, func(s string) error { *dst = append(*dst, s); return nil })
}

func (c *configFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&c.file, "config", "", "load the Config from `FILE.json` (flags add to it)")
	multi(fs, &c.ro, "ro", "grant reading `PATH` (repeatable)")
	multi(fs, &c.rw, "rw", "grant reading and writing inside `PATH` (repeatable)")
	multi(fs, &c.exec, "exec", "grant executing `PATH` (repeatable)")
	multi(fs, &c.connect, "connect", "grant TCP connect to `HOST:PORT` (repeatable; *:PORT for any host)")
	multi(fs, &c.bind, "bind", "grant TCP bind on `PORT` (repeatable)")
	fs.BoolVar(&c.allowSpawn, "allow-spawn", false, "let the program create processes")
	fs.BoolVar(&c.allowCamera, "allow-camera", false, "let the program use the camera (macOS device-camera; not enforceable elsewhere)")
	fs.BoolVar(&c.allowMic, "allow-microphone", false, "let the program use the microphone (macOS device-microphone; not enforceable elsewhere)")
	fs.BoolVar(&c.strict, "strict", false, "refuse to run if any part of the Config cannot be enforced here")
	fs.Func("max-procs", "limit the tasks (processes and threads) to `N`", intFlag(&c.limits.Processes))
	fs.Func("max-memory", "limit memory to `SIZE` (bytes, or with a K, M or G suffix: 1024-based)", sizeFlag(&c.limits.MemoryBytes))
	fs.Func("max-cpu", "limit CPU time to `DURATION` (e.g. 30s, 5m)", func(s string) error {
		d, err := time.ParseDuration(s)
		if err != nil || d <= 0 {
			return fmt.Errorf("want a positive duration such as 30s")
		}
		c.limits.CPUTime = d
		return nil
	})
	fs.Func("max-file-size", "limit the size of a file a process writes to `SIZE`", sizeFlag(&c.limits.FileSizeBytes))
	fs.Func("max-open-files", "limit the descriptors of a process to `N`", intFlag(&c.limits.OpenFiles))
}

func intFlag(dst *int64) func(string) error {
	return func(s string) error {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			return fmt.Errorf("want a positive whole number")
		}
		*dst = n
		return nil
	}
}

// sizeFlag reads a byte count with an optional K, M or G suffix (powers of
// 1024).
func sizeFlag(dst *int64) func(string) error {
	return func(s string) error {
		mult := int64(1)
		switch strings.ToUpper(s[len(s)-min(len(s), 1):]) {
		case "K":
			mult = 1 << 10
		case "M":
			mult = 1 << 20
		case "G":
			mult = 1 << 30
		}
		if mult > 1 {
			s = s[:len(s)-1]
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 || n > (1<<62)/mult {
			return fmt.Errorf("want a positive size in bytes, or with a K, M or G suffix")
		}
		*dst = n * mult
		return nil
	}
}

// config builds the Config, or a one-line usage error naming the flag.
func (c *configFlags) config() (sandbox.Config, error) {
	var cfg sandbox.Config
	if c.file != "" {
		data, err := os.ReadFile(c.file)
		if err != nil {
			return cfg, fmt.Errorf("--config: %v", err)
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&cfg); err != nil {
			return cfg, fmt.Errorf("--config %s: %v", c.file, err)
		}
		if err := dec.Decode(new(json.RawMessage)); err != io.EOF {
			return cfg, fmt.Errorf("--config %s: trailing data after the Config", c.file)
		}
	}
	cfg.AllowedReadPaths = append(cfg.AllowedReadPaths, c.ro...)
	cfg.AllowedWritePaths = append(cfg.AllowedWritePaths, c.rw...)
	cfg.AllowedExecPaths = append(cfg.AllowedExecPaths, c.exec...)
	cfg.AllowedTCPConnect = append(cfg.AllowedTCPConnect, c.connect...)
	for _, b := range c.bind {
		p, err := strconv.ParseUint(b, 10, 16)
		if err != nil || strings.TrimLeft(b, "0123456789") != "" {
			return cfg, fmt.Errorf("--bind %q: want a port number 0-65535", b)
		}
		cfg.AllowedTCPBind = append(cfg.AllowedTCPBind, uint16(p))
	}
	l := &cfg.Limits
	for _, f := range []struct{ flag, cfg *int64 }{
		{&c.limits.Processes, &l.Processes}, {&c.limits.MemoryBytes, &l.MemoryBytes},
		{&c.limits.FileSizeBytes, &l.FileSizeBytes}, {&c.limits.OpenFiles, &l.OpenFiles},
	} {
		if *f.flag != 0 {
			*f.cfg = *f.flag
		}
	}
	if c.limits.CPUTime != 0 {
		l.CPUTime = c.limits.CPUTime
	}
	cfg.AllowProcessSpawn = cfg.AllowProcessSpawn || c.allowSpawn
	cfg.AllowCamera = cfg.AllowCamera || c.allowCamera
	cfg.AllowMicrophone = cfg.AllowMicrophone || c.allowMic
	cfg.Strict = cfg.Strict || c.strict
	if err := cfg.Validate(); err != nil {
		return cfg, configFlagError(err)
	}
	return cfg, nil
}

// configFlagError names the flag behind a refused Config field.
func configFlagError(err error) error {
	ce, ok := err.(*sandbox.ConfigError)
	if !ok {
		return err
	}
	flagFor := map[string]string{
		"allowed_read_paths": "--ro", "allowed_write_paths": "--rw", "allowed_exec_paths": "--exec",
		"allowed_tcp_connect": "--connect",
	}
	name := flagFor[ce.Field]
	if name == "" {
		name = ce.Field
	}
	msg := fmt.Sprintf("%s %q: %s", name, ce.Value, ce.Reason)
	if ce.Err != nil {
		msg += ": " + ce.Err.Error()
	}
	return fmt.Errorf("%s (or %s in --config)", msg, ce.Field)
}

// newFlagSet makes a FlagSet whose errors are one line on stderr.
func newFlagSet(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// parse parses args; on error it prints one line naming the flag.
func parse(fs *flag.FlagSet, args []string, stderr io.Writer) bool {
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			fs.SetOutput(stderr)
			fs.PrintDefaults()
		} else {
			fmt.Fprintf(stderr, "sandbox %s: %v\n", fs.Name(), err)
		}
		return false
	}
	return true
}

func usageError(stderr io.Writer, cmd, format string, args ...any) int {
	fmt.Fprintf(stderr, "sandbox %s: %s\n", cmd, fmt.Sprintf(format, args...))
	return exitUsage
}
