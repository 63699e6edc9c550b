#!/usr/bin/env bash
# Kernel matrix: the library's Linux test binaries, each booted in a
# throw-away qemu VM under three kernels, to prove the degrade rules:
#
#   6.1             Debian 12's default cloud kernel: Landlock ABI 2
#   6.12            linux-image-6.12-cloud-amd64: Landlock ABI 6
#   6.1-nolandlock  6.1 booted with an lsm= list without landlock
#
# The tests read the ABI from the kernel they run on (they hard-code none);
# the labels above are only names. Each run prints -test.v output to a log,
# and this script prints a per-kernel summary with every skip reason. It
# exits non-zero if any kernel fails.
#
# The guest is a bare initramfs (run-under-kernel.sh): no shell, no libc, no
# CA bundle. The fixtures the tests use are copied in: /bin/true, /bin/false,
# /bin/sh and /usr/bin/env from this host with their ELF interpreter and
# libraries (dynamic binaries, so that exec grants are tested with the
# interpreter a granted program needs, and so that /bin/true and /bin/false
# are different files, unlike busybox links), and the system CA bundle.
#
# Environment:
#   RUN_UNDER_KERNEL  the runner (default ../shared/tools/run-under-kernel.sh)
#   KERNELS_OUT       directory for binaries and logs (default: a new temp dir)
#   KERNELS_ONLY      run only the kernels whose label matches this regexp
#   KERNELS_VERBOSE=1 also stream the guests' output
#   KERNELS_TIMEOUT   per VM, seconds (default 300)
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
export GOTOOLCHAIN=local GOFLAGS=-buildvcs=false

RUNNER=${RUN_UNDER_KERNEL:-../shared/tools/run-under-kernel.sh}
if [ ! -f "$RUNNER" ]; then
	cat >&2 <<EOF
kernels.sh: $RUNNER not found.
The kernel matrix boots test binaries with run-under-kernel.sh from the shared
tools, which CI checks out beside this repository (../shared/tools/). Check it
out there, or set RUN_UNDER_KERNEL=/path/to/run-under-kernel.sh.
EOF
	exit 2
fi
TIMEOUT=${KERNELS_TIMEOUT:-480}
OUT=${KERNELS_OUT:-$(mktemp -d "${TMPDIR:-/tmp}/kernels.XXXXXX")}
mkdir -p "$OUT/bin"
T_START=$(date +%s.%N)

say() { printf '[kernels] %s\n' "$*"; }
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN{printf "%.1f", b-a}'; }

# label|runner options|-test.skip regexp|why that test is not run there
KERNELS=(
	"6.1||"
	"6.12|--kernel-pkg linux-image-6.12-cloud-amd64|"
	# The regexp cannot hold "|" (the field separator): it matches the
	# two examples by optional groups.
	"6.1-nolandlock|--no-landlock|^Example(FinishCommand_engine)?(Run_limits)?\$|the runnable examples of WrapCommand and Run state the output of a confined /bin/sh; without Landlock they refuse (ErrUnavailable), as they must"
)

# ---------------------------------------------------------------- binaries
# The root package, the packages whose tests touch the kernel (any
# *_linux_test.go or kernel_*_test.go), and childtest (the re-exec helper
# every enforcement test relies on).
mapfile -t PKGS < <({
	printf '%s\n' . ./internal/seccomp ./internal/childtest
	# shellcheck disable=SC2016 # a Go template, not a shell expansion
	GOOS=linux go list -f '{{$d := .Dir}}{{range .TestGoFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}{{range .XTestGoFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}' ./... |
		grep -E '(_linux_test|/kernel_[^/]*_test)\.go$' | xargs -r -n1 dirname | sed "s|^$PWD\$|.|; s|^$PWD/|./|"
} | awk '!seen[$0]++')

BINS=()
declare -A BINDIR=()
for pkg in "${PKGS[@]}"; do
	[ -d "$pkg" ] || continue
	name=$(GOOS=linux go list -f '{{.Name}}' "$pkg")
	[ "$pkg" = . ] || name=$(printf '%s' "${pkg#./}" | tr / _)
	say "building $pkg -> $name.test"
	CGO_ENABLED=0 GOOS=linux GOARCH=amd64 go test -c -o "$OUT/bin/$name.test" "$pkg"
	if [ -x "$OUT/bin/$name.test" ]; then
		BINS+=("$name")
		BINDIR[$name]=$pkg
	fi
