package sandbox

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// RunRequest is one whole request to run a program confined, as a single
// JSON document: the Config (its Env is the program's environment), the
// command, and the options of [Run] that data can carry. An agent harness
// or a model writes one; the CLI runs one (`sandbox run --request FILE`),
// [RunRequestSchema] describes it, and seed 004's endowments map to it.
//
// In JSON:
//
//	{"config": {...}, "command": ["git", "status"], "dir": "/w", "timeout": "30s", "max_output": 1048576}
type RunRequest struct {
	// Config is what the program may do (see [Config]).
	Config Config
	// Command is the program and its arguments; it must not be empty.
	// How a name without a slash is found is up to the runner: the CLI
	// looks it up in the program's PATH (Config.Env's), as env(1) does.
	Command []string
	// Dir is the working directory; "" is the runner's. The Config must
	// grant it for the program to use it.
	Dir string
	// Timeout, when positive, kills the program and all its processes that
	// long after it started (RunOptions.Timeout). In JSON a Go duration
	// string such as "30s" or "5m"; a bare number is refused, since its
	// unit would be a guess.
	Timeout time.Duration
	// MaxOutput is how many bytes of each output stream are kept
	// (RunOptions.MaxOutput); 0 is DefaultMaxOutput.
	MaxOutput int
}

// runRequestJSON is RunRequest as JSON writes it.
type runRequestJSON struct {
	Config    Config          `json:"config"`
	Command   []string        `json:"command"`
	Dir       string          `json:"dir,omitempty"`
	Timeout   json.RawMessage `json:"timeout,omitempty"`
	MaxOutput int             `json:"max_output,omitempty"`
}

// MarshalJSON writes r with the names shown on [RunRequest]; the timeout
// as a duration string.
func (r RunRequest) MarshalJSON() ([]byte, error) {
	j := runRequestJSON{Config: r.Config, Command: r.Command, Dir: r.Dir, MaxOutput: r.MaxOutput}
	if r.Timeout != 0 {
		j.Timeout, _ = json.Marshal(r.Timeout.String())
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON writes. An unknown field, in the
// request or its Config, is an error whatever the decoder's settings: a
// misspelt grant must not become no grant, nor a misspelt restriction
// none.
func (r *RunRequest) UnmarshalJSON(b []byte) error {
	var j runRequestJSON
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return err
	}
	*r = RunRequest{Config: j.Config, Command: j.Command, Dir: j.Dir, MaxOutput: j.MaxOutput}
	if len(j.Timeout) == 0 || string(j.Timeout) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(j.Timeout, &s); err != nil {
		return errors.New(`timeout: want a duration string such as "30s" or "5m"`)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf(`timeout: %v (want a duration such as "30s" or "5m")`, err)
	}
	r.Timeout = d
	return nil
}

// ParseRunRequest reads one RunRequest from JSON, refusing unknown fields
// at every level and trailing data, then checks it with
// [RunRequest.Validate].
func ParseRunRequest(b []byte) (RunRequest, error) {
	var r RunRequest
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&r); err != nil {
		return RunRequest{}, fmt.Errorf("sandbox: run request: %w", err)
	}
	if dec.More() {
		return RunRequest{}, errors.New("sandbox: run request: trailing data after the request")
	}
	if err := r.Validate(); err != nil {
		return RunRequest{}, err
	}
	return r, nil
}

// Validate checks r as Run will: the Config (see [Config.Validate]), a
// command, and options that are not negative.
func (r RunRequest) Validate() error {
	switch {
	case len(r.Command) == 0 || r.Command[0] == "":
		return errors.New("sandbox: run request: command: want the program and its arguments, e.g. [\"git\", \"status\"]")
	case r.Timeout < 0:
		return errors.New("sandbox: run request: timeout: negative")
	case r.MaxOutput < 0:
		return errors.New("sandbox: run request: max_output: negative")
	}
	return r.Config.Validate()
}

// Options is the RunOptions r carries (Dir, Timeout, MaxOutput). The
// environment stays in the Config (Config.Env); streams are the caller's.
func (r RunRequest) Options() RunOptions {
	return RunOptions{Dir: r.Dir, Timeout: r.Timeout, MaxOutput: r.MaxOutput}
}
