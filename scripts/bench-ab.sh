#!/usr/bin/env bash
# bench-ab.sh A B [ROUNDS] compares two ptcx binaries on the benchmark's
# workloads in one run: it alternates them (A, B, B, A, A, B, ...: neither
# always goes first), ROUNDS times each (default 6), each round a whole
# `ptcx bench --json` of ptcx alone, and prints every workload's median of
# the rounds' medians for A and for B and the ratio B ÷ A. On these VMs two
# runs of one binary differ by up to 20–40%; a ratio says something only
# beside the spread of the rounds it prints.
# PTCX_BENCH_ARGS adds flags to ptcx bench (e.g. "--runs 20 --workloads trivial_e2e,per_call_await").
set -euo pipefail
if [ $# -lt 2 ]; then
	echo "usage: scripts/bench-ab.sh A B [ROUNDS]" >&2
	exit 2
fi
a=$1 b=$2 rounds=${3:-6}
for bin in "$a" "$b"; do
	[ -x "$bin" ] || { echo "bench-ab: $bin is not an executable" >&2; exit 2; }
done
case $rounds in '' | *[!0-9]*) echo "bench-ab: ROUNDS must be a number" >&2; exit 2 ;; esac
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for ((i = 0; i < rounds; i++)); do
	if (( i % 2 == 0 )); then order=("A:$a" "B:$b"); else order=("B:$b" "A:$a"); fi
	for pair in "${order[@]}"; do
		tag=${pair%%:*} bin=${pair#*:}
		# shellcheck disable=SC2086 # PTCX_BENCH_ARGS is a list of flags
		"$bin" bench --peers none --json ${PTCX_BENCH_ARGS:-} 2>"$out/err" |
			sed -n 's/.*"impl":"ptcx","metric":"\([^"]*\)".*"med":\([0-9.eE+-]*\).*/\1 \2/p' |
			sed "s/^/$tag /" >>"$out/all" || { echo "bench-ab: $bin bench failed:" >&2; cat "$out/err" >&2; exit 1; }
		echo "bench-ab: round $((i + 1))/$rounds $tag done" >&2
	done
done
# median of each workload's round medians, per binary; then B ÷ A.
printf "%-26s %12s %12s %8s   %s\n" workload "A median" "B median" "B ÷ A" "rounds A | B"
awk '
	{ v[$1 " " $2] = v[$1 " " $2] " " $3; seen[$2] = 1 }
	function med(s,   n, a, i, j, t) {
		n = split(s, a, " ")
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (a[j] + 0 < a[i] + 0) { t = a[i]; a[i] = a[j]; a[j] = t }
		return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
	}
	function spread(s,   n, a, i, lo, hi) {
		n = split(s, a, " "); lo = a[1]; hi = a[1]
		for (i = 2; i <= n; i++) { if (a[i] + 0 < lo + 0) lo = a[i]; if (a[i] + 0 > hi + 0) hi = a[i] }
		return lo "–" hi
	}
	END {
		for (w in seen) {
			ma = med(v["A " w]); mb = med(v["B " w])
			printf "%-26s %12.4g %12.4g %8.3f   %s | %s\n", w, ma, mb, (ma > 0 ? mb / ma : 0), spread(v["A " w]), spread(v["B " w])
		}
	}' "$out/all" | sort
