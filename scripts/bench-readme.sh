#!/usr/bin/env bash
# bench-readme.sh puts a benchmark report (bench/out/report.md from
# `make bench`, or the file named) where the docs show it, between the lines
# "<!-- bench:start -->" and "<!-- bench:end -->":
#   - README.md gets the report's head: the paragraph that names the run and
#     the machine, and the table of medians and ratios;
#   - docs/performance.md gets the whole report (the targets' verdicts, the
#     notes, what was not measured) and a chart per workload.
# It then copies the run (report.md, results.jsonl, the SVG charts) to
# bench/results/, where the docs link them.
#
# bench-readme.sh --check writes nothing: it fails when either file's block
# differs from what bench/results/ gives (scripts/check-docs.sh runs it, so
# that the tables stay generated, never edited by hand).
#
# Either way it fails when a file's markers are missing.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

check=0
if [ "${1:-}" = --check ]; then
	check=1
	report=bench/results/report.md
else
	report=${1:-bench/out/report.md}
fi
[ -f "$report" ] || { echo "bench-readme: no $report: run make bench first" >&2; exit 1; }
dir=$(dirname "$report")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The README's block: the report through the end of its first table.
awk '/^\|/ {table = 1} table && !/^\|/ {exit} {print}' "$report" >"$tmp/readme-block"
# docs/performance.md's block: the whole report, then the charts.
{
	cat "$report"
	echo
	for f in "$dir"/*.svg; do
		n=$(basename "$f" .svg)
		printf '![%s](../bench/results/%s.svg)\n' "$n" "$n"
	done
} >"$tmp/performance-block"

# splice FILE BLOCK: FILE with BLOCK between its markers, on stdout.
splice() {
	grep -q '^<!-- bench:start -->$' "$1" && grep -q '^<!-- bench:end -->$' "$1" ||
		{ echo "bench-readme: $1 has no <!-- bench:start --> / <!-- bench:end --> lines" >&2; exit 1; }
	awk -v block="$2" '
		$0 == "<!-- bench:start -->" {
			print
			while ((getline line < block) > 0) print line
			skip = 1
			next
		}
		$0 == "<!-- bench:end -->" { skip = 0 }
		!skip { print }' "$1"
}

status=0
for pair in README.md:readme-block docs/performance.md:performance-block; do
	file=${pair%%:*}
	splice "$file" "$tmp/${pair#*:}" >"$tmp/new"
	if [ "$check" = 1 ]; then
		if ! cmp -s "$tmp/new" "$file"; then
			echo "bench-readme: $file's table is not the one bench/results/report.md gives (run scripts/bench-readme.sh on a make bench report; never edit it by hand):" >&2
			diff "$file" "$tmp/new" >&2 || true
			status=1
		fi
	else
		cat "$tmp/new" >"$file"
	fi
done
if [ "$check" = 1 ]; then
	exit "$status"
fi
if [ "$dir" != bench/results ]; then
	mkdir -p bench/results
	rm -f bench/results/*.svg
	cp "$report" bench/results/report.md
	cp "$dir"/results.jsonl "$dir"/*.svg bench/results/
fi
echo "bench-readme: README.md's and docs/performance.md's tables and bench/results/ are from $report" >&2
