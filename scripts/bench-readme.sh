#!/usr/bin/env bash
# bench-readme.sh puts a benchmark report (bench/out/report.md from
# `make bench`, or the file named) into README.md's Performance section,
# between the lines "<!-- bench:start -->" and "<!-- bench:end -->", and
# copies the whole run (report.md, results.jsonl, the SVG charts) to
# bench/results/, where the README links them. It fails when the markers
# are missing.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
report=${1:-bench/out/report.md}
[ -f "$report" ] || { echo "bench-readme: no $report: run make bench first" >&2; exit 1; }
grep -q '^<!-- bench:start -->$' README.md && grep -q '^<!-- bench:end -->$' README.md ||
	{ echo "bench-readme: README.md has no <!-- bench:start --> / <!-- bench:end --> lines" >&2; exit 1; }
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
charts=$(for f in "$(dirname "$report")"/*.svg; do n=$(basename "$f" .svg); printf '![%s](bench/results/%s.svg)\n' "$n" "$n"; done)
awk -v report="$report" -v charts="$charts" '
	$0 == "<!-- bench:start -->" {
		print
		while ((getline line < report) > 0) print line
		print ""
		print charts
		skip = 1
		next
	}
	$0 == "<!-- bench:end -->" { skip = 0 }
	!skip { print }' README.md >"$tmp"
cat "$tmp" >README.md
dir=$(dirname "$report")
mkdir -p bench/results
rm -f bench/results/*.svg
cp "$report" bench/results/report.md
cp "$dir"/results.jsonl "$dir"/*.svg bench/results/
echo "bench-readme: README.md's table and bench/results/ are from $report" >&2
