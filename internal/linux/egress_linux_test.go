//go:build linux

package linux

// The egress layer's decisions as WrapCommand applies them (see
// egress_plan_test.go for the plan as data).

import (
	"errors"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/openparallax/sandbox/internal/spec"
)

// WrapCommand refuses a Config that binds P and connects to the caller's
// localhost:P (TestEgressPlanAsData's "loopback port also bound").
func TestEgressLoopbackBindWrapCommand(t *testing.T) {
	defer func(old func() (bool, string, string)) { netNamespacesAvailable = old }(netNamespacesAvailable)
	defer func(old func() (bool, string)) { transparentAvailable = old }(transparentAvailable)
	netNamespacesAvailable = func() (bool, string, string) { return true, "", "" }
	transparentAvailable = func() (bool, string) { return true, "" }
	if kernel().abi < 1 {
		t.Skip("no Landlock here: WrapCommand fails before egress")
	}
	cfg := Config{AllowedTCPConnect: []string{"localhost:8080"}, AllowedTCPBind: []uint16{8080}}
	var ce *spec.ConfigError
	if err := New().WrapCommand(exec.Command("/bin/true"), cfg); !errors.As(err, &ce) || ce.Value != "localhost:8080" {
		t.Errorf("WrapCommand: %v, want the ConfigError for localhost:8080", err)
	}
	// Run's refusal is checked in the root package
	// (TestEgressLoopbackBindRefused).
}

// Without network namespaces, WrapCommand starts a Config naming hosts
// with port rules only, and Strict refuses it (TestEgressPlanAsData's "no
// network namespaces").
func TestEgressNoNamespacesWrapCommand(t *testing.T) {
	defer func(old func() (bool, string, string)) { netNamespacesAvailable = old }(netNamespacesAvailable)
	netNamespacesAvailable = func() (bool, string, string) { return false, "clone(CLONE_NEWNET) refused (test)", "a remedy" }
	cfg := Config{AllowedTCPConnect: []string{"example.com:443"}}
	if kernel().abi < 1 {
		t.Skip("no Landlock here: WrapCommand fails before egress")
	}
	cmd := exec.Command("/bin/true")
	if err := New().WrapCommand(cmd, cfg); err != nil {
		t.Fatal(err)
	}
	if EgressOf(cmd) != nil || cmd.SysProcAttr != nil && cmd.SysProcAttr.Cloneflags&syscall.CLONE_NEWNET != 0 {
		t.Errorf("port-only WrapCommand: EgressOf %v, SysProcAttr %+v: want no proxy and no network namespace", EgressOf(cmd), cmd.SysProcAttr)
	}
	cfg.Strict = true
	cmd = exec.Command("/bin/true")
	if err := New().WrapCommand(cmd, cfg); !errors.Is(err, spec.ErrNotEnforced) || !strings.Contains(err.Error(), "tcp_connect_host") {
		t.Errorf("Strict: %v, want ErrNotEnforced naming tcp_connect_host", err)
	}
}
