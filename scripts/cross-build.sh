#!/usr/bin/env bash
# cross-build.sh builds and vets the module for the systems ptcx must build
# on besides Linux: go build ./... and go vet ./... with GOOS=windows (amd64)
# and GOOS=darwin (arm64). Nothing runs: it catches code that uses an OS's
# API without a build tag. One architecture per OS: the OS is what build tags
# in this module select on, amd64 is checked natively by every other step,
# and a third target cost `make test` about three minutes on a cold cache. Features that need Linux say so
# at run time (internal/proc: "tool process trees are not contained on this
# OS").
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"

status=0
for target in windows/amd64 darwin/arm64; do
	goos=${target%/*} goarch=${target#*/}
	for step in build vet; do
		echo "cross-build: GOOS=$goos GOARCH=$goarch go $step ./..."
		if ! out=$(CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch go "$step" ./... 2>&1); then
			echo "cross-build: GOOS=$goos GOARCH=$goarch go $step ./... failed:" >&2
			printf '%s\n' "$out" >&2
			status=1
		fi
	done
done
if [ "$status" = 0 ]; then
	echo "cross-build: go build and go vet pass for windows/amd64, darwin/arm64"
fi
exit "$status"
