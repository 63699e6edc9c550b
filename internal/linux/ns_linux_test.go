//go:build linux

package linux

import (
	"fmt"
	"strings"
	"syscall"
	"testing"

	"github.com/openparallax/sandbox/internal/trampoline"
)

// TestNamespaceExplanations: why the namespace layer is unavailable, as
// PlanFor and doctor say it, for the refusals that depend on the machine's
// settings (sysctls, root or not): each setting is named with its remedy,
// and a setting that does not apply (root, or the sysctl at its default) is
// not blamed. The sysctls are given, not read: tests may not change them.
func TestNamespaceExplanations(t *testing.T) {
	host := func(root bool, sysctls ...string) nsHost {
		m := map[string]string{}
		for _, kv := range sysctls {
			k, v, _ := strings.Cut(kv, "=")
			m[k] = v
		}
		return nsHost{root: root, sysctl: func(name string) string { return m[name] }}
	}
	eperm := fmt.Errorf("fork/exec /proc/self/fd/4: %w", syscall.EPERM)
	mountEPERM := trampoline.Failure{Step: "mount(MS_PRIVATE)", Errno: syscall.EPERM, Detail: "/"}
	for _, c := range []struct {
		name         string
		got          nsState
		reason, hint string
	}{
		{"debian's sysctl", refusedNamespaces(eperm, host(false, "kernel.unprivileged_userns_clone=0")),
			"unprivileged user namespaces are disabled (sysctl kernel.unprivileged_userns_clone = 0)", "sysctl -w kernel.unprivileged_userns_clone=1"},
		{"no user namespaces at all", refusedNamespaces(eperm, host(false, "kernel.unprivileged_userns_clone=1", "user.max_user_namespaces=0")),
			"user namespaces are disabled (sysctl user.max_user_namespaces = 0)", "sysctl -w user.max_user_namespaces="},
		{"root is not blamed on the user-namespace sysctls", refusedNamespaces(eperm, host(true, "kernel.unprivileged_userns_clone=0", "user.max_user_namespaces=0")),
			"clone(CLONE_NEWNS|CLONE_NEWIPC) failed (fork/exec /proc/self/fd/4: operation not permitted): refused by a seccomp filter", "seccomp profile"},
		{"a container's seccomp profile", refusedNamespaces(eperm, host(false, "kernel.unprivileged_userns_clone=1", "user.max_user_namespaces=15000")),
			"clone(CLONE_NEWUSER|CLONE_NEWNS|CLONE_NEWIPC) failed (fork/exec /proc/self/fd/4: operation not permitted): refused by a seccomp filter", "seccomp profile"},
		{"another clone error", refusedNamespaces(syscall.ENOSPC, host(false)),
			"clone(CLONE_NEWUSER|CLONE_NEWNS|CLONE_NEWIPC) failed: no space left on device", ""},
		{"ubuntu's apparmor restriction", failedMounts(mountEPERM, host(false, "kernel.apparmor_restrict_unprivileged_userns=1")),
			"mount(MS_PRIVATE) /: operation not permitted: Ubuntu's AppArmor restricts unprivileged user namespaces", "\"userns,\" rule"},
		{"apparmor does not restrict root", failedMounts(mountEPERM, host(true, "kernel.apparmor_restrict_unprivileged_userns=1")),
			"operation not permitted: refused by a seccomp filter or an LSM", "allow mount, open_tree"},
		{"apparmor restriction off", failedMounts(mountEPERM, host(false, "kernel.apparmor_restrict_unprivileged_userns=0")),
			"operation not permitted: refused by a seccomp filter or an LSM", "allow mount, open_tree"},
		{"an old kernel", failedMounts(trampoline.Failure{Step: "mount_setattr", Errno: syscall.ENOSYS, Detail: "/"}, host(false)),
			"lacks the mount API", "5.12"},
	} {
		if !strings.Contains(c.got.reason, c.reason) || c.got.ok {
			t.Errorf("%s: reason %q, want it to contain %q", c.name, c.got.reason, c.reason)
		}
		if c.hint == "" && c.got.hint != "" || !strings.Contains(c.got.hint, c.hint) {
			t.Errorf("%s: hint %q, want %q", c.name, c.got.hint, c.hint)
		}
		if strings.Contains(c.name, "not blamed") || strings.Contains(c.name, "does not restrict") || strings.Contains(c.name, "off") {
			if strings.Contains(c.got.reason, "sysctl") || strings.Contains(c.got.reason, "AppArmor") {
				t.Errorf("%s: blames a setting that does not apply: %q", c.name, c.got.reason)
			}
		}
	}
}
