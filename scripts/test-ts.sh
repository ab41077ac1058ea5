#!/usr/bin/env bash
# test-ts.sh is `make test-ts`: the TypeScript client (clients/typescript) and
# its AI SDK adapter, built and tested against a real ptcx serve.
#
#   1. the package's pinned devDependencies are installed with `npm ci
#      --ignore-scripts` from its package-lock.json (integrity-checked),
#      skipped when node_modules holds exactly what package.json and the lock
#      describe (a stamp of both);
#   2. bin/ptcx is built (go build; the guest is embedded, so `make guest` first);
#   3. its generated types are checked against serve/openapi.yaml (npm run
#      check-gen: `npm run gen` regenerates them);
#   4. it is built (tsc, to dist/) and its tests run (node --test; each test
#      file starts its own ptcx serve on a loopback port the kernel picks).
# The tests touch no network but loopback; only step 1 reaches the npm registry.
#
# `test-ts.sh gen` (make gen-ts) installs as in step 1, then regenerates
# src/openapi.d.ts from serve/openapi.yaml (npm run gen): the one command to
# run after changing the OpenAPI document.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
pkg="$root/clients/typescript"
GO=${GO:-go}

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "test-ts: node and npm are missing; installing Debian's nodejs and npm" >&2
  if [ "$(id -u)" -ne 0 ]; then sudo=sudo; else sudo=; fi
  $sudo apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
fi

major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$major" -lt 18 ]; then
  echo "test-ts: node $(node --version) is too old: the client and the AI SDK need Node 18 or later" >&2
  exit 1
fi

stamp=$(cat "$pkg/package.json" "$pkg/package-lock.json" | sha256sum | cut -d' ' -f1)
if [ ! -f "$pkg/node_modules/.ptcx-stamp" ] || [ "$(cat "$pkg/node_modules/.ptcx-stamp")" != "$stamp" ]; then
  echo "test-ts: npm ci in clients/typescript" >&2
  (cd "$pkg" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
  echo "$stamp" >"$pkg/node_modules/.ptcx-stamp"
fi

cd "$pkg"
if [ "${1:-}" = gen ]; then
  exec npm run --silent gen
fi
(cd "$root" && $GO build -o bin/ptcx ./cmd/ptcx)
npm run --silent check-gen >/dev/null 2>&1 || {
  echo "test-ts: clients/typescript/src/openapi.d.ts does not match serve/openapi.yaml: run \`make gen-ts\` and commit it" >&2
  exit 1
}
npm run --silent build
# node --test runs the files at most (cores - 1) at a time: one at a time on 2 cores.
PTCX_BIN="$root/bin/ptcx" node --test --test-reporter=spec test/*.test.mjs
