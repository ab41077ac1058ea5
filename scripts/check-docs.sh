#!/usr/bin/env bash
# check-docs.sh fails when the documentation drifts from the code:
#   - docs/architecture.md's package table has one row per package of the
#     module, and each row's imports column lists exactly what the package
#     imports (non-test imports): the module's own packages by their path in
#     the module (the root as `ptcx`), other modules by module path, the
#     standard library left out;
#   - no tracked file cites DESIGN.md, which is not in the repository;
#   - every relative link in the tracked Markdown files names a file or
#     directory that exists;
#   - the front page: README.md's length, its generated performance table,
#     and links to headings (the block at the end).
#   - the facts the docs state again are the code's (the tests named
#     TestDocs_* and their kin, run here): the limits' defaults in
#     api/limits.go's comments and docs/security.md's tables, the service's
#     config example, its table of errors and their HTTP statuses, the
#     error codes named in docs/architecture.md.
# It needs only the go command (no guest, no network).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

GO=${GO:-go}
module=$($GO list -m)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

# --- the package table -------------------------------------------------------

# The code: "package dependency" lines, with "." for the module's root.
$GO list -f '{{.ImportPath}}{{range .Imports}} {{.}}{{end}}' ./... >"$tmp/list"
# The wasmtime adapter is a module of its own (docs/engines.md), which ./...
# leaves out: listed in its workspace (the go.work beside it), with cgo on so
# that its cgo files count, its packages named like the root module's.
adapter=wasmhost/internal/engine/wasmtime
workspace="$root/$adapter/go.work"
(cd "$adapter" && GOWORK=$workspace CGO_ENABLED=1 $GO list -f '{{.ImportPath}}{{range .Imports}} {{.}}{{end}}' ./...) >>"$tmp/list"
awk '{print $1}' "$tmp/list" | sed "s#^$module\$#.#; s#^$module/##" | sort -u >"$tmp/code-packages"
awk '{for (i = 2; i <= NF; i++) print $i}' "$tmp/list" |
	awk -F/ '$1 ~ /\./' | grep -v "^$module\(/\|\$\)" | sort -u >"$tmp/external" || true
: >"$tmp/modules"
if [ -s "$tmp/external" ]; then
	GOWORK=$workspace xargs $GO list -f '{{.ImportPath}} {{.Module.Path}}' <"$tmp/external" >"$tmp/modules"
fi
awk -v module="$module" '
	FNR == NR { mod[$1] = $2; next }
	{
		pkg = $1 == module ? "." : substr($1, length(module) + 2)
		for (i = 2; i <= NF; i++) {
			dep = $i
			if (dep == module || index(dep, module "/") == 1) print pkg, (dep == module ? "." : substr(dep, length(module) + 2))
			else if (dep in mod) print pkg, mod[dep]
		}
	}' "$tmp/modules" "$tmp/list" | sort -u >"$tmp/code-imports"

