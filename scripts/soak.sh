#!/bin/sh
# soak.sh runs the long tests:
#  - the soak test (tests/hostile/soak_test.go) for a few minutes: good and
#    hostile programs at twice the core count through one executor, then a
#    report of runs/s, peak RSS, goroutines, file descriptors and threads
#    before and after. PTCX_SOAK overrides the duration (a Go duration).
#  - a 100,000-item ptcx batch whose RSS is sampled while it runs and must
#    stay flat (cmd/ptcx/internal/cli/batch_rss_linux_test.go), with its runs/s beside
#    the executor's raw runs/s measured in the same test.
#    PTCX_BATCH_RSS_ITEMS overrides the count; 0 skips it.
#  - two tenants of one ptcx serve (serve/soak_tenants_test.go): tenant a's
#    trivial executions alone, then beside tenant b sending everything its
#    default quotas allow (CPU loops, memory, timers, large results, parked
#    executions, over REST, /v1/calls and /mcp); a's p50/p99/worst in both
#    phases and its failures are reported. PTCX_SOAK_TENANTS sets each
#    phase's length (a Go duration; 0 skips it).
#  - the isolation property test over 10,000 pooled runs
#    (wasmhost/pool_isolation_test.go): programs that try to leave traces
#    in globals, prototypes, the heap and the atom table, and a checker
#    that must find none. PTCX_SOAK_RUNS overrides the count; 0 skips it.
set -eu
cd "$(dirname "$0")/.."
: "${PTCX_SOAK:=3m}"
: "${PTCX_BATCH_RSS_ITEMS:=100000}"
: "${PTCX_SOAK_RUNS:=10000}"
: "${PTCX_SOAK_TENANTS:=1m}"
export PTCX_SOAK PTCX_BATCH_RSS_ITEMS PTCX_SOAK_RUNS PTCX_SOAK_TENANTS
"${GO:-go}" test -count=1 -v -run '^TestSoak$' -timeout 30m ./tests/hostile/
if [ "$PTCX_BATCH_RSS_ITEMS" != 0 ]; then
	"${GO:-go}" test -count=1 -v -run '^TestBatch_flatRSS$' -timeout 40m ./cmd/ptcx/internal/cli/
fi
if [ "$PTCX_SOAK_TENANTS" != 0 ]; then
	PTCX_REQUIRE_GUEST=1 "${GO:-go}" test -count=1 -v -run '^TestSoak_twoTenants$' -timeout 30m ./serve/
fi
if [ "$PTCX_SOAK_RUNS" != 0 ]; then
	PTCX_REQUIRE_GUEST=1 "${GO:-go}" test -count=1 -v -run '^TestRuntime_pool_isolation$' -timeout 40m ./wasmhost/
fi
