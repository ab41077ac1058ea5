#!/usr/bin/env bash
# check-demo.sh fails when README.md's copy of the `make demo` output differs
# from what scripts/demo.sh prints now: the README must show what users see.
# PTCX_DEMO_BIN and PTCX_ENGINE, when set, reach the demo (make
# test-wasmtime: the same output from the wasmtime build on wasmtime).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

# The README's block is the first ```text fence after the line that
# introduces it.
want=$(awk '/^`make demo` prints/ {found=1} found && /^```text$/ {inside=1; next} inside && /^```$/ {exit} inside {print}' README.md)
got=$(scripts/demo.sh)
if [ -z "$want" ]; then
	echo "check-demo: README.md has no \`make demo\` output block" >&2
	exit 1
fi
if [ "$want" != "$got" ]; then
	echo "check-demo: README.md's demo output differs from what make demo prints:" >&2
	diff <(printf '%s\n' "$want") <(printf '%s\n' "$got") >&2 || true
	exit 1
fi
echo "check-demo: README.md matches make demo${PTCX_DEMO_BIN:+ run by $PTCX_DEMO_BIN}${PTCX_ENGINE:+ with PTCX_ENGINE=$PTCX_ENGINE}"
