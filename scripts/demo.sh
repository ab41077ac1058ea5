#!/usr/bin/env bash
# demo.sh is `make demo`: the main job, end to end. It shows the collapse, then
# runs TypeScript programs in the sandbox against the built-in workspace tools
# (on a copy of examples/workspace/sample) and against command tools from a
# tools file (examples/shop). It prints each command as you would type it, and
# then what the model would see.
set -euo pipefail

# PTCX_DEMO_BIN, when set, is the ptcx binary the demo runs instead of
# bin/ptcx (make test-wasmtime runs it with bin/ptcx-wasmtime and
# PTCX_ENGINE=wasmtime: the same output on the other engine).
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
ptcx=${PTCX_DEMO_BIN:-$root/bin/ptcx}
[ -x "$ptcx" ] || { echo "demo: $ptcx is not an executable: build it first (make build)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r examples/workspace/sample "$tmp/sample"
mkdir "$tmp/bin"
ln -s "$(cd "$(dirname "$ptcx")" && pwd)/$(basename "$ptcx")" "$tmp/bin/ptcx"

# show prints a command line; run runs it from a directory where "sample" is
# the workspace copy, so the output never depends on where the demo runs.
show() {
  local line="" a
  for a in "$@"; do
    case "$a" in
      *[!A-Za-z0-9_./:=-]*) line+=" '$a'" ;;
      *) line+=" $a" ;;
    esac
  done
  printf '\n$%s\n' "$line"
}
run() {
  show ptcx "$@"
  local status=0
  (cd "$tmp" && PATH="$tmp/bin:$root/bin:$PATH" ptcx "$@") || status=$?
  [ "$status" -eq 0 ] || printf '(exit status %d)\n' "$status"
}
ln -sf "$root/examples" "$tmp/examples"

echo "== 1. In ptc mode a model sees one tool, run_code, and may call only run_code directly."
run tools --mode ptc --workspace sample
run call --mode ptc --workspace sample write '{"path": "notes.txt", "content": "hi"}'

echo
echo "== 2. A program summarises the workspace: 6 files read in parallel, one compact answer."
run run --workspace sample examples/workspace/summarize.ts

echo
echo "== 3. A program refactors across files (read before edit; edits run one at a time)."
run run --workspace sample examples/workspace/refactor.ts

echo
echo "== 4. Command tools from a tools file: quotes fan out with Promise.all, then one order."
run run --no-builtin --tools examples/shop/tools.json examples/shop/cheapest.ts

echo
scripts/demo-serve.sh | sed '1s/^== serve:/== 5. ptcx serve:/'
