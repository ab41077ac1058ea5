#!/usr/bin/env bash
# install-tsc.sh installs the pinned TypeScript compiler that the sdkgen tests run into .tools/tsc/.
#
# The version is pinned in scripts/tsc/package.json, its integrity hash in
# scripts/tsc/package-lock.json (install_npm_tool, scripts/lib/npm-tool.sh, says how it is installed
# and checked). Tests only look for the installed compiler (and fail, saying to run `make tsc`, when it
# is missing).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/npm-tool.sh"
install_npm_tool tsc typescript 5.9.3 bin/tsc
