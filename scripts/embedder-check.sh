#!/usr/bin/env bash
# embedder-check.sh [DIR] checks that a module embedding ptcx never needs
# wasmtime-go (207 MB), whose adapter is a module of its own
# (wasmhost/internal/engine/wasmtime; docs/engines.md). In DIR (a ptcx tree,
# the checkout by default; scripts/plain-clone-check.sh gives its copy):
#
#   - the root module's go.mod names no wasmtime-go, and `go mod tidy -diff`
#     finds nothing to change: tidy reads every file of every build tag, so
#     no file of the root module imports the adapter or wasmtime-go;
#   - a throwaway module outside the tree that imports every importable
#     package of ptcx (replace → DIR) is tidied, and its module graph
#     (`go list -m all`, `go mod why -m`) names no wasmtime-go.
#
# Offline (GOPROXY=off): the modules come from the module cache, which a
# build and test of ptcx has filled; wasmtime-go needed anywhere fails it.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dir=$(cd "${1:-$root}" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
say() { echo "embedder-check: $*" >&2; }
die() {
	echo "embedder-check: error: $*" >&2
	exit 1
}
wasmtime_go=github.com/bytecodealliance/wasmtime-go
# tidy reads the go.mod of every module that provides a test dependency of
# a dependency, which builds and tests never download: a fresh machine's
# module cache lacks them. So tidy runs once first through the configured
# proxy (Go modules only, the modules go.sum already names), to fill the
# cache; the checks below are offline, and still see wasmtime-go in go.mod,
# in tidy's diff or in an embedder's module graph if it were needed.
proxy=$(go env GOPROXY)
(cd "$dir" && GOFLAGS=-mod=mod GOWORK=off go mod tidy -diff >/dev/null 2>&1) || true
export GOPROXY=off GOFLAGS=-mod=mod GOWORK=off

cd "$dir"
module=$(go list -m)
! grep -q "$wasmtime_go" go.mod || die "$dir/go.mod names $wasmtime_go:"$'\n'"$(grep "$wasmtime_go" go.mod)"
out=$(go mod tidy -diff 2>&1) || die "go mod tidy -diff in $dir would change go.mod or go.sum (or failed):"$'\n'"$out"

# Every package an embedder can import: not a command, not internal.
mapfile -t pkgs < <(go list -f '{{if ne .Name "main"}}{{.ImportPath}}{{end}}' ./... | grep -v '/internal\(/\|$\)' || true)
[ ${#pkgs[@]} -gt 0 ] || die "no importable package in $dir"

mkdir "$tmp/embedder"
cd "$tmp/embedder"
cat >go.mod <<GOMOD
module example.com/embedder

go $(go -C "$dir" list -m -f '{{.GoVersion}}')

require $module v0.0.0-00010101000000-000000000000

replace $module => $dir
GOMOD
cp "$dir/go.sum" go.sum # checksums, offline: tidy keeps the ones it needs
{
	echo "package embedder"
	echo
	echo "import ("
	for p in "${pkgs[@]}"; do echo "	_ \"$p\""; done
	echo ")"
} >embedder.go
# Fills the cache, as above (this module is a throwaway): tidy, and the
# go.mod of every module in its graph, which `go list -m all` reads and a
# fresh machine's cache lacks after builds, tests and tidy.
GOPROXY=$proxy go mod tidy >/dev/null 2>&1 || true
GOPROXY=$proxy go list -m all >/dev/null 2>&1 || true
out=$(go mod tidy 2>&1) || die "go mod tidy in a module importing ptcx's ${#pkgs[@]} packages failed:"$'\n'"$out"
out=$(go list -m all 2>&1 >"$tmp/modules") || die "go list -m all in a module importing ptcx's ${#pkgs[@]} packages failed:"$'\n'"$(sort -u <<<"$out")"
if grep -q "$wasmtime_go" "$tmp/modules"; then
	die "the module graph of a module importing ptcx names $wasmtime_go:"$'\n'"$(go mod why -m "$(grep -o "$wasmtime_go[^ ]*" "$tmp/modules" | head -1)")"
fi
why=$(go mod why -m "$wasmtime_go/v39" 2>&1)
grep -q 'does not need module' <<<"$why" || die "go mod why -m $wasmtime_go/v39:"$'\n'"$why"
say "ok: a module importing ptcx's ${#pkgs[@]} packages has $(wc -l <"$tmp/modules") modules in its graph, none of them $wasmtime_go"
