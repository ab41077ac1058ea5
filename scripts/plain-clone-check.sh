#!/usr/bin/env bash
# plain-clone-check.sh checks that the module builds from a plain clone: it
# copies the tracked tree (and new files not yet added, but nothing
# git-ignored, so no guest/wasm/guest.wasm) to a temporary directory and
# there, with no C toolchain (CGO_ENABLED=0), runs
#
#   go build ./... && go vet ./...
#   go test of every package whose tests do not link the guest
#   go test ./internal/testkit/ (the skip-or-fail rule) and ./guest/: skipped,
#     saying why; and failing with PTCX_REQUIRE_GUEST=1
#   scripts/embedder-check.sh on the copy: a module embedding ptcx needs no
#     wasmtime-go (the wasmtime adapter is a module of its own)
#
# It exits non-zero on the first failure. Go modules come from the usual
# module cache or proxy.
set -euo pipefail

root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

say() { echo "plain-clone-check: $*" >&2; }
die() {
	echo "plain-clone-check: error: $*" >&2
	exit 1
}

# The files of a clone: tracked ones that exist, and untracked ones that are
# not ignored (a change about to be committed).
(cd "$root" && git ls-files -z --cached --others --exclude-standard |
	while IFS= read -r -d '' f; do [ -f "$f" ] && printf '%s\0' "$f"; done |
	tar --null -T - -cf -) | tar -xf - -C "$tmp"
[ ! -e "$tmp/guest/wasm/guest.wasm" ] || die "the copy has guest/wasm/guest.wasm: is it tracked?"
[ -d "$tmp/guest/wasm" ] || die "the copy has no guest/wasm directory (its README.md must be tracked)"

cd "$tmp"
export CGO_ENABLED=0
unset CI PTCX_REQUIRE_GUEST PTCX_GUEST
module=$(go list -m)

say "go build ./... in a copy without the guest ($tmp)"
go build ./...
say "go vet ./..."
go vet ./...

# A package's tests need the guest when its test binary links package
# guest (directly or through wasmhost); those are left out.
mapfile -t needs < <(go list -test -f '{{.ImportPath}} {{join .Deps " "}}' ./... |
	awk -v g="$module/guest" '$1 ~ /\.test$/ { for (i = 2; i <= NF; i++) if ($i == g) { sub(/\.test$/, "", $1); print $1; break } }')
mapfile -t all < <(go list ./...)
plain=()
for p in "${all[@]}"; do
	skip=
	for n in "${needs[@]}" "$module/guest"; do [ "$p" = "$n" ] && skip=1 && break; done
	[ -n "$skip" ] || plain+=("$p")
done
[ ${#plain[@]} -gt 0 ] || die "no package to test without the guest"
say "go test of the ${#plain[@]} packages whose tests do not need the guest (left out: ${needs[*]#"$module/"})"
go test -count=1 "${plain[@]}"

say "go test ./internal/testkit/ ./guest/: ./guest/ skips without the guest, and fails when the guest is required"
go test -count=1 ./internal/testkit/
out=$(go test -count=1 -v ./guest/ 2>&1) || die "go test ./guest/ failed without the guest:"$'\n'"$out"
grep -q -- '--- SKIP: TestWasm' <<<"$out" || die "go test ./guest/ did not skip TestWasm:"$'\n'"$out"
grep -q 'make guest' <<<"$out" || die "the skip does not say how to build the guest:"$'\n'"$out"
if out=$(PTCX_REQUIRE_GUEST=1 go test -count=1 ./guest/ 2>&1); then
	die "go test ./guest/ passed with PTCX_REQUIRE_GUEST=1 and no guest:"$'\n'"$out"
fi
grep -q 'the guest is required here' <<<"$out" || die "the failure does not say the guest is required:"$'\n'"$out"

say "scripts/embedder-check.sh: a module embedding ptcx needs no wasmtime-go"
"$root/scripts/embedder-check.sh" "$tmp"
say "ok"
