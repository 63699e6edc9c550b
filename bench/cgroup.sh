#!/bin/sh
# The per-tree cost of Run's cgroup (BenchmarkRunCgroup), in interleaved
# rounds: each round runs each variant once, so that a
# change in the machine's load hits them alike. As root (the cgroup
# hierarchies are root's). Usage: bench/cgroup.sh [rounds] [benchtime]
set -eu
cd "$(dirname "$0")/.."
rounds=${1:-5} benchtime=${2:-200x}
bin=$(mktemp -d)/sandbox.test
go test -c -o "$bin" .
uptime
for r in $(seq "$rounds"); do
	for v in none limits spawn spawn-nocgroup; do
		"$bin" -test.run '^$' -test.bench "^BenchmarkRunCgroup/$v\$" -test.benchtime "$benchtime" | grep '^Benchmark'
	done
done
uptime
rm -r "$(dirname "$bin")"
