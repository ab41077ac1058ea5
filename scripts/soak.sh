#!/bin/sh
# soak.sh runs the soak test (hostile/soak_test.go) for a few minutes: good
# and hostile programs at twice the core count through one executor, then a
# report of runs/s, peak RSS, goroutines, file descriptors and threads
# before and after. PTCX_SOAK overrides the duration (a Go duration).
set -eu
cd "$(dirname "$0")/.."
: "${PTCX_SOAK:=3m}"
export PTCX_SOAK
exec "${GO:-go}" test -count=1 -v -run '^TestSoak$' -timeout 30m ./hostile/