done
[ ${#BINS[@]} -gt 0 ] || { say "no test binaries built"; exit 1; }

# ---------------------------------------------------------------- fixtures
declare -A ADDED=()
ADDS=()
add_file() { # add_file HOSTPATH GUESTPATH: the file itself, not a link
	local src
	src=$(readlink -f "$1" 2>/dev/null) && [ -f "$src" ] || return 1
	[ -n "${ADDED[$2]+x}" ] && return 0
	ADDED[$2]=1
	ADDS+=(--add "$src:$2")
}
for prog in /bin/true /bin/false /bin/sh /usr/bin/env; do
	if ! add_file "$prog" "$prog"; then
		say "note: $prog missing on this host; tests that need it skip"
		continue
	fi
	# ldd lists the libraries and the interpreter at the paths the binary
	# names (e.g. /lib64/ld-linux-x86-64.so.2): put them there.
	while read -r lib; do
		add_file "$lib" "$lib" || say "note: cannot add $lib (needed by $prog)"
	done < <(ldd "$prog" 2>/dev/null | grep -oE '(^|[[:space:]])/[^[:space:]]+' | sed 's/^[[:space:]]*//')
done
ca_added=0
for ca in /etc/ssl/certs/ca-certificates.crt /etc/pki/tls/certs/ca-bundle.crt /etc/ssl/cert.pem; do
	if add_file "$ca" "$ca"; then ca_added=1; break; fi
done
[ $ca_added = 1 ] || say "note: no CA bundle on this host; the CA pool check skips"
say "fixtures: $(printf '%s ' "${!ADDED[@]}")"

# ---------------------------------------------------------------- acceleration
kvm_note="no /dev/kvm"
if [ -e /dev/kvm ]; then
	mods=
	for m in /sys/module/kvm*; do [ -e "$m" ] && mods="$mods${m##*/} "; done
	if [ -d /sys/module/kvm_intel ] || [ -d /sys/module/kvm_amd ]; then
		kvm_note="/dev/kvm with hardware KVM (modules: ${mods:-none})"
	else
		kvm_note="/dev/kvm present but no kvm_intel/kvm_amd (modules: ${mods:-none}): TCG emulation"
	fi
fi
say "acceleration: $kvm_note"

# ---------------------------------------------------------------- runs
# summarize LOG: "pass skip fail" of top-level tests.
counts() {
	awk '/^--- PASS: /{p++} /^--- SKIP: /{s++} /^--- FAIL: /{f++} END{printf "%d %d %d\n", p, s, f}' "$1"
}
# skip_reasons LOG: each skipped test (any level) with the last message it
# printed (for a test skipped in a re-executed child, the child's reason),
# grouped by reason.
skip_reasons() {
	awk '
	# last[t]: the last message test t printed, a line "file.go:NN: text"
	# with its continuation lines.
	/^[[:space:]]*=== (RUN|CONT|NAME)[[:space:]]/ { cur = $3; last[cur] = ""; next }
	/^[[:space:]]*--- (PASS|FAIL|SKIP): / {
		name = $3
		if ($2 == "SKIP:") {
			r = last[name]; if (r == "") r = "(no reason printed)"
			if (!(r in tests)) order[++nr] = r
			tests[r] = (tests[r] == "" ? "" : tests[r] ", ") name
		}
		next
	}
	cur != "" && /^[[:space:]]+[[:alnum:]_]+\.go:[0-9]+: / {
		line = $0; sub(/^[[:space:]]+[[:alnum:]_]+\.go:[0-9]+: /, "", line)
		# the headers childtest.Forward writes before the reason it forwards
		if (line ~ /^(skipped in (child process|the run .+|the child)|(child process|the run .+|the child) output):?$/) next
		last[cur] = line; next
	}
	cur != "" && /^[[:space:]]+[^[:space:]]/ && last[cur] != "" {
		line = $0; sub(/^[[:space:]]+/, "", line); last[cur] = last[cur] " " line
	}
	END { for (i = 1; i <= nr; i++) printf "      - %s\n        (%s)\n", order[i], tests[order[i]] }
	' "$1"
}
# failures LOG: the output of each failed top-level test.
failures() {
	awk '/^=== RUN/{buf=""} {buf = buf $0 "\n"} /^--- FAIL: /{printf "%s", buf; buf=""}' "$1" | tail -200
}

declare -a SUMMARY=()
overall=0
for entry in "${KERNELS[@]}"; do
	IFS='|' read -r label kopts skiprx skipwhy <<<"$entry"
	if [ -n "${KERNELS_ONLY:-}" ] && ! [[ $label =~ $KERNELS_ONLY ]]; then continue; fi
	k_t0=$(date +%s.%N)
	k_pass=0 k_skip=0 k_fail=0 k_ok=1 k_release='?' k_abi='?' k_accel='?'
	details=()
	for b in "${BINS[@]}"; do
		log=$OUT/$label-$b.log
		args=(-test.v -test.count=1 -test.timeout=$((TIMEOUT - 30))s)
		# The binary runs in /guest: give it its package's testdata there.
		extra=()
		[ -d "${BINDIR[$b]}/testdata" ] && extra=(--add "${BINDIR[$b]}/testdata:/guest/testdata")
		# The guest mounts cgroup2 with no controller enabled for the root's
		# children: internal/cgroup's tests, and the sandbox package's
		# limit tests (Run's cgroup), enable pids, memory and cpu there (and
		# only there) to test their v2 paths.
		# cgroup.memory=nokmem: the first memory cgroup would switch on the
		# kernel's memcg_kmem_online static key, which patches the running
		# slab allocator (text_poke_bp, an int3 on every CPU). Under qemu's
		# TCG (no KVM on the CI host) a second vCPU can still run the int3
		# after the patch is done, and the guest panics ("Oops: int3" in
		# kmem_cache_alloc from cgroup_mkdir, seen on 6.12). Kernel memory
		# accounting is not what the tests measure (anonymous, memfd and
		# tmpfs pages are user memory and still count).
		case $b in internal_cgroup | sandbox) extra+=(--env CGROUP_TEST_GUEST=1 --append cgroup.memory=nokmem) ;; esac
		[ -n "$skiprx" ] && [ "$b" = sandbox ] && args+=("-test.skip=$skiprx")
		say "running $b.test under $label"
		b_t0=$(date +%s.%N)
		# A guest that never reports a status (runner exit 125) died before
		# or outside the test binary: seen once in CI on 6.12 under TCG,
		# 7 s after boot with no test output at all, and not reproduced in
		# dozens of boots since. Such a run is booted once more; the first
		# console is printed here and the retry is written into the summary,
		# so a kernel that crashes every time still fails, and a crash that
		# went away is still visible. A test that fails (exit 1) or times
		# out (124) is never retried.
		retried=
		for attempt in 1 2; do
			set +e
			# shellcheck disable=SC2086 # kopts is a list of options
			if [ "${KERNELS_VERBOSE:-0}" = 1 ]; then
				bash "$RUNNER" --timeout "$TIMEOUT" $kopts "${ADDS[@]}" ${extra[@]+"${extra[@]}"} -- "$OUT/bin/$b.test" "${args[@]}" 2>&1 | tee "$log"
				rc=${PIPESTATUS[0]}
			else
				bash "$RUNNER" --timeout "$TIMEOUT" $kopts "${ADDS[@]}" ${extra[@]+"${extra[@]}"} -- "$OUT/bin/$b.test" "${args[@]}" >"$log" 2>&1
				rc=$?
			fi
			set -e
			[ "$rc" = 125 ] && [ "$attempt" = 1 ] || break
			mv "$log" "$log.first"
			retried="    (booted twice: the first guest ended without reporting a status, exit 125; its console: $log.first)"
			echo "----- $b.test under $label: the guest never reported a status (exit 125); booting once more. Its console: -----"
			tail -40 "$log.first"
			echo "-----"
		done
		b_time=$(elapsed "$b_t0")
		read -r p s f < <(counts "$log")
		init=$(grep -a -m1 '^\[guest-init\] kernel ' "$log" || true)
		if [ -n "$init" ]; then
			k_release=$(sed -E 's/^\[guest-init\] kernel ([^,]+),.*/\1/' <<<"$init")
			k_abi=$(sed -E 's/.*landlock ABI ([^,]*(\([^)]*\))?),.*/\1/' <<<"$init")
		fi
		k_accel=$(grep -a -m1 -oE 'booting \((kvm|tcg)' "$log" | sed 's/booting (//' || echo "?")
		result=PASS
		if [ "$rc" != 0 ] || [ "$f" != 0 ] || [ $((p + s)) = 0 ]; then
			result="FAIL (exit $rc)"
			k_ok=0
		fi
		k_pass=$((k_pass + p)) k_skip=$((k_skip + s)) k_fail=$((k_fail + f))
		details+=("$(printf '    %-18s %-16s %3d passed, %2d skipped, %d failed  (%ss, log %s)' "$b.test" "$result" "$p" "$s" "$f" "$b_time" "$log")")
		[ -n "$retried" ] && details+=("$retried")
		reasons=$(skip_reasons "$log")
		[ -n "$reasons" ] && details+=("$reasons")
		if [ "$result" != PASS ]; then
			echo "----- $b.test under $label: failed tests -----"
			failures "$log"
			echo "----- last lines of the console -----"
			tail -25 "$log"
		fi
	done
	[ -n "$skiprx" ] && details+=("    not run: tests matching $skiprx: $skipwhy")
	k_time=$(elapsed "$k_t0")
	verdict=PASS
	[ $k_ok = 1 ] || { verdict=FAIL; overall=1; }
	SUMMARY+=("$(printf '%-15s %s  kernel %s, Landlock ABI %s, %s: %d passed, %d skipped, %d failed, %ss' \
		"$label" "$verdict" "$k_release" "$k_abi" "$k_accel" "$k_pass" "$k_skip" "$k_fail" "$k_time")")
	SUMMARY+=("${details[@]}")
done

echo
echo "=== kernel matrix summary (top-level tests; acceleration: $kvm_note)"
printf '%s\n' "${SUMMARY[@]}"
echo "total $(elapsed "$T_START")s; logs in $OUT"
if [ $overall != 0 ]; then
	echo "kernel matrix: FAIL"
	exit 1
fi
echo "kernel matrix: PASS"
