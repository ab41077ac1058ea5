#!/usr/bin/env bash
# install-pyright.sh installs the pinned pyright that the sdkgen tests run on the generated Python SDK
# (sdkgen/pyright_test.go) into .tools/pyright/.
#
# The version is pinned in scripts/pyright/package.json, its integrity hash in
# scripts/pyright/package-lock.json (install_npm_tool, scripts/lib/npm-tool.sh, says how it is
# installed and checked). pyright runs on Node alone, with the typeshed stubs it ships: no Python is
# needed. Tests only look for the installed pyright (and fail, saying to run `make tsc`, when it is
# missing).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/npm-tool.sh"
install_npm_tool pyright pyright 1.1.414 index.js
