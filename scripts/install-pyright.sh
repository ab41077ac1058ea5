#!/usr/bin/env bash
# install-pyright.sh installs the pinned pyright that the sdkgen tests run on the generated Python SDK
# (sdkgen/pyright_test.go) into .tools/pyright/.
#
# The version is pinned in scripts/pyright/package.json; scripts/pyright/package-lock.json carries the
# tarball's integrity hash, which `npm ci` verifies (--ignore-scripts: nothing of the package runs at
# install). pyright runs on Node alone, with the typeshed stubs it ships: no Python is needed. The install
# is skipped when .tools/pyright already holds exactly what the two files describe, so a second run costs a
# few milliseconds. Tests never touch the network: they only look for the installed pyright (and fail,
# saying to run `make tsc`, when it is missing). Node comes from scripts/install-tsc.sh, which runs first.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
src="$root/scripts/pyright"
dst="$root/.tools/pyright"
want_version=1.1.414

stamp_of() { cat "$src/package.json" "$src/package-lock.json" | sha256sum | cut -d' ' -f1; }
installed_version() {
  sed -n 's/^[[:space:]]*"version":[[:space:]]*"\([^"]*\)".*/\1/p' \
    "$dst/node_modules/pyright/package.json" 2>/dev/null | head -1
}

want_stamp=$(stamp_of)
if [ -f "$dst/.stamp" ] && [ "$(cat "$dst/.stamp")" = "$want_stamp" ] &&
  [ -f "$dst/node_modules/pyright/index.js" ] && [ "$(installed_version)" = "$want_version" ]; then
  exit 0
fi

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "install-pyright: node and npm are missing; installing Debian's nodejs and npm" >&2
  if [ "$(id -u)" -ne 0 ]; then sudo=sudo; else sudo=; fi
  $sudo apt-get update -qq
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nodejs npm >/dev/null
fi

echo "install-pyright: installing pyright $want_version into ${dst#"$root"/}" >&2
rm -rf "$dst"
mkdir -p "$dst"
cp "$src/package.json" "$src/package-lock.json" "$dst/"
(cd "$dst" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)

got=$(installed_version)
if [ "$got" != "$want_version" ]; then
  echo "install-pyright: expected pyright $want_version, found '${got}'" >&2
  exit 1
fi
node "$dst/node_modules/pyright/index.js" --version >/dev/null
echo "$want_stamp" >"$dst/.stamp"
