#!/usr/bin/env bash
# step.sh N/TOTAL NAME COMMAND... runs one step of `make test` and says what
# it is doing: a line before the step, a line after it with its elapsed time
# (and its exit status when it failed), and, while it runs, a line every
# minute (PTCX_STEP_TICK seconds) that it still does. The longest steps print
# nothing for minutes on their own: go test prints a package's result only
# once all its tests end, and the -race run of wasmhost or serve takes many
# minutes on 2 cores. It exits with the command's status.
set -uo pipefail
if [ $# -lt 3 ]; then
	echo "usage: step.sh N/TOTAL NAME COMMAND..." >&2
	exit 2
fi
step=$1 name=$2
shift 2
tick=${PTCX_STEP_TICK:-60}
case "$tick" in '' | *[!0-9]* | 0)
	echo "step.sh: PTCX_STEP_TICK=$tick: want a whole number of seconds above 0" >&2
	exit 2
	;;
esac
start=$(date +%s)
elapsed() {
	local s=$(($(date +%s) - start))
	printf '%dm%02ds' $((s / 60)) $((s % 60))
}

echo "== make test: $name ($step)"
# The ticker ends with the step (and at most after a day of ticks).
(
	sleeper=""
	trap 'kill $sleeper 2>/dev/null; exit 0' TERM
	for ((i = 0; i < 86400 / tick; i++)); do
		sleep "$tick" >/dev/null 2>&1 &
		sleeper=$!
		wait "$sleeper"
		echo "== make test: $name ($step) still running, $(elapsed)"
	done
) &
ticker=$!
trap 'kill "$ticker" 2>/dev/null' EXIT
"$@"
status=$?
kill "$ticker" 2>/dev/null
wait "$ticker" 2>/dev/null
if [ "$status" -eq 0 ]; then
	echo "== make test: $name ($step) done in $(elapsed)"
else
	echo "== make test: $name ($step) FAILED after $(elapsed) (exit status $status)" >&2
fi
exit "$status"
