package cgroup

import (
	"strings"
	"testing"
)

// A mountinfo of a hybrid host (v1 controllers plus an empty cgroup2) and
// of a container whose cgroup2 mount shows only its own subtree.
const mountinfo = `25 30 0:23 / /sys rw,nosuid - sysfs sysfs rw
31 25 0:27 / /sys/fs/cgroup ro - tmpfs tmpfs ro,mode=755
33 31 0:29 / /sys/fs/cgroup/pids rw - cgroup cgroup rw,pids
34 31 0:30 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory
35 31 0:31 / /sys/fs/cgroup/cpu,cpuacct rw shared:9 - cgroup cgroup rw,cpu,cpuacct
36 31 0:32 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw,nsdelegate
37 31 0:33 /ctr/a /mnt/with\040space rw - cgroup2 cgroup2 rw
`

func TestParseMountinfo(t *testing.T) {
	ms, err := parseMountinfo(strings.NewReader(mountinfo))
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 5 {
		t.Fatalf("%d cgroup mounts: %+v", len(ms), ms)
	}
	if !ms[2].hasOption("cpuacct") || !ms[2].hasOption("cpu") || ms[2].hasOption("cpu,cpuacct") {
		t.Errorf("options of %+v", ms[2])
	}
	if ms[4].point != "/mnt/with space" || ms[4].root != "/ctr/a" || ms[4].fstype != "cgroup2" {
		t.Errorf("escaped mount %+v", ms[4])
	}
	for _, c := range []struct {
		m          mount
		p, want    string
		wantInside bool
	}{
		{ms[0], "/", "/sys/fs/cgroup/pids", true},
		{ms[1], "/process_api/x", "/sys/fs/cgroup/memory/process_api/x", true},
		{ms[4], "/ctr/a/sub", "/mnt/with space/sub", true},
		{ms[4], "/ctr/a", "/mnt/with space", true},
		{ms[4], "/ctr/ab", "", false}, // a sibling, not below the mount's root
		{ms[4], "/other", "", false},
	} {
		got, ok := c.m.dirOf(c.p)
		if ok != c.wantInside || got != c.want {
			t.Errorf("dirOf(%s) under %s = %q, %v; want %q, %v", c.p, c.m.root, got, ok, c.want, c.wantInside)
		}
	}
}

func TestParseSelfCgroup(t *testing.T) {
	sc, err := parseSelfCgroup(strings.NewReader("9:name=systemd:/\n8:pids:/\n4:memory:/process_api/x\n2:cpu,cpuacct:/a\n0::/user.slice/u.scope\n"))
	if err != nil {
		t.Fatal(err)
	}
	if sc.v2 != "/user.slice/u.scope" || sc.v1["pids"] != "/" || sc.v1["memory"] != "/process_api/x" || sc.v1["cpuacct"] != "/a" || sc.v1["cpu"] != "/a" {
		t.Errorf("%+v", sc)
	}
}

func TestGroupName(t *testing.T) {
	n := groupName(4026531836, 1234, 98765, "00ff")
	ns, pid, start, ok := parseGroupName(n)
	if !ok || ns != 4026531836 || pid != 1234 || start != 98765 {
		t.Errorf("%s parsed as %d %d %d %v", n, ns, pid, start, ok)
	}
	for _, bad := range []string{"", "x", "1.2.3", "1.0.3.ab", "1.-2.3.ab", "a.2.3.ab", "1.2.3.", "1.2.3.ab.cd", "cgroup.procs"} {
		if _, _, _, ok := parseGroupName(bad); ok {
			t.Errorf("%q parsed as a group name", bad)
		}
	}
}

func TestParseKeyed(t *testing.T) {
	b := []byte("low 0\nhigh 0\nmax 3\noom 1\noom_kill 2\n")
	if n, ok := parseKeyed(b, "oom_kill"); !ok || n != 2 {
		t.Errorf("oom_kill = %d, %v", n, ok)
	}
	if n, ok := parseKeyed(b, "oom"); !ok || n != 1 {
		t.Errorf("oom = %d, %v", n, ok)
	}
	if _, ok := parseKeyed(b, "missing"); ok {
		t.Error("found a missing key")
	}
	if p, err := parsePids([]byte("12\n345\n")); err != nil || len(p) != 2 || p[1] != 345 {
		t.Errorf("parsePids: %v, %v", p, err)
	}
	if _, err := parsePids([]byte("12\nx\n")); err == nil {
		t.Error("parsePids accepted a non-number")
	}
}
