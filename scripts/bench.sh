#!/usr/bin/env bash
# bench.sh is `make bench`: ptcx beside its peers in one run (bench/).
#   1. installs what the peers need: Debian's nodejs and npm when missing,
#      then `npm ci --ignore-scripts` in bench/peers (quickjs-wasi, pinned by
#      its lockfile), and Debian's python3 when there is none (cpython-native,
#      the Python workloads' native peer; the Python guest itself is built by
#      make guest-python, which make bench runs first);
#   2. tests the Node peers (go test -tags benchnode ./bench: every
#      workload's answer on each, missing Node a failure there);
#   3. builds bin/ptcx-wasmtime (ptcx with the wasmtime engine too, by
#      scripts/wasmtime.sh: cgo) and
#      runs `bin/ptcx-wasmtime bench --require-peers --out bench/out` (a
#      missing peer fails the run; ptcx on wasmtime is one of them; a
#      workload a peer cannot measure, such as goja's suspend, does not),
#      which writes bench/out/results.jsonl (the JSON lines),
#      bench/out/report.md (the table, naming the machine) and one SVG chart
#      per workload;
#   4. runs serve's noisy-neighbour benchmark into bench/out/neighbour.txt.
# Before 3, scripts/qjs-native.sh builds the native QuickJS-NG reference of
# compute_loop (bin/qjs-native-switch, bin/qjs-native-goto: the guest's
# qjs-src with the host compiler, switch dispatch and computed goto), which
# ptcx bench measures with --qjs-native bin (issue #36).
# PTCX_BENCH_ARGS adds flags to ptcx bench (e.g. "--runs 5" for a quick run).
# scripts/bench-readme.sh then puts bench/out/report.md in README.md.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
GO=${GO:-go}

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
	echo "bench: node and npm are missing; installing Debian's nodejs and npm" >&2
	sudo=()
	if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
	"${sudo[@]}" apt-get update -q
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q nodejs npm
fi
if ! command -v python3 >/dev/null 2>&1; then
	echo "bench: python3 is missing (the cpython-native peer); installing Debian's python3" >&2
	sudo=()
	if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
	"${sudo[@]}" apt-get update -q
	DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -q python3
fi
# --ignore-scripts: no dependency runs code at install (quickjs-wasi has no
# install script; its lockfile entry has no hasInstallScript), and bench.sh may
# run as root.
(cd bench/peers && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)

PTCX_REQUIRE_GUEST=1 $GO test -count=1 -tags benchnode -run 'TestNode' ./bench

scripts/qjs-native.sh

version=$(git describe --always --dirty 2>/dev/null || echo devel)
GO=$GO "$root/scripts/wasmtime.sh" build -ldflags "-X main.version=$version" -o bin/ptcx-wasmtime ./cmd/ptcx
mkdir -p bench/out
# shellcheck disable=SC2086 # PTCX_BENCH_ARGS is a list of flags
bin/ptcx-wasmtime bench --require-peers --qjs-native bin --out bench/out ${PTCX_BENCH_ARGS:-}
# Issue #15's noisy neighbour through the whole service (serve/neighbour_bench_test.go).
PTCX_REQUIRE_GUEST=1 $GO test -count=1 -run '^$' -bench 'BenchmarkServer_noisyNeighbour' -benchtime=7x ./serve/ | tee bench/out/neighbour.txt
echo "bench: the report is in bench/out (report.md, results.jsonl, one SVG per workload); scripts/bench-readme.sh puts it in README.md" >&2
