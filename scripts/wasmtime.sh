#!/usr/bin/env bash
# wasmtime.sh runs the go command on a build of ptcx that has the wasmtime
# engine (docs/engines.md):
#
#   scripts/wasmtime.sh build [flags] [packages]   e.g. -o bin/ptcx-wasmtime ./cmd/ptcx
#   scripts/wasmtime.sh test  [flags] [packages]   e.g. ./wasmhost/ ./executor/
#   scripts/wasmtime.sh vet   [flags] [packages]
#
# The adapter, wasmhost/internal/engine/wasmtime, is a module of its own
# (it alone requires wasmtime-go, so `go mod tidy` in a module that embeds
# ptcx never downloads it), and no file of the root module imports it. This
# script links it: in workspace mode (the go.work beside the adapter, which
# uses the root module and the adapter's) it gives the go command an
# -overlay that adds one file to package wasmhost, a blank import of the
# adapter (which registers itself with package engine), and the wasmtime
# build tag, which selects the tests that need the engine linked (and drops
# the ones that check a build without it). cgo is on: a C compiler is
# needed, and the first build links wasmtime's static library (about a
# minute).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

if [ $# -lt 1 ]; then
	echo "usage: scripts/wasmtime.sh build|test|vet|list [go flags] [packages]" >&2
	exit 2
fi
cmd=$1
shift
case "$cmd" in
build | test | vet | list) ;;
*)
	echo "wasmtime.sh: unknown command $cmd (build, test, vet or list)" >&2
	exit 2
	;;
esac

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/engine_wasmtime.go" <<'GO'
package wasmhost

// The wasmtime engine, linked by scripts/wasmtime.sh's overlay: its adapter
// registers itself (engine.Register).
import _ "github.com/ptcx/ptcx/wasmhost/internal/engine/wasmtime"
GO
printf '{"Replace":{"%s":"%s"}}\n' "$root/wasmhost/zz_engine_wasmtime.go" "$tmp/engine_wasmtime.go" >"$tmp/overlay.json"

GO=${GO:-go}
export CGO_ENABLED=1
export GOWORK="$root/wasmhost/internal/engine/wasmtime/go.work"
# Not exec: the trap removes the overlay when the go command is done.
"$GO" "$cmd" -tags wasmtime -overlay "$tmp/overlay.json" "$@"