# The table: rows of "| `package/` | owns | `import`, ... |" under "## Packages".
awk '
	/^## / { inside = ($0 == "## Packages"); next }
	inside && /^\| `/ {
		n = split($0, cell, "|")
		pkg = cell[2]
		gsub(/`|[[:space:]]/, "", pkg)
		if (pkg ~ /\(root\)$/) pkg = "."
		sub(/\/$/, "", pkg)
		print "P", pkg
		deps = cell[n - 1]
		while (match(deps, /`[^`]+`/)) {
			dep = substr(deps, RSTART + 1, RLENGTH - 2)
			sub(/\/$/, "", dep)
			if (dep == "ptcx") dep = "."
			print "I", pkg, dep
			deps = substr(deps, RSTART + RLENGTH)
		}
	}' docs/architecture.md >"$tmp/table"
awk '$1 == "P" {print $2}' "$tmp/table" | sort >"$tmp/doc-packages-all"
sort -u "$tmp/doc-packages-all" >"$tmp/doc-packages"
awk '$1 == "I" {print $2, $3}' "$tmp/table" | sort -u >"$tmp/doc-imports"

if [ ! -s "$tmp/doc-packages" ]; then
	echo "check-docs: docs/architecture.md has no package table under \"## Packages\"" >&2
	fail=1
fi
if dups=$(uniq -d "$tmp/doc-packages-all") && [ -n "$dups" ]; then
	echo "check-docs: docs/architecture.md lists these packages twice: $(echo $dups)" >&2
	fail=1
fi
report() { # report MESSAGE FILE: print MESSAGE and FILE's lines when FILE is not empty
	if [ -s "$2" ]; then
		echo "check-docs: $1" >&2
		sed 's/^/  /' "$2" >&2
		fail=1
	fi
}
comm -23 "$tmp/code-packages" "$tmp/doc-packages" >"$tmp/x"
report "docs/architecture.md's package table misses these packages of the module:" "$tmp/x"
comm -13 "$tmp/code-packages" "$tmp/doc-packages" >"$tmp/x"
report "docs/architecture.md's package table names packages that do not exist:" "$tmp/x"
comm -13 "$tmp/code-imports" "$tmp/doc-imports" >"$tmp/x"
report "docs/architecture.md's package table names imports that do not exist (package import):" "$tmp/x"
comm -23 "$tmp/code-imports" "$tmp/doc-imports" >"$tmp/x"
report "docs/architecture.md's package table misses these imports (package import):" "$tmp/x"

# --- DESIGN.md ---------------------------------------------------------------

if git grep -n -I 'DESIGN\.md' -- ':!scripts/check-docs.sh' >"$tmp/x"; then
	report "these lines cite DESIGN.md, which is not in the repository (cite docs/architecture.md):" "$tmp/x"
fi

# --- relative links in Markdown ----------------------------------------------

git ls-files '*.md' | grep -v '^guest/quickjs' | while read -r doc; do
	dir=$(dirname "$doc")
	# Links outside code: fenced blocks are dropped, each paragraph joined
	# into one line, and its code spans (which may cross lines) dropped.
	awk '/^[[:space:]]*```/ {code = !code; next}
		code {next}
		/^[[:space:]]*$/ {print para; para = ""; next}
		{para = para " " $0}
		END {print para}' "$doc" | sed 's/`[^`]*`//g' |
		{ grep -o '\]([^) ]*)' || true; } | sed 's/^](//; s/)$//; s/#.*//' | while read -r target; do
		case "$target" in '' | http://* | https://* | mailto:*) continue ;; esac
		[ -e "$dir/$target" ] || echo "$doc: $target"
	done
done >"$tmp/x"
report "these Markdown links name files that do not exist:" "$tmp/x"

# --- facts stated in the docs --------------------------------------------------

if ! $GO test -count=1 -run '^(TestDocs_|TestLimits_docCommentsStateTheDefaults$|TestErrors_everyCodeHasAStatus$)' \
	./api/ ./serve/ >"$tmp/x" 2>&1; then
	report "the docs state facts the code does not (go test -run TestDocs_ ./api/ ./serve/):" "$tmp/x"
fi


# --- the front page and its links (issue 35's front page) --------------------
#   - README.md is at most 300 lines: longer material goes to docs/ or
#     examples/ and is linked;
#   - its performance table, and docs/performance.md's report, are the ones
#     bench/results/report.md gives (scripts/bench-readme.sh --check);
#   - every relative Markdown link to a heading (file.md#anchor, or #anchor
#     in the same file) names a heading that file has, by GitHub's anchors.

readme_max=300
readme_lines=$(wc -l <README.md)
if [ "$readme_lines" -gt "$readme_max" ]; then
	echo "check-docs: README.md has $readme_lines lines, over its cap of $readme_max: move the longer material to docs/ or examples/ and link it" >&2
	fail=1
fi
if ! scripts/bench-readme.sh --check; then
	fail=1
fi

# anchors FILE: the anchors of FILE's headings, outside fenced code, as
# GitHub makes them (lowercase; characters other than letters, digits,
# spaces, - and _ dropped; spaces to -; a repeated one gets -1, -2, ...).
anchors() {
	awk '/^[[:space:]]*```/ {code = !code; next}
		code {next}
		/^#+ / {
			h = tolower($0)
			sub(/^#+ /, "", h)
			gsub(/[^a-z0-9 _-]/, "", h)
			gsub(/ /, "-", h)
			if (h in seen) { seen[h]++; h = h "-" seen[h] } else seen[h] = 0
			print h
		}' "$1"
}
git ls-files '*.md' | grep -v '^guest/quickjs' | while read -r doc; do
	dir=$(dirname "$doc")
	awk '/^[[:space:]]*```/ {code = !code; next}
		code {next}
		/^[[:space:]]*$/ {print para; para = ""; next}
		{para = para " " $0}
		END {print para}' "$doc" | sed 's/`[^`]*`//g' |
		{ grep -o '\]([^) ]*#[^) ]*)' || true; } | sed 's/^](//; s/)$//' | while read -r target; do
		case "$target" in http://* | https://* | mailto:*) continue ;; esac
		file=${target%%#*} anchor=${target#*#}
		if [ -z "$file" ]; then file=$doc; else file=$dir/$file; fi
		[ -f "$file" ] || continue # a missing file is reported above
		# grep without -q: reading all of it, it never cuts awk short (SIGPIPE
		# under pipefail would report a heading that exists).
		anchors "$file" | grep -xF -- "$anchor" >/dev/null || echo "$doc: $target"
	done
done >"$tmp/x"
report "these Markdown links name a heading their file does not have:" "$tmp/x"

if [ "$fail" -ne 0 ]; then
	exit 1
fi
echo "check-docs: docs/architecture.md's package table matches the imports; no dangling references; README.md within $readme_max lines, its performance table generated"
